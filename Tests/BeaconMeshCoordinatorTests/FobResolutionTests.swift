import BeaconMeshCore
import BeaconMeshFobs
import BeaconMeshRegistry
import Logging
import Testing

@testable import BeaconMeshCoordinator

/// Members' Eddystone-EID ids resolved to their fobs on the way to the decisions.
@Suite("Eddystone-EID fobs resolved before the decisions")
struct FobResolutionTests {
    static let secrets = SecretsKey(bytes: Array(repeating: 3, count: 32))!
    static let identityKey: [UInt8] = Array(0x10...0x1F)
    static let now: Int64 = 1_765_000_000
    static let node = NodeAddress(store: 1, department: 10, node: "a")!

    /// Ana's fob (K = 4: 16-s windows), counting from `fobStart`, sealed; and its ids.
    static func anasFob(fobStart: Int64 = 1_700_000_000) -> (fob: MemberFob, eid: EddystoneEID) {
        let cell = EIDCell("101112131415161718191a1b1c1d1e1f:4", offsetAllowed: false)!
        let fob = MemberFob(sealing: cell, for: "ana", under: secrets, counterNow: UInt32(now - fobStart), now: now)
        return (fob, EddystoneEID(identityKey: identityKey, rotationExponent: 4)!)
    }

    static func batch(_ ids: [UInt64], lost: [UInt64] = []) -> CoordinatorInput {
        .sightings(
            SightingBatch(
                node: node, boot: "b", seq: 1, sentAt: Timestamp(milliseconds: now * 1000),
                sightings: ids.map {
                    Sighting(
                        beacon: .eddystoneEID(ephemeralID: $0), rssi: -60, count: 1, txPower: nil, distance: nil, proximity: .near,
                        lastSeen: Timestamp(milliseconds: now * 1000))
                }, lost: lost.map { .eddystoneEID(ephemeralID: $0) }))
    }

    static func beacons(_ input: CoordinatorInput) -> [BeaconKey] {
        guard case .sightings(let batch) = input else { return [] }
        return batch.sightings.map(\.beacon) + batch.lost
    }

    @Test("her id now becomes her fob's handle, and so does the next window's; a stranger's id stays as heard, counted")
    func resolvesToTheHandle() throws {
        let (fob, eid) = Self.anasFob()
        let resolution = try FobResolution(fobs: ["ana": fob], secrets: Self.secrets, now: Self.now, logger: Logger(label: "test"))
        let counter = UInt32(Self.now - fob.offset)
        let stranger: UInt64 = 0x1234_5678_9ABC_DEF0
        let resolved = resolution.resolve(Self.batch([eid.ephemeralID(counter: counter), stranger]), at: Self.now)
        #expect(Self.beacons(resolved) == [fob.key, .eddystoneEID(ephemeralID: stranger)])
        #expect(resolution.unresolved == 1)
        let later = resolution.resolve(Self.batch([], lost: [eid.ephemeralID(counter: counter + 16)]), at: Self.now + 16)
        #expect(Self.beacons(later) == [fob.key], "a lost id of hers is her fob's too")
    }

    @Test("a fob 60 s fast or 60 s slow resolves; its ids of two hours ago (a replayed recording) resolve to nobody")
    func driftAndReplay() throws {
        let (fob, eid) = Self.anasFob()
        let resolution = try FobResolution(fobs: ["ana": fob], secrets: Self.secrets, now: Self.now, logger: Logger(label: "test"))
        let counter = Self.now - fob.offset
        for skew: Int64 in [60, -60] {
            let heard = resolution.resolve(Self.batch([eid.ephemeralID(counter: UInt32(counter + skew))]), at: Self.now)
            #expect(Self.beacons(heard) == [fob.key], "\(skew) s")
        }
        let replayed = resolution.resolve(Self.batch([eid.ephemeralID(counter: UInt32(counter - 7200))]), at: Self.now)
        #expect(Self.beacons(replayed) == [.eddystoneEID(ephemeralID: eid.ephemeralID(counter: UInt32(counter - 7200)))])
        #expect(resolution.unresolved == 1)
    }

    @Test("without the secrets key, or with another, the fobs do not open: the coordinator must not start")
    func wrongKeys() {
        let (fob, _) = Self.anasFob()
        #expect(throws: SecretsKey.Failure.self) {
            try FobResolution(fobs: ["ana": fob], secrets: nil, now: Self.now, logger: Logger(label: "test"))
        }
        #expect(throws: SecretsKey.Failure.self) {
            try FobResolution(
                fobs: ["ana": fob], secrets: SecretsKey(bytes: Array(repeating: 4, count: 32)), now: Self.now, logger: Logger(label: "test")
            )
        }
    }

    @Test("a fob added, replaced or gone in the registry is resolved as it now is; others keep resolving")
    func updates() throws {
        let (fob, eid) = Self.anasFob()
        let resolution = try FobResolution(fobs: [:], secrets: Self.secrets, now: Self.now, logger: Logger(label: "test"))
        let id = eid.ephemeralID(counter: UInt32(Self.now - fob.offset))
        #expect(Self.beacons(resolution.resolve(Self.batch([id]), at: Self.now)) == [.eddystoneEID(ephemeralID: id)])
        #expect(resolution.refreshInterval == .seconds(60), "no fob: once a minute")
        resolution.update(gone: [], added: ["ana": fob], at: Self.now)
        #expect(resolution.count == 1)
        #expect(resolution.refreshInterval == .seconds(8), "half her 16-s window")
        #expect(Self.beacons(resolution.resolve(Self.batch([id]), at: Self.now)) == [fob.key])
        // Her fob replaced (a new key, so a new handle): the old one's ids resolve to nobody, the new one's to it.
        let cell = EIDCell("202122232425262728292a2b2c2d2e2f:4", offsetAllowed: false)!
        let replacement = MemberFob(sealing: cell, for: "ana", under: Self.secrets, counterNow: 5_000, now: Self.now)
        let newID = EddystoneEID(identityKey: Array(0x20...0x2F), rotationExponent: 4)!.ephemeralID(counter: 5_000)
        resolution.update(gone: [fob.handle], added: ["ana": replacement], at: Self.now)
        #expect(resolution.count == 1)
        #expect(
            Self.beacons(resolution.resolve(Self.batch([id, newID]), at: Self.now)) == [.eddystoneEID(ephemeralID: id), replacement.key])
        resolution.update(gone: [replacement.handle], added: [:], at: Self.now)
        #expect(resolution.count == 0)
        #expect(Self.beacons(resolution.resolve(Self.batch([newID]), at: Self.now)) == [.eddystoneEID(ephemeralID: newID)])
    }
}
