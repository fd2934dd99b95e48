import BeaconMeshCore
import Testing

@testable import BeaconMeshWire

private let uuid = BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!
private let node = NodeAddress(store: 65535, department: 0, node: "node-7")!
/// Text a store's IT person could type into a name: quotes, backslashes, control characters, non-ASCII.
private let awkward = "Zoë \"李\" \\ back\\slash\n\ttab \u{01}\u{1F} ☕️ </b>"
private let member = MemberProfile(
    id: "m-\"1\"", name: awkward, favoriteDrink: nil, visits: Int(Int32.max), lastVisitAt: Timestamp(milliseconds: .max),
    photo: "data:image/png;base64,AAAA/+==", customFields: ["tier": "gold", "nöte\"\\": awkward, "zz": ""], checkins: 0)
private let promo = Promo(id: "latte", title: "Free \"Latte\"!", message: awkward)

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// Every payload `WireCodec` writes is read back by json-c into the same value, whatever text and numbers it holds.
@Suite("Wire payload round trips")
struct WirePayloadRoundTripTests {
    @Test("a sighting batch with every beacon kind, extreme numbers and every optional field")
    func sightingBatch() throws {
        let kinds: [BeaconKey] = [
            .iBeacon(uuid: uuid, major: 0, minor: 65535), .altBeacon(id1: BeaconUUID(high: .max, low: 0), id2: 65535, id3: 0),
            .eddystone(namespaceHigh: .max, namespaceLow: 0, instance: 0xFFFF_FFFF_FFFF),
        ]
        let sightings = kinds.enumerated().map { index, key in
            Sighting(
                beacon: key, rssi: index == 0 ? -127 : -63.25, count: Int(Int64.max), txPower: index == 1 ? nil : -127,
                distance: index == 2 ? nil : 99_999.875, proximity: [.immediate, .far, .unknown][index],
                lastSeen: Timestamp(milliseconds: index == 0 ? .min : .max), address: BluetoothAddress(value: 0xFFFF_FFFF_FFFF),
                rssiMax: 20, firstSeen: Timestamp(milliseconds: -1), battery: 0, temperature: -40.0625)
        }
        let batch = SightingBatch(
            node: node, boot: awkward, seq: UInt64(Int64.max), sentAt: Timestamp(milliseconds: 0),
            sightings: sightings, lost: kinds)
        let encoded = WireCodec.encode(batch)
        #expect(try WireCodec.decodeSightingBatch(encoded) == batch)
        #expect(try WireCodec.parse(encoded)["sightings"] != nil, "json-c reads the whole document")
    }

    @Test("an empty sighting batch keeps its empty array and leaves out lost")
    func emptyBatch() throws {
        let batch = SightingBatch(node: node, boot: "b", seq: 1, sentAt: Timestamp(milliseconds: 5), sightings: [])
        let encoded = WireCodec.encode(batch)
        #expect(text(encoded) == #"{"v":1,"store":65535,"department":0,"node":"node-7","boot":"b","seq":1,"sentAt":5,"sightings":[]}"#)
        #expect(try WireCodec.decodeSightingBatch(encoded) == batch)
    }

    @Test("the sighting batch is spelled field by field as the contract shows it")
    func sightingBatchSpelling() {
        let batch = SightingBatch(
            node: NodeAddress(store: 1, department: 10, node: "a")!, boot: "7f3c9a1e", seq: 42,
            sentAt: Timestamp(milliseconds: 1_763_769_600_500),
            sightings: [
                Sighting(
                    beacon: .iBeacon(uuid: uuid, major: 9, minor: 6), rssi: -63.5, count: 7, txPower: -59, distance: 1.8,
                    proximity: .near, lastSeen: Timestamp(milliseconds: 1_763_769_600_431))
            ],
            lost: [.iBeacon(uuid: uuid, major: 9, minor: 7)])
        #expect(
            text(WireCodec.encode(batch))
                == #"{"v":1,"store":1,"department":10,"node":"a","boot":"7f3c9a1e","seq":42,"sentAt":1763769600500,"#
                + #""sightings":[{"beacon":"ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:9:6","rssi":-63.5,"count":7,"txPower":-59,"distance":1.8,"#
                + #""proximity":"near","lastSeen":1763769600431}],"lost":["ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:9:7"]}"#)
    }

