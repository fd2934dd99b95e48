import BeaconMeshCore
import Testing

@testable import BeaconMeshWire

private let uuid = BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!
private let node = NodeAddress(store: 1, department: 10, node: "a")!

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

@Suite("Wire codec")
struct WireCodecTests {
    @Test("the contract's sighting batch example decodes field by field")
    func contractExampleBatch() throws {
        let example = """
            {"v":1,"store":1,"department":10,"node":"a","boot":"7f3c9a1e","seq":42,"sentAt":1763769600500,
             "sightings":[{"beacon":"ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:9:6","rssi":-63.5,"count":7,
                           "txPower":-59,"distance":1.8,"proximity":"near","lastSeen":1763769600431}],
             "lost":["ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:9:7"]}
            """
        let batch = try WireCodec.decodeSightingBatch(bytes(example))
        #expect(batch.node == node)
        #expect(batch.boot == "7f3c9a1e")
        #expect(batch.seq == 42)
        #expect(batch.sentAt.milliseconds == 1_763_769_600_500)
        #expect(batch.sightings.count == 1)
        let sighting = try #require(batch.sightings.first)
        #expect(sighting.beacon == .iBeacon(uuid: uuid, major: 9, minor: 6))
        #expect(sighting.rssi == -63.5)
        #expect(sighting.count == 7)
        #expect(sighting.txPower == -59)
        #expect(sighting.distance == 1.8)
        #expect(sighting.proximity == .near)
        #expect(sighting.lastSeen.milliseconds == 1_763_769_600_431)
        #expect(batch.lost == [.iBeacon(uuid: uuid, major: 9, minor: 7)])
    }

    @Test("a sighting batch survives a round trip, optional fields included")
    func batchRoundTrip() throws {
        let batch = SightingBatch(
            node: node, boot: "b00t", seq: 3, sentAt: Timestamp(milliseconds: 1_000),
            sightings: [
                Sighting(
                    beacon: .iBeacon(uuid: uuid, major: 1, minor: 2), rssi: -70.5, count: 3, txPower: nil, distance: nil,
                    proximity: .unknown, lastSeen: Timestamp(milliseconds: 990), address: BluetoothAddress("C4:7C:8D:6A:3E:21"),
                    rssiMax: -66, firstSeen: Timestamp(milliseconds: 10), battery: 3000, temperature: 21.5),
                Sighting(
                    beacon: .eddystone(namespaceHigh: 0x0102_0304_0506_0708, namespaceLow: 0x090A, instance: 0x0B0C_0D0E_0F10),
                    rssi: -60, count: 1, txPower: -59, distance: 1, proximity: .near, lastSeen: Timestamp(milliseconds: 999)),
            ],
            lost: [.altBeacon(id1: uuid, id2: 5, id3: 6)])
        let encoded = WireCodec.encode(batch)
        #expect(try WireCodec.decodeSightingBatch(encoded) == batch)
        #expect(text(encoded).hasPrefix(#"{"v":1,"store":1,"department":10,"node":"a","boot":"b00t","seq":3,"sentAt":1000,"#))
        #expect(text(encoded).contains(#""txPower":null,"distance":null,"proximity":"unknown""#))
    }

