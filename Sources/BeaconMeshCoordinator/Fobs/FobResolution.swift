import BeaconMeshCore
import BeaconMeshFobs
import BeaconMeshRegistry
import Logging
import Synchronization

/// The members' Eddystone-EID fobs, resolved on the way to the decisions: a sighting of an id a member's fob may
/// advertise now becomes a sighting of the fob's handle (`MemberFob.key`, one of her beacons), so a rotation is no
/// new beacon; an id of no member's fob, or of a window too far from the fob's expected counter (a replayed
/// recording), stays as heard: a guest in occupancy, never a guest visit (it rotates), counted in `unresolved`.
///
/// The decoders resolve (one lookup under a lock, never held across I/O); the registry poll hands it the fobs
/// of members changed, and a task of the coordinator's refreshes the ids ahead of each rotation (`refresh`).
/// Identity keys are opened here with the secrets key and live only inside `EIDResolver`.
public final class FobResolution: Sendable {
    private struct State {
        var resolver: EIDResolver
        /// Sightings of ids that resolved to nobody.
        var unresolved: UInt64 = 0
    }

    /// How often the ids are brought up to date: half the shortest rotation of the fobs (the window just ahead of a
    /// fob's is always in the table, so its next id is known a whole window before it says it), from 1 s to a minute —
    /// a pass over a chain's million fobs every second would cost a core for nothing when they rotate every 17 minutes.
    var refreshInterval: Duration {
        let shortest = state.withLock { $0.resolver.shortestRotation } ?? 120
        return .seconds(min(60, max(1, Int(shortest) / 2)))
    }

    private let secrets: SecretsKey?
    private let state: Mutex<State>
    private let logger: Logger

    /// The resolution of `fobs` (by member), their keys opened with `secrets`, refreshed for `now` (Unix seconds).
    /// Throws when a fob does not open: the secrets key is missing or another one.
    public init(fobs: [String: MemberFob], secrets: SecretsKey?, now: Int64, logger: Logger) throws(SecretsKey.Failure) {
        self.secrets = secrets
        self.logger = logger
        guard fobs.count <= EIDResolver.capacity else {
            throw SecretsKey.Failure(
                description: "the registry holds \(fobs.count) Eddystone-EID fobs: a coordinator resolves \(EIDResolver.capacity) at most")
        }
        // Opened one at a time into the table: a chain's million opened keys are never held side by side.
        var resolver = EIDResolver(capacity: fobs.count)
        for (member, fob) in fobs {
            guard let secrets else {
                throw SecretsKey.Failure(
                    description:
                        "the registry holds \(fobs.count) member(s) with Eddystone-EID fobs: secretsKeyFile is needed to resolve them")
            }
            resolver.add(try fob.opened(for: member, with: secrets), at: now)
        }
        state = Mutex(State(resolver: resolver))
    }

    /// Sightings of ids that resolved to nobody so far.
    var unresolved: UInt64 { state.withLock { $0.unresolved } }

    /// `input` with each Eddystone-EID id of a member's fob replaced by the fob's handle, heard at `now` (Unix seconds).
    func resolve(_ input: CoordinatorInput, at now: Int64) -> CoordinatorInput {
        guard case .sightings(var batch) = input,
            batch.sightings.contains(where: \.beacon.rotates) || batch.lost.contains(where: \.rotates)
        else { return input }
        state.withLock { state in
            for index in batch.sightings.indices {
                guard case .eddystoneEID(let id) = batch.sightings[index].beacon else { continue }
                if let handle = state.resolver.resolve(id, at: now) {
                    batch.sightings[index].beacon = .eddystoneEID(ephemeralID: handle)
                } else {
                    state.unresolved += 1
                }
            }
            for index in batch.lost.indices {
                guard case .eddystoneEID(let id) = batch.lost[index], let handle = state.resolver.resolve(id, at: now) else { continue }
                batch.lost[index] = .eddystoneEID(ephemeralID: handle)
            }
        }
        return .sightings(batch)
    }

    /// A fob's offset is written back to the registry once it has moved this many seconds (a fob's clock drifts 13 s a
    /// day at 150 ppm: a write every few days a fob).
    static let offsetWrittenAfter: Int64 = 60

    /// Brings every fob's ids up to `now` (Unix seconds): the windows that came into range in, those that left out.
    /// Returns the registry changes that keep the offsets of fobs that drifted `offsetWrittenAfter` or more, so that a
    /// restarted coordinator starts each fob from where it was last heard (nothing when none did).
    func refresh(at now: Int64) -> RegistryChanges {
        var changes = RegistryChanges()
        state.withLock { state in
            state.resolver.refresh(at: now)
            for (handle, offset) in state.resolver.takeDrifted(by: Self.offsetWrittenAfter) {
                changes.keepFobOffset(offset, handle: handle)
            }
        }
        return changes
    }

    /// Takes the fobs of members changed in the registry: the fobs `gone` (their handles: members gone, or whose fob
    /// changed) leave the table, the fobs `added` (by member) come in with their ids for `now`; every other fob keeps
    /// its ids and its offset as it followed the fob. A fob that does not open is left out, logged.
    func update(gone: Set<UInt64>, added: [String: MemberFob], at now: Int64) {
        var opened: [EIDResolver.Fob] = []
        for (member, fob) in added.sorted(by: { $0.key < $1.key }) {
            guard let secrets else {
                logger.error("member \(member) has an Eddystone-EID fob, but the config has no secretsKeyFile: not resolved")
                continue
            }
            do {
                opened.append(try fob.opened(for: member, with: secrets))
            } catch {
                logger.error("\(error.description): not resolved")
            }
        }
        let full = state.withLock { state in
            state.resolver.remove(gone)
            return opened.filter { !state.resolver.add($0, at: now) }.count
        }
        if full > 0 {
            logger.error("\(full) Eddystone-EID fob(s) not resolved: a coordinator resolves \(EIDResolver.capacity) at most")
        }
    }

    /// How many fobs it resolves.
    var count: Int { state.withLock { $0.resolver.fobCount } }
}
