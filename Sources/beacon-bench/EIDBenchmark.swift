import ArgumentParser
import BeaconMeshFobs
import Foundation

/// `beacon-bench eid`: the coordinator's table of Eddystone-EID ids for a chain's members' fobs: the first fill, a
/// refresh across one rotation (one new window per fob), the lookup of a sighting's id, and the memory it takes.
struct EIDBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eid", abstract: "Eddystone-EID resolution: table fill, refresh per rotation, lookups, memory.")

    @Option(help: "Members with a fob.")
    var fobs: Int = 1_000_000

    @Option(help: "The fobs' rotation exponent K (a new id every 2^K seconds).")
    var rotationExponent: UInt8 = 10

    @Option(help: "Lookups of heard ids to time.")
    var lookups: Int = 1_000_000

    func run() throws {
        guard fobs > 0, lookups > 0, rotationExponent <= 15 else { throw ValidationError("--fobs and --lookups must be positive, K 0-15") }
        let now: Int64 = 1_796_169_600
        var random = SystemRandomNumberGenerator()
        let members = (0..<fobs).map { index -> EIDResolver.Fob in
            let key = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            return .init(
                handle: UInt64(index + 1), eid: EddystoneEID(identityKey: key, rotationExponent: rotationExponent)!,
                offset: now - Int64.random(in: 0...(90 * 86_400), using: &random))
        }
        // The fobs as the registry hands them over are made first: the memory measured is the resolver's own.
        let residentBefore = Measure.residentBytes()
        var resolver = EIDResolver(fobs: members)
        var started = Measure.threadCPUSeconds()
        resolver.refresh(at: now)
        let fill = Measure.threadCPUSeconds() - started
        let resident = Measure.residentBytes() - residentBefore
        let rotation = Int64(1) << Int64(rotationExponent)
        started = Measure.threadCPUSeconds()
        resolver.refresh(at: now + rotation)
        let refresh = Measure.threadCPUSeconds() - started

        // Heard ids: each a fob's id of its current window (computed before the clock starts).
        let heard = (0..<min(lookups, fobs)).map { index in
            members[index].eid.ephemeralID(counter: UInt32(now + rotation - members[index].offset))
        }
        started = Measure.threadCPUSeconds()
        var resolved = 0
        for round in 0..<lookups where resolver.resolve(heard[round % heard.count], at: now + rotation) != nil { resolved += 1 }
        let lookup = Measure.threadCPUSeconds() - started
        guard resolved == lookups else { throw BenchError("only \(resolved) of \(lookups) heard ids resolved") }

        // A member's fob replaced in the registry: the old one's ids out, the new one's in; the others untouched.
        let changes = min(1_000, fobs)
        started = Measure.threadCPUSeconds()
        for index in 0..<changes {
            resolver.remove([members[index].handle])
            resolver.add(members[index], at: now + rotation)
        }
        let change = (Measure.threadCPUSeconds() - started) / Double(changes)
        print("eid benchmark: \(Measure.grouped(Double(fobs))) fobs, K = \(rotationExponent) (a new id every \(rotation) s)")
        print(
            "  table           \(Measure.grouped(Double(resolver.count))) ids; fobs and table \(Measure.megabytes(resident)) resident, \(resident / fobs) bytes a fob"
        )
        print("  first fill      \(String(format: "%.2f", fill)) s of CPU")
        print("  one rotation    \(String(format: "%.2f", refresh)) s of CPU (refresh, one core)")
        print("  lookup          \(String(format: "%.3f", lookup / Double(lookups) * 1e6)) µs of CPU per heard id")
        print("  a fob replaced  \(String(format: "%.1f", change * 1e6)) µs of CPU (its ids out, the new ones in)")
    }
}