    @Test("every event type, with awkward member text and custom fields")
    func events() throws {
        let kinds: [StoreEvent.Kind] = [
            .arrived(
                member: member, department: 65535, departmentName: awkward,
                visit: VisitNumber(number: 1, previousAt: Timestamp(milliseconds: -5)),
                greeting: awkward, evidence: DecisionEvidence(confidence: 0, reason: awkward)),
            .arrived(
                member: member, department: 1, departmentName: "D", visit: VisitNumber(number: 2, previousAt: nil), greeting: "",
                evidence: nil),
            .moved(
                member: member, from: 0, to: 65535, fromName: "", toName: awkward,
                evidence: DecisionEvidence(confidence: 0.123456789, reason: "")),
            .moved(member: member, from: 0, to: 1, fromName: "", toName: "", evidence: nil),
            .left(member: member, department: 2, dwellSeconds: Int(Int64.max)),
            .promo(member: member, department: 2, departmentName: "Housewares", promo: promo),
            .node(department: 3, node: "z9", state: .online),
            .checkin(member: member, department: 4, departmentName: "Till", request: awkward, checkins: 3, verified: true),
            .checkin(member: member, department: 4, departmentName: "Till", request: "r", checkins: 0, verified: false),
            .checkinRefused(request: awkward, member: "m-9", department: 4, reason: .notNearTill),
        ]
        for kind in kinds {
            let event = StoreEvent(id: awkward, store: 65535, at: Timestamp(milliseconds: .min), kind: kind)
            #expect(try WireCodec.decodeEvent(WireCodec.encode(event)) == event, "\(event.type)")
        }
    }

    @Test("a member is written the same way in an event and in the presence snapshot")
    func oneMemberSpelling() throws {
        let event = StoreEvent(
            id: "e", store: 1, at: Timestamp(milliseconds: 1),
            kind: .left(member: member, department: 2, dwellSeconds: 3))
        let snapshot = PresenceSnapshot(
            store: 1, name: "S", updatedAt: Timestamp(milliseconds: 1),
            members: [
                .init(
                    member: member, department: 2, departmentName: "D", proximity: .far, arrivedAt: Timestamp(milliseconds: 1),
                    inDepartmentSince: Timestamp(milliseconds: 1), lastSeen: Timestamp(milliseconds: 1))
            ],
            occupancy: [:], nodes: [])
        let inEvent = try WireCodec.parse(WireCodec.encode(event))["member"]
        let inSnapshot = try WireCodec.parse(WireCodec.encode(snapshot))["members"].flatMap { members -> JSONValue? in
            guard case .array(let list) = members else { return nil }
            return list.first?["member"]
        }
        #expect(inEvent != nil && inEvent == inSnapshot)
        guard case .object(let fields)? = inEvent else {
            Issue.record("no member object")
            return
        }
        #expect(fields.map(\.0) == ["id", "name", "favoriteDrink", "visits", "lastVisitAt", "checkins", "photo", "nöte\"\\", "tier", "zz"])
    }

    @Test("the presence snapshot with awkward names, many members and every occupancy")
    func presence() throws {
        let present = (0..<50).map { index in
            PresenceSnapshot.PresentMember(
                member: member, department: UInt16(index), departmentName: awkward, proximity: .immediate,
                arrivedAt: Timestamp(milliseconds: .min), inDepartmentSince: Timestamp(milliseconds: 0),
                lastSeen: Timestamp(milliseconds: .max))
        }
        let snapshot = PresenceSnapshot(
            store: 7, name: awkward, updatedAt: Timestamp(milliseconds: 9), members: present,
            occupancy: [0: .init(members: 0, guests: Int(Int32.max), name: awkward), 65535: .init(members: 1, guests: 0)],
            nodes: [.init(department: 0, node: "a", state: .offline), .init(department: 65535, node: "b", state: .online)])
        #expect(try WireCodec.decodePresenceSnapshot(WireCodec.encode(snapshot)) == snapshot)
    }

    @Test("offers, ranging reports, check-in requests and registry events")
    func loyalty() throws {
        var offer = Offer(id: awkward, member: "m-1", store: 65535, department: 0, promo: promo, at: Timestamp(milliseconds: .max))
        #expect(try WireCodec.decodeOffer(WireCodec.encode(offer)) == offer)
        offer.departmentName = awkward
        #expect(try WireCodec.decodeOffer(WireCodec.encode(offer)) == offer)

        let report = RangingReport(
            member: awkward, session: "s-\"1\"", seq: UInt64(Int64.max), sentAt: Timestamp(milliseconds: -1),
            beacons: [
                .init(department: 65535, proximity: .immediate, rssi: -127, accuracy: 0),
                .init(department: 0, proximity: .unknown, rssi: nil, accuracy: nil),
                .init(department: 3, proximity: .far, rssi: 19.75, accuracy: 12_345.678),
            ])
        #expect(try WireCodec.decodeRangingReport(WireCodec.encode(report)) == report)

        let request = CheckinRequest(id: awkward, member: "m", department: 65535, till: awkward, at: Timestamp(milliseconds: .min))
        #expect(try WireCodec.decodeCheckinRequest(WireCodec.encode(request)) == request)

        for kind in RegistryEvent.Kind.allCases {
            let event = RegistryEvent(id: awkward, kind: kind, member: awkward, at: Timestamp(milliseconds: 1))
            #expect(try WireCodec.decodeRegistryEvent(WireCodec.encode(event)) == event)
        }
    }

