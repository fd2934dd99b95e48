import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import Synchronization
import Testing

@testable import BeaconMeshRegistry

/// A registry whose link to PostgreSQL is cut without a word (a pulled cable: connections are taken and never
/// answered) fails its calls within its timeout, the reconnection's start-up included, instead of hanging until the
/// link comes back — a hung write never tells health that the database is failing.
@Suite("A PostgreSQL registry behind a cut link")
struct PostgresCutLinkTests {
    @Test("after the connection is lost, connecting again through the cut link fails within the timeout, and works once restored")
    func reconnectThroughCutLinkFails() async throws {
        let server = try PostgresServer.shared()
        let url = try server.createDatabase()
        let relay = try TCPRelay(to: server.port)
        defer { relay.stop() }
        let relayed = url.replacingOccurrences(of: "127.0.0.1:\(server.port)", with: "127.0.0.1:\(relay.port)")
        let registry = try RegistryLocation(relayed).open()
        try registry.merge([MemberRecord(profile: MemberProfile(id: "ana", name: "Ana Souza"), beacons: [], createdAt: nil)])

        relay.cut()
        // The first write waits out its 10-s timeout on the live connection, which is then given up.
        let lost = await Self.timed {
            _ = try registry.merge([MemberRecord(profile: MemberProfile(id: "ben", name: "Ben"), beacons: [], createdAt: nil)])
        }
        #expect(lost.failed && lost.seconds < 15, "the write on the cut connection: \(lost)")
        // The next one connects again: the link takes the connection and never answers the start-up.
        let again = await Self.timed {
            _ = try registry.merge([MemberRecord(profile: MemberProfile(id: "cid", name: "Cid"), beacons: [], createdAt: nil)])
        }
        #expect(again.failed && again.seconds < 15, "connecting through the cut link must fail in time, not hang: \(again)")

        relay.restore()
        let restored = await Self.timed {
            _ = try registry.merge([MemberRecord(profile: MemberProfile(id: "dot", name: "Dot"), beacons: [], createdAt: nil)])
        }
        #expect(!restored.failed, "\(restored)")
    }

    /// Runs `body` on a thread of its own and waits at most 30 s: whether it threw, and how long it took (30 if it hung).
    private static func timed(_ body: @escaping @Sendable () throws -> Void) async -> (failed: Bool, seconds: Double) {
        let outcome = Mutex<(failed: Bool, seconds: Double)?>(nil)
        let started = ContinuousClock.now
        let thread = Thread {
            let failed = (try? body()) == nil
            outcome.withLock { $0 = (failed, (ContinuousClock.now - started).inSeconds) }
        }
        thread.start()
        return await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { outcome.withLock { $0 } } ?? (false, 30)
    }
}
