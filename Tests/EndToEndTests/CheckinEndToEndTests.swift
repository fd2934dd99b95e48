import BeaconMeshTesting
import Foundation
import Testing

/// The till's check-in and the registry's events, through the real coordinator and broker: requests published with
/// `mosquitto_pub`, events read with `mosquitto_sub`.
@Suite("check-ins and registry events end to end", .serialized)
struct CheckinEndToEndTests {
    /// The café of the contract's example: a till at the counter, and a terrace that is not one.
    static let cafe = """
          - id: 9
            name: PubNub Cafe
            departments:
              - {id: 6, name: Counter, till: true}
              - {id: 7, name: Terrace}
        """

    /// Zoë's phone ranging the counter at `proximity`, `count` reports 250 ms apart.
    private static func range(_ run: CoordinatorRun, proximity: String, department: Int = 6, from first: Int, count: Int) async throws {
        try await TopicPublisher.paced(
            port: run.broker.port, topic: "beaconmesh/v1/stores/9/members/zoe/ranging", count: count, every: .milliseconds(250)
        ) { index in
            #"{"v":1,"member":"zoe","session":"p1","seq":\#(first + index),"sentAt":\#(Mesh.nowMilliseconds),"beacons":[{"department":\#(department),"proximity":"\#(proximity)","rssi":-52,"accuracy":0.4}]}"#
        }
    }

    private static func request(_ run: CoordinatorRun, id: String, member: String = "zoe", department: Int = 6) async throws {
        try await MosquittoClients.publish(
            port: run.broker.port, topic: "beaconmesh/v1/stores/9/checkins",
            string:
                #"{"v":1,"id":"\#(id)","member":"\#(member)","department":\#(department),"till":"counter-1","at":\#(Mesh.nowMilliseconds)}"#,
            qos: 1)
    }

    @Test(
        "a member at the counter is checked in once per request, on the store's events and her own topic; others are refused with their reason"
    )
    func checkins() async throws {
        var run = try await CoordinatorRun.start(extraConfig: CheckinEndToEndTests.cafe)
        let cafe = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/stores/9/events", qos: 1)
        let mine = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/members/zoe/checkins", qos: 1)
        func events(_ type: String) -> [[String: Any]] {
            cafe.lines.compactMap(Mesh.payload(of:)).filter { $0["type"] as? String == type }
        }

        try await CheckinEndToEndTests.range(run, proximity: "immediate", from: 1, count: 6)
        #expect(await cafe.waitForLine(timeout: .seconds(5)) { $0.contains("\"arrived\"") } != nil, "\(run.coordinator.transcript)")
        try await CheckinEndToEndTests.request(run, id: "r1")
        try await CheckinEndToEndTests.request(run, id: "r1")  // delivered twice
        let accepted = await cafe.waitForLine(timeout: .seconds(5)) { $0.contains("\"checkin\"") }.flatMap(Mesh.payload(of:))
        #expect(accepted?["request"] as? String == "r1")
        #expect(accepted?["checkins"] as? Int == 1)
        #expect(accepted?["verified"] as? Bool == false)
        #expect(accepted?["departmentName"] as? String == "Counter")
        #expect((accepted?["member"] as? [String: Any])?["id"] as? String == "zoe")
        #expect(await mine.waitForLine(timeout: .seconds(5)) { $0.contains("\"r1\"") } != nil, "the member's own topic has it")

        try await CheckinEndToEndTests.request(run, id: "r2", department: 7)
        try await CheckinEndToEndTests.request(run, id: "r3", member: "ghost")
        _ = await eventually(timeout: .seconds(5)) { events("checkin-refused").count >= 2 }
        // Zoë walks away: 5 s without being heard near the till.
        try await Task.sleep(for: .seconds(6))
        try await CheckinEndToEndTests.request(run, id: "r4")
        _ = await eventually(timeout: .seconds(5)) { events("checkin-refused").count >= 3 }
        let refused = Dictionary(
            uniqueKeysWithValues: events("checkin-refused").compactMap { event in
                (event["request"] as? String).map { ($0, event["reason"] as? String ?? "") }
            })
        #expect(refused == ["r2": "not-a-till", "r3": "unknown-member", "r4": "not-near-till"], "\(cafe.lines)")
        #expect(events("checkin-refused").first { $0["request"] as? String == "r3" }?["member"] as? String == "ghost")

        // A restart remembers the requests it handled: r1 delivered again counts nothing.
        #expect(await run.coordinator.stop(with: SIGTERM, timeout: .seconds(15)) == .exited(0))
        run.coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", run.config])
        #expect(await run.coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") } != nil)
        try await CheckinEndToEndTests.range(run, proximity: "near", from: 7, count: 6)
        try await CheckinEndToEndTests.request(run, id: "r1")
        try await CheckinEndToEndTests.request(run, id: "r5")
        // r5 came after r1: once r5 is counted, a second count of r1 would be there before it.
        _ = await eventually(timeout: .seconds(5)) { events("checkin").contains { $0["request"] as? String == "r5" } }
        #expect(events("checkin").compactMap { $0["request"] as? String } == ["r1", "r5"], "\(cafe.lines)")
        #expect(events("checkin").last?["checkins"] as? Int == 2)
        await cafe.stop()
        await mine.stop()
        await run.stop()

        let list = try Mesh.program("beacon-coordinator", ["members", "list", "--db", run.directory + "/mesh.sqlite"])
        #expect(await list.waitForExit() == .exited(0))
        let header = list.stdoutLines.first?.split(separator: " ", omittingEmptySubsequences: true) ?? []
        let row = list.stdoutLines.first { $0.hasPrefix("zoe ") }
        #expect(header.contains("CHECKINS") && row?.contains("  2  ") == true, "\(list.stdoutLines)")
    }

