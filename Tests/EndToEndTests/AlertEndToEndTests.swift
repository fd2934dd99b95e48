import BeaconMeshTesting
import Foundation
import Testing

/// Alert rules through the real programs: a member imported with a custom field, heard through mosquitto, greeted,
/// and the rule's alert on the store's `alerts` topic and in the plain monitor's lines.
@Suite("alerts end to end", .serialized)
struct AlertEndToEndTests {
    @Test(
        "a VIP's arrival is on the store's alerts topic within 1 s of her greeting, once per visit; a member without the field makes none; the monitor prints it"
    )
    func vipArrives() async throws {
        let run = try await CoordinatorRun.start(
            extraConfig: """
                alerts:
                  - {id: vip-arrived, store: 1, when: {memberArrived: {member: {tier: vip}}}, cap: 1/visit}
                """)
        // Events and alerts on one subscription: the broker keeps their order, the coordinator's.
        let watch = try await MosquittoClients.subscribe(
            port: run.broker.port, filters: ["beaconmesh/v1/stores/1/events", "beaconmesh/v1/stores/1/alerts"], qos: 1)
        @Sendable func alertLines() -> [String] { watch.lines.filter { Mesh.topic(of: $0) == "beaconmesh/v1/stores/1/alerts" } }
        let monitor = try Mesh.program("beacon-monitor", ["--store", "1", "--broker", run.broker.url, "--plain"])
        defer { monitor.send(SIGKILL) }
        let screen = try await MonitorUnderTest.launch("alerts", broker: run.broker)
        defer { Task { await screen.tmux.kill() } }
        // Vera joins the club as a VIP: a members CSV with a column of its own.
        let csv = run.directory + "/vip.csv"
        try """
        id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt,tier
        vera,Vera Lima,Espresso,ibeacon:\(Mesh.uuid):1:9,,3,,,vip
        """.write(toFile: csv, atomically: true, encoding: .utf8)
        let imported = try Mesh.program("beacon-coordinator", ["members", "import", csv, "--db", run.directory + "/mesh.sqlite"])
        #expect(await imported.waitForExit() == .exited(0), "\(imported.transcript)")
        #expect(await run.coordinator.readRegistryChange(changed: "vera"), "\(run.coordinator.transcript)")

        // Ana (no tier) first, then Vera, each greeted; only Vera's arrival is an alert.
        try await run.send(department: 10, minor: 1, from: 1, count: 6)
        #expect(await watch.waitForLine { $0.contains(#""type":"arrived""#) && $0.contains(#""id":"ana""#) } != nil)
        // The monitor is subscribed once it prints Ana's greeting.
        #expect(
            await monitor.waitForLine(in: .stdout) { $0.contains("arrived") && $0.contains("Ana Souza") } != nil, "\(monitor.transcript)")
        try await run.send(department: 20, minor: 9, boot: "vera", from: 1, count: 6)
        let greeted = await watch.waitForLine { $0.contains(#""type":"arrived""#) && $0.contains(#""id":"vera""#) }
        let greetedAt = ContinuousClock.now
        let line = await watch.waitForLine(timeout: .seconds(5)) { $0.contains("vip-arrived") }
        #expect(ContinuousClock.now - greetedAt < .seconds(1), "the alert came \(ContinuousClock.now - greetedAt) after the greeting")
        let alert = try #require(line.flatMap(Mesh.payload(of:)), "\(watch.lines)\n\(run.coordinator.transcript)")
        // The full-screen monitor (in tmux): the alert on a line of its own.
        let shown = try await screen.tmux.waitForScreen("the alert line", timeout: .seconds(5)) {
            $0.contains("ALERT") && $0.contains("Vera Lima (tier vip) arrived in Housewares")
        }
        #expect(
            ContinuousClock.now - greetedAt < .seconds(1), "on the monitor's screen \(ContinuousClock.now - greetedAt) after the greeting")
        #expect(ScreenText.line(containing: "Vera Lima (tier vip)", in: shown)?.hasPrefix(" ALERT ") == true, "\(shown)")
        let arrival = try #require(greeted.flatMap(Mesh.payload(of:)))
        #expect(alert["kind"] as? String == "member-arrived" && alert["store"] as? Int == 1 && alert["department"] as? Int == 20)
        #expect(alert["text"] as? String == "Vera Lima (tier vip) arrived in Housewares")
        #expect((alert["member"] as? [String: Any])?["id"] as? String == "vera")
        #expect(alert["at"] as? Int64 == arrival["at"] as? Int64 && alert["id"] as? String != arrival["id"] as? String)
        // Her visit ends: an alert for Ana's arrival or a second for Vera's would be on the subscription before it.
        #expect(await watch.waitForLine(timeout: .seconds(10)) { $0.contains(#""type":"left""#) && $0.contains(#""id":"vera""#) } != nil)
        #expect(alertLines().count == 1, "once, and none for Ana: \(alertLines())")
        #expect(
            await monitor.waitForLine(in: .stdout, timeout: .seconds(5)) {
                $0.contains("ALERT    Vera Lima (tier vip) arrived in Housewares")
            } != nil,
            "\(monitor.transcript)")
        await watch.stop()
        await run.stop()
    }
}