    @Test("node status, health and coordinator payloads round-trip")
    func statusRoundTrip() throws {
        let status = NodeStatus(state: .online, version: "1.0.0", boot: "abc", source: "hci0", startedAt: Timestamp(milliseconds: 5))
        #expect(try WireCodec.decodeNodeStatus(WireCodec.encode(status)) == status)
        let health = NodeHealth(
            uptimeSeconds: 60, adverts: 1000, advertsPerSecond: 16.7, beacons: 4, batches: 120,
            dropped: 2, queued: 0, rssBytes: 4_000_000)
        #expect(try WireCodec.decodeNodeHealth(WireCodec.encode(health)) == health)
        let coordinator = CoordinatorStatus(state: .offline, stores: [1, 9], startedAt: Timestamp(milliseconds: 7))
        #expect(try WireCodec.decodeCoordinatorStatus(WireCodec.encode(coordinator)) == coordinator)
        let standby = CoordinatorStatus(state: .online, stores: [1, 9], active: [9], startedAt: Timestamp(milliseconds: 7))
        #expect(try WireCodec.decodeCoordinatorStatus(WireCodec.encode(standby)) == standby)
        #expect(String(decoding: WireCodec.encode(standby), as: UTF8.self).contains(#""stores":[1,9],"active":[9]"#))
        // A coordinator from before leases says no `active`: it decides for every store it lists.
        let old = Array(#"{"v":1,"state":"online","stores":[2],"startedAt":7}"#.utf8)
        #expect(try WireCodec.decodeCoordinatorStatus(old).active == [2])
        let coordinatorHealth = CoordinatorHealth(
            uptimeSeconds: 1, batches: 2, sightings: 3, events: 4,
            dropped: ["invalid-json": 1], gaps: 5, duplicates: 6, tracked: 7, rssBytes: 8,
            rangingReports: 9, leases: [.init(store: 9, since: Timestamp(milliseconds: 1000), heldSeconds: 42)])
        #expect(
            String(decoding: WireCodec.encode(coordinatorHealth), as: UTF8.self).contains(
                #""leases":[{"store":9,"since":1000,"heldSeconds":42}]"#))
        #expect(try WireCodec.decodeCoordinatorHealth(WireCodec.encode(coordinatorHealth)) == coordinatorHealth)
        #expect(String(decoding: WireCodec.encode(coordinatorHealth), as: UTF8.self).contains(#""rangingReports":9"#))
        let older =
            #"{"v":1,"uptime":1,"batches":2,"sightings":3,"events":4,"dropped":{},"gaps":0,"duplicates":0,"tracked":0,"rssBytes":0}"#
        #expect(try WireCodec.decodeCoordinatorHealth(Array(older.utf8)).rangingReports == 0, "a report without the field reads as 0")
    }

    @Test("every event type round-trips, with Unicode names intact")
    func eventRoundTrip() throws {
        let member = MemberProfile(
            id: "m-1", name: "Zoë 李", favoriteDrink: "Flat white", visits: 12,
            lastVisitAt: Timestamp(milliseconds: 77), photo: "data:image/png;base64,AAAA",
            customFields: ["tier": "gold"])
        let promo = Promo(id: "latte", title: "Free Latte!", message: "Come on down for a hot deal!")
        let kinds: [StoreEvent.Kind] = [
            .arrived(
                member: member, department: 10, departmentName: "Clothing",
                visit: VisitNumber(number: 12, previousAt: nil), greeting: "Welcome back, Zoë 李!",
                evidence: DecisionEvidence(
                    confidence: 0.92, reason: "node a hears -61.0 dBm, 8.5 dB above department 20 (node b), for 3.0 s")),
            .moved(
                member: member, from: 10, to: 20, fromName: "Clothing", toName: "Housewares",
                evidence: DecisionEvidence(confidence: 1, reason: "Zoë's phone ranges Housewares 12.0 dB above Clothing for 1.0 s")),
            .left(member: member, department: 20, dwellSeconds: 95),
            .promo(member: member, department: 20, departmentName: "Housewares", promo: promo),
            .node(department: 10, node: "a", state: .offline),
        ]
        for kind in kinds {
            let event = StoreEvent(id: "e1", store: 1, at: Timestamp(milliseconds: 1_763_769_600_000), kind: kind)
            #expect(try WireCodec.decodeEvent(WireCodec.encode(event)) == event)
        }
        let offer = Offer(id: "o1", member: "m-1", store: 9, department: 6, promo: promo, at: Timestamp(milliseconds: 3))
        #expect(try WireCodec.decodeOffer(WireCodec.encode(offer)) == offer)
        #expect(!String(decoding: WireCodec.encode(offer), as: UTF8.self).contains("departmentName"), "no name, no field")
        var named = offer
        named.departmentName = "Counter"
        #expect(String(decoding: WireCodec.encode(named), as: UTF8.self).contains(#""departmentName":"Counter""#))
        #expect(try WireCodec.decodeOffer(WireCodec.encode(named)) == named)
    }

    @Test("the presence snapshot round-trips and spells occupancy keys as strings")
    func presenceRoundTrip() throws {
        let member = MemberProfile(id: "m-2", name: "José", favoriteDrink: nil)
        let snapshot = PresenceSnapshot(
            store: 1, name: "San Francisco", updatedAt: Timestamp(milliseconds: 9),
            members: [
                .init(
                    member: member, department: 20, departmentName: "Housewares", proximity: .near,
                    arrivedAt: Timestamp(milliseconds: 1), inDepartmentSince: Timestamp(milliseconds: 2),
                    lastSeen: Timestamp(milliseconds: 8))
            ],
            occupancy: [10: .init(members: 0, guests: 3), 20: .init(members: 1, guests: 0)],
            nodes: [.init(department: 10, node: "a", state: .online)])
        let encoded = WireCodec.encode(snapshot)
        #expect(try WireCodec.decodePresenceSnapshot(encoded) == snapshot)
        #expect(text(encoded).contains(#""occupancy":{"10":{"members":0,"guests":3},"20":{"members":1,"guests":0}}"#))
    }

    @Test(
        "malformed payloads give an error value naming the reason",
        arguments: [
            ("not json at all", "invalid-json"),
            ("{\"v\":1,", "invalid-json"),
            ("{\"v\":1} trailing", "invalid-json"),
            ("", "invalid-json"),
            ("[1,2,3]", "wrong-type"),
            ("{\"store\":1}", "unknown-version"),
            ("{\"v\":2,\"store\":1}", "unknown-version"),
            ("{\"v\":\"1\"}", "unknown-version"),
            (
                "{\"v\":1,\"store\":\"one\",\"department\":10,\"node\":\"a\",\"boot\":\"b\",\"seq\":1,\"sentAt\":1,\"sightings\":[]}",
                "wrong-type"
            ),
            (
                "{\"v\":1,\"store\":70000,\"department\":10,\"node\":\"a\",\"boot\":\"b\",\"seq\":1,\"sentAt\":1,\"sightings\":[]}",
                "absurd-value"
            ),
            (
                "{\"v\":1,\"store\":1,\"department\":10,\"node\":\"A B\",\"boot\":\"b\",\"seq\":1,\"sentAt\":1,\"sightings\":[]}",
                "absurd-value"
            ),
            (
                "{\"v\":1,\"store\":1,\"department\":10,\"node\":\"a\",\"boot\":\"b\",\"seq\":1,\"sentAt\":1,\"sightings\":[{\"beacon\":\"ibeacon:x:1:2\",\"rssi\":-60,\"count\":1,\"txPower\":null,\"distance\":null,\"proximity\":\"near\",\"lastSeen\":1}]}",
                "absurd-value"
            ),
            (
                "{\"v\":1,\"store\":1,\"department\":10,\"node\":\"a\",\"boot\":\"b\",\"seq\":1,\"sentAt\":1,\"sightings\":[{\"beacon\":\"ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:2\",\"rssi\":40,\"count\":1,\"txPower\":null,\"distance\":null,\"proximity\":\"near\",\"lastSeen\":1}]}",
                "absurd-value"
            ),
            (
                "{\"v\":1,\"store\":1,\"department\":10,\"node\":\"a\",\"boot\":\"b\",\"seq\":1,\"sentAt\":1,\"sightings\":[{\"beacon\":\"ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:2\",\"rssi\":-60,\"count\":1,\"txPower\":null,\"distance\":null,\"proximity\":\"close\",\"lastSeen\":1}]}",
                "wrong-type"
            ),
            ("{\"v\":1,\"store\":1,\"department\":10,\"node\":\"a\",\"boot\":\"b\",\"seq\":1,\"sentAt\":1}", "wrong-type"),
        ])
    func malformedBatches(payload: String, reason: String) {
        #expect {
            _ = try WireCodec.decodeSightingBatch(bytes(payload))
        } throws: { error in
            (error as? WireError)?.reason == reason
        }
    }

    /// The decoder reads `proximity` from json-c's bytes without making a `String`.
    @Test(
        "proximity reads exactly its four spellings from bytes",
        arguments: [
            ("immediate", Proximity.immediate), ("near", .near), ("far", .far), ("unknown", .unknown), ("Near", nil),
            ("nea", nil), ("nearer", nil), ("", nil), ("faraway", nil), ("immediatE", nil),
        ] as [(String, Proximity?)])
    func proximityFromBytes(text: String, expected: Proximity?) {
        let spelled = Array(text.utf8)
        #expect(spelled.withUnsafeBufferPointer { Proximity(utf8: $0) } == expected)
        let beacon = "ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:2"
        let sighting = #"{"beacon":"\#(beacon)","rssi":-60,"count":1,"proximity":"\#(text)","lastSeen":1}"#
        let batch = #"{"v":1,"store":1,"department":10,"node":"a","boot":"b","seq":1,"sentAt":1,"sightings":[\#(sighting)]}"#
        #expect((try? WireCodec.decodeSightingBatch(bytes(batch)))?.sightings.first?.proximity == expected)
    }

    @Test(
        "errors name the field exactly, down to the element of the sightings array",
        arguments: [
            (#"{"v":1,"store":1,"department":10,"node":"a","boot":"b","seq":1,"sentAt":1,"sightings":[]}"#, nil),
            (#"{"v":1,"store":"1","department":10,"node":"a","boot":"b","seq":1,"sentAt":1,"sightings":[]}"#, "store"),
            (#"{"v":1,"store":1,"department":10,"node":"a","boot":"b","seq":1,"sentAt":1,"sightings":{}}"#, "sightings"),
            (
                #"{"v":1,"store":1,"department":10,"node":"a","boot":"b","seq":1,"sentAt":1,"sightings":[{"beacon":"ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:2","rssi":-60,"count":1,"proximity":"near","lastSeen":1},7]}"#,
                "sightings[1]"
            ),
            (
                #"{"v":1,"store":1,"department":10,"node":"a","boot":"b","seq":1,"sentAt":1,"sightings":[{"beacon":"ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:2","rssi":-60,"count":1,"proximity":"near","lastSeen":1},{"beacon":"ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:3","rssi":"loud","count":1,"proximity":"near","lastSeen":1}]}"#,
                "sightings[1].rssi"
            ),
            (
                #"{"v":1,"store":1,"department":10,"node":"a","boot":"b","seq":1,"sentAt":1,"sightings":[{"beacon":"ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:2","rssi":-60,"count":1,"proximity":"near","lastSeen":1,"txPower":99}]}"#,
                "sightings[0].txPower"
            ),
            (#"{"v":1,"store":1,"department":10,"node":"a","boot":"b","seq":1,"sentAt":1,"sightings":[],"lost":["nonsense"]}"#, "lost"),
        ] as [(String, String?)])
    func errorFields(payload: String, field: String?) {
        do {
            _ = try WireCodec.decodeSightingBatch(bytes(payload))
            #expect(field == nil)
        } catch {
            switch error {
            case .wrongType(let named, _), .absurdValue(let named, _): #expect(named == field)
            default: Issue.record("unexpected \(error)")
            }
        }
    }

    @Test("a payload larger than the limit is refused before parsing")
    func tooLarge() {
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: 10 * 1024 * 1024)
        #expect(throws: WireError.tooLarge(bytes: huge.count)) { try WireCodec.decodeSightingBatch(huge) }
    }

    @Test("absurdly deep nesting is refused, not a crash")
    func deepNesting() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: WireError.self) { try WireCodec.parse(bytes(deep)) }
    }

    @Test("bytes that are not UTF-8 are replaced (each by U+FFFD) and the rest of the object kept, never a crash")
    func invalidUTF8() throws {
        let payload: [UInt8] = Array(#"{"v":1,"name":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)
        guard case .object(let members) = try WireCodec.parse(payload) else {
            Issue.record("not an object")
            return
        }
        #expect(members.first { $0.0 == "v" }?.1 == .int(1))
        #expect(members.first { $0.0 == "name" }?.1 == .string("\u{FFFD}\u{FFFD}"), "\(members)")
    }
}

@Suite("Wire number spelling")
struct WireNumberSpellingTests {
    @Test("doubles are printed in their shortest exact form")
    func shortestDoubles() {
        let encoded = String(
            decoding: WireCodec.serialize(.array([.double(11.22), .double(-61), .double(0.1 + 0.2), .double(1.8)])), as: UTF8.self)
        #expect(encoded == "[11.22,-61.0,0.30000000000000004,1.8]")
    }
}
