import BeaconMeshCore
import BeaconMeshWire
import Foundation
import Testing

@Suite("Coordinator cache JSON")
struct CoordinatorCacheWireTests {
    static let uuid = BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!

    static func document() -> CoordinatorCacheDocument {
        let fit = SurveyFit(
            store: 1, nodes: [SurveyNode(department: 10, node: "a")], departments: [10, 20], weights: [1.5, -2.25],
            biases: [0.5, -0.125], means: [-3, -7], inverseCovariance: [0.25], fitnessLimit: 12.5,
            fittedAt: Timestamp(milliseconds: 1_763_769_600_000), accuracy: 0.97, samples: 420)
        let ana = MemberProfile(
            id: "ana", name: "Ana \"Nana\" Souza — ☕", favoriteDrink: "Flat white", visits: 11,
            lastVisitAt: Timestamp(milliseconds: 1_763_683_200_000), photo: "data:image/png;base64,iVBORw0KGgo=",
            customFields: ["tier": "gold", "note": "line\nbreak"], checkins: 3)
        let zoe = MemberProfile(id: "zoë/2", name: "Zoë")
        return CoordinatorCacheDocument(
            coordinator: "backoffice-1", database: "postgres://chain@db:5432/chain",
            savedAt: Timestamp(milliseconds: 1_763_769_601_234),
            leases: [
                1: LeaseGrant(since: Timestamp(milliseconds: 1_763_769_000_000), fenced: false),
                3: LeaseGrant(since: Timestamp(milliseconds: 1_763_769_100_000), fenced: true),
            ],
            members: [
                .init(
                    profile: ana,
                    beacons: [.iBeacon(uuid: uuid, major: 1, minor: 1), .iBeacon(uuid: uuid, major: 1, minor: 2)],
                    promoFires: ["shirts": Timestamp(milliseconds: 1_763_769_500_000)]),
                .init(profile: zoe, beacons: [], promoFires: [:]),
            ],
            visits: [
                PresenceEngine.Visit(
                    member: "ana", store: 1, arrivedAt: Timestamp(milliseconds: 1_763_769_400_000), department: 20,
                    inDepartmentSince: Timestamp(milliseconds: 1_763_769_450_000), lastSeen: Timestamp(milliseconds: 1_763_769_600_000),
                    leftAt: nil, proximity: .near),
                PresenceEngine.Visit(
                    member: "zoë/2", store: 1, arrivedAt: Timestamp(milliseconds: 1_763_769_100_000), department: 10,
                    inDepartmentSince: Timestamp(milliseconds: 1_763_769_100_000), lastSeen: Timestamp(milliseconds: 1_763_769_200_000),
                    leftAt: Timestamp(milliseconds: 1_763_769_230_000), proximity: .far),
            ],
            handledCheckins: ["req-1": Timestamp(milliseconds: 1_763_769_300_000)], surveys: [1: fit])
    }

    @Test("a cache reads back as it was written: members with every field, beacons, promo firings, visits, check-ins, fits, leases")
    func roundTrip() throws {
        let document = Self.document()
        let bytes = WireCodec.encode(document)
        #expect(try WireCodec.decodeCoordinatorCache(bytes) == document)
        // It is JSON anyone's tools read.
        _ = try WireCodec.parse(bytes)
    }

    @Test("a damaged cache is an error, not a partial start")
    func damaged() throws {
        let bytes = WireCodec.encode(Self.document())
        #expect(throws: WireError.self) { try WireCodec.decodeCoordinatorCache(Array(bytes.dropLast(10))) }
        let text = String(decoding: bytes, as: UTF8.self)
        let badFit = text.replacingOccurrences(of: #""fit":""#, with: #""fit":"zz"#)
        #expect(throws: WireError.self) { try WireCodec.decodeCoordinatorCache(Array(badFit.utf8)) }
        let noName = text.replacingOccurrences(of: #""name":"Zoë","#, with: "")
        #expect(throws: WireError.self) { try WireCodec.decodeCoordinatorCache(Array(noName.utf8)) }
    }
}