    @Test("node and coordinator status and health, with nodes, drop reasons and a failing database")
    func statusAndHealth() throws {
        let status = NodeStatus(
            state: .offline, version: awkward, boot: awkward, source: "btsnoop:/tmp/a \"b\".log",
            startedAt: Timestamp(milliseconds: .max))
        #expect(try WireCodec.decodeNodeStatus(WireCodec.encode(status)) == status)
        let health = NodeHealth(
            uptimeSeconds: .max, adverts: UInt64(Int64.max), advertsPerSecond: 123_456.7, beacons: 0,
            batches: 1, dropped: 0, queued: Int(Int32.max), rssBytes: 20_000_000)
        #expect(try WireCodec.decodeNodeHealth(WireCodec.encode(health)) == health)
        let coordinator = CoordinatorStatus(state: .online, stores: [0, 1, 65535], startedAt: Timestamp(milliseconds: -1))
        #expect(try WireCodec.decodeCoordinatorStatus(WireCodec.encode(coordinator)) == coordinator)
        let coordinatorHealth = CoordinatorHealth(
            uptimeSeconds: 1, batches: 2, sightings: 3, events: 4,
            dropped: ["invalid-json": 1, "wrong-type": UInt64(Int64.max), "a\"b": 0],
            gaps: 5, duplicates: 6, tracked: 7, rssBytes: 8,
            nodes: [
                .init(address: node, state: .online, clockSkew: .min),
                .init(
                    address: NodeAddress(store: 1, department: 2, node: "b")!,
                    state: .offline, clockSkew: 250),
            ],
            database: .init(failing: true, queued: 12, error: awkward, since: Timestamp(milliseconds: 77), surveySamplesDropped: 800),
            rangingReports: 9)
        #expect(try WireCodec.decodeCoordinatorHealth(WireCodec.encode(coordinatorHealth)) == coordinatorHealth)
        var surveyed = coordinatorHealth
        surveyed.surveys = [
            SurveyStatus(
                store: 1, fittedAt: Timestamp(milliseconds: 5), accuracy: 0.97, checks: 40, share: 0.95, stale: false,
                drift: [.init(node: "a", department: 10, db: -9.5), .init(node: "b", department: 20, db: 6)]),
            SurveyStatus(store: 2, fittedAt: Timestamp(milliseconds: 6), accuracy: 0.9, checks: 0, share: 1, stale: true),
        ]
        #expect(try WireCodec.decodeCoordinatorHealth(WireCodec.encode(surveyed)) == surveyed)
        #expect(text(WireCodec.encode(surveyed)).contains(#""drift":[{"node":"a","department":10,"db":-9.5},"#))
        var differing = coordinatorHealth
        differing.webhookListsDiffer = [.init(coordinator: "south", endpoints: ["crm", "erp"]), .init(coordinator: "west", endpoints: [])]
        #expect(try WireCodec.decodeCoordinatorHealth(WireCodec.encode(differing)) == differing)
        #expect(
            text(WireCodec.encode(differing)).hasSuffix(
                #""webhookListsDiffer":[{"coordinator":"south","endpoints":["crm","erp"]},{"coordinator":"west","endpoints":[]}]}"#))
        var resolving = coordinatorHealth
        resolving.fobs = .init(count: 1_000_000, unresolved: 42)
        #expect(try WireCodec.decodeCoordinatorHealth(WireCodec.encode(resolving)) == resolving)
        #expect(text(WireCodec.encode(resolving)).contains(#""fobs":{"count":1000000,"unresolved":42}"#))
        let healthy = CoordinatorHealth(
            uptimeSeconds: 1, batches: 0, sightings: 0, events: 0, dropped: [:], gaps: 0, duplicates: 0,
            tracked: 0, rssBytes: 0)
        #expect(try WireCodec.decodeCoordinatorHealth(WireCodec.encode(healthy)) == healthy)
        #expect(text(WireCodec.encode(healthy)).contains(#""dropped":{},"#))
        #expect(
            text(WireCodec.encode(healthy)).hasSuffix(
                #""nodes":[],"database":{"state":"ok","queued":0,"error":null,"since":null,"surveySamplesDropped":0},"leases":[]}"#))
    }
}