    @Test("members added, updated, removed and forgotten are announced on registry/events with ids only")
    func registryEvents() async throws {
        var run = try await CoordinatorRun.start()
        let registry = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/registry/events", qos: 1)
        let database = run.directory + "/mesh.sqlite"
        func members(_ arguments: [String]) async throws {
            let command = try Mesh.program("beacon-coordinator", ["members"] + arguments + ["--db", database])
            #expect(await command.waitForExit() == .exited(0), "\(command.transcript)")
        }
        try await members(["add", "newbie", "--name", "Secret Name", "--drink", "Oolong", "--beacon", "ibeacon:\(Mesh.uuid):1:9"])
        try await members(["add", "newbie", "--name", "Secret Name", "--drink", "Sencha", "--beacon", "ibeacon:\(Mesh.uuid):1:9"])
        try await members(["remove", "newbie"])
        try await members(["forget", "zoe"])
        let all = await eventually(timeout: .seconds(10)) { registry.lines.contains { $0.contains("member-forgotten") } }
        #expect(all, "\(registry.lines)\n\(run.coordinator.transcript)")
        let received = registry.lines.compactMap(Mesh.payload(of:))
        // The start's merge of members.csv announces its members through the outbox after "coordinator running"; on a
        // loaded machine one of those may reach this subscription, before anything the commands did.
        let startup = received.prefix { $0["member"] as? String != "newbie" }
        #expect(startup.allSatisfy { $0["type"] as? String == "member-added" }, "\(registry.lines)")
        let events = Array(received.dropFirst(startup.count))
        #expect(
            events.map { "\($0["type"] ?? "?") \($0["member"] ?? "?")" }
                == ["member-added newbie", "member-updated newbie", "member-removed newbie", "member-forgotten zoe"], "\(registry.lines)")
        #expect(Set(received.compactMap { $0["id"] as? String }).count == received.count)
        #expect(received.allSatisfy { Set($0.keys) == ["v", "id", "type", "member", "at"] }, "ids only: \(registry.lines)")
        #expect(!registry.lines.contains { $0.contains("Secret") || $0.contains("Oolong") })

        // The members CSV merged at start announces what it adds, once.
        #expect(await run.coordinator.stop(with: SIGTERM, timeout: .seconds(15)) == .exited(0))
        let csv = try String(contentsOfFile: run.directory + "/members.csv", encoding: .utf8) + "\nkim,Kim Lee,Tea,,,0,,\n"
        try csv.write(toFile: run.directory + "/members.csv", atomically: true, encoding: .utf8)
        run.coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", run.config])
        let kim = await registry.waitForLine(timeout: .seconds(10)) { $0.contains("\"kim\"") }
        #expect(kim?.contains("member-added") == true, "\(registry.lines)")
        // A later change goes out through the same outbox, in order: had Kim's row stayed, it would go out again first.
        try await members(["add", "lee", "--name", "Lee", "--drink", "Tea"])
        #expect(await registry.waitForLine(timeout: .seconds(10)) { $0.contains("\"lee\"") } != nil, "\(registry.lines)")
        #expect(registry.lines.filter { $0.contains("\"kim\"") }.count == 1, "\(registry.lines)")
        await registry.stop()
        await run.stop()
    }
}
