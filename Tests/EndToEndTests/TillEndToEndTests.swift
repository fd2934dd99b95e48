import BeaconMeshTesting
import Foundation
import Synchronization
import Testing

/// The café's till: `beacon-monitor --store 9 --till 6` in a real terminal beside the real coordinator; Zoë's phone
/// ranges the counter (its reports published with `mosquitto_pub`); the shopkeeper presses her number.
@Suite("the till panel end to end", .serialized)
struct TillEndToEndTests {
    /// Zoë's phone: one ranging report every 250 ms of whatever `place` says (department and proximity), until stopped.
    private final class Phone: Sendable {
        let place = Mutex<(department: Int, proximity: String)>((6, "immediate"))
        let stopped = Atomic(false)

        func run(port: Int) async throws {
            var seq = 0
            while !stopped.load(ordering: .relaxed) {
                seq += 1
                let (department, proximity) = place.withLock { $0 }
                try await MosquittoClients.publish(
                    port: port, topic: "beaconmesh/v1/stores/9/members/zoe/ranging",
                    string:
                        #"{"v":1,"member":"zoe","session":"till","seq":\#(seq),"sentAt":\#(Mesh.nowMilliseconds),"beacons":[{"department":\#(department),"proximity":"\#(proximity)","rssi":-50,"accuracy":0.3}]}"#,
                    qos: 1)
                try await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    @Test("a member at the counter appears in the till panel; her number checks her in once; pressed again after she walked away, refused")
    func checkInAtTheTill() async throws {
        let run = try await CoordinatorRun.start(extraConfig: CheckinEndToEndTests.cafe)
        let cafe = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/stores/9/events", qos: 1)
        let monitor = try await MonitorUnderTest.launch("till", broker: run.broker, store: 9, arguments: ["--till", "6"])
        defer { Task { await monitor.tmux.kill() } }
        try await monitor.tmux.waitForScreen("the empty till panel") { $0.contains("NEAR THE TILL") && $0.contains("Nobody near the till") }

        let phone = Phone()
        let ranging = Task { try await phone.run(port: run.broker.port) }
        // Listed a second or two after her first report (1 s of it the coordinator's arrival settling); how fast is
        // for the benchmarks, and a loaded CI machine once took 3.3 s.
        let listed = try await monitor.tmux.waitForScreen("Zoë listed as 1", timeout: .seconds(10)) {
            $0.contains(" 1  Zoë Martin")
        }
        #expect(ScreenText.line(containing: "1  Zoë Martin", in: listed)?.contains("immediate") == true, "\(listed)")

        try await monitor.tmux.sendKeys("1")
        let accepted = await cafe.waitForLine(timeout: .seconds(5)) { $0.contains("\"type\":\"checkin\"") }.flatMap(Mesh.payload(of:))
        #expect(accepted?["checkins"] as? Int == 1 && accepted?["department"] as? Int == 6, "\(cafe.lines)")
        try await monitor.tmux.waitForScreen("the check-in shown at the till") { $0.contains("✓ Zoë Martin: checked in (check-in 1)") }

        // She takes her coffee to the terrace: her phone ranges only the terrace now. Her number is still shown for
        // a few seconds; pressed, it is refused.
        phone.place.withLock { $0 = (7, "near") }
        try await Task.sleep(for: .seconds(1))
        try await monitor.tmux.sendKeys("1")
        let refused = await cafe.waitForLine(timeout: .seconds(5)) { $0.contains("checkin-refused") }.flatMap(Mesh.payload(of:))
        #expect(refused?["reason"] as? String == "not-near-till", "\(cafe.lines)")
        try await monitor.tmux.waitForScreen("the refusal shown, then Zoë gone from the panel", timeout: .seconds(10)) {
            !$0.contains(" 1  Zoë Martin") && $0.contains("✗ Zoë Martin: refused (not-near-till)")
        }
        #expect(cafe.lines.filter { $0.contains("\"type\":\"checkin\"") }.count == 1)

        phone.stopped.store(true, ordering: .relaxed)
        _ = try? await ranging.value
        try await monitor.tmux.sendKeys("q")
        try await monitor.waitForCleanExit()
        await cafe.stop()
        await run.stop()
        let list = try Mesh.program("beacon-coordinator", ["members", "list", "--db", run.directory + "/mesh.sqlite"])
        #expect(await list.waitForExit() == .exited(0))
        #expect(list.stdoutLines.first { $0.hasPrefix("zoe ") }?.contains("  1  ") == true, "\(list.stdoutLines)")
    }
}
