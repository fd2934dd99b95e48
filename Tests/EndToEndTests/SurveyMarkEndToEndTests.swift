import BeaconMeshTesting
import Foundation
import Testing

/// `beacon-coordinator survey mark` against a real mosquitto, with `mosquitto_sub` reading what it published.
@Suite("survey mark end to end", .serialized)
struct SurveyMarkEndToEndTests {
    static let key = "ibeacon:\(Mesh.uuid):1:7"

    @Test(
        "each mark — a department, none, stop — reaches the store's survey topic at QoS 1 as the contract's payload; the command exits 0 once the broker has it"
    )
    func marksArePublished() async throws {
        let broker = try await MosquittoBroker.start()
        let survey = try await MosquittoClients.subscribe(
            port: broker.port, filter: "beaconmesh/v1/stores/+/survey", qos: 1, format: "%q %r %t %p")
        for (index, (department, expected)) in [("10", 10 as Int?), ("none", nil), ("stop", nil)].enumerated() {
            let before = Mesh.nowMilliseconds
            let mark = try Mesh.program(
                "beacon-coordinator",
                ["survey", "mark", "--store", "9", "--beacon", Self.key.uppercased(), "--department", department, "--broker", broker.url])
            #expect(await mark.waitForExit(timeout: .seconds(20)) == .exited(0), "\(mark.transcript)")
            let after = Mesh.nowMilliseconds
            guard let line = await eventually(timeout: .seconds(5), { survey.lines.count > index ? survey.lines[index] : nil }) else {
                Issue.record("mark \(department) never reached mosquitto_sub: \(mark.transcript)\n\(broker.log)")
                continue
            }
            #expect(line.hasPrefix("1 0 beaconmesh/v1/stores/9/survey {"), "QoS 1, not retained, the store's topic: \(line)")
            let payload = try #require(
                try JSONSerialization.jsonObject(with: Data(line.drop { $0 != "{" }.utf8)) as? [String: Any], "\(line)")
            #expect(payload["v"] as? Int == 1 && payload["beacon"] as? String == Self.key, "\(payload)")
            #expect(expected.map { payload["department"] as? Int == $0 } ?? (payload["department"] is NSNull), "\(payload)")
            #expect(
                Set(payload.keys)
                    == (department == "stop" ? ["v", "beacon", "department", "at", "stop"] : ["v", "beacon", "department", "at"]))
            if department == "stop" { #expect(payload["stop"] as? Bool == true) }
            let at = try #require(payload["at"] as? Int64)
            #expect(before <= at && at <= after, "at \(at) outside the command's run \(before)…\(after)")
            // What it printed is what it published.
            #expect(mark.stdoutLines == [String(line.dropFirst(4))], "\(mark.transcript)")
            #expect(mark.stderrLines.isEmpty, "\(mark.transcript)")
        }
        await survey.stop()
        await broker.stop()
    }

    @Test(
        "a malformed key or a bad flag exits 2 with one line naming it, before any broker is asked",
        arguments: [
            (["--beacon", "ibeacon:x:1:2", "--department", "10"], "--beacon"),
            (["--beacon", key, "--department", "ten"], "--department"),
            (["--beacon", key, "--department", "65536"], "--department"),
            (["--beacon", key], "--department"),
            (["--department", "10"], "--beacon"),
            (["--beacon", key, "--department", "10", "--broker", "http://127.0.0.1:1"], "http://127.0.0.1:1"),
        ])
    func refused(arguments: [String], naming: String) async throws {
        let mark = try Mesh.program("beacon-coordinator", ["survey", "mark", "--store", "1"] + arguments)
        #expect(await mark.waitForExit(timeout: .seconds(20)) == .exited(2), "\(mark.transcript)")
        #expect(mark.stdoutLines.isEmpty && mark.stderrLines.count == 1, "\(mark.transcript)")
        #expect(
            mark.stderrLines.first?.hasPrefix("beacon-coordinator: ") == true && mark.stderrLines.first?.contains(naming) == true,
            "\(mark.transcript)")
    }

    @Test("with no broker there, it gives up after 10 s with one line and exit 1: nothing was marked")
    func noBroker() async throws {
        let port = try FreePort.next()
        let started = ContinuousClock.now
        let mark = try Mesh.program(
            "beacon-coordinator",
            ["survey", "mark", "--store", "1", "--beacon", Self.key, "--department", "10", "--broker", "mqtt://127.0.0.1:\(port)"])
        #expect(await mark.waitForExit(timeout: .seconds(30)) == .exited(1), "\(mark.transcript)")
        #expect(ContinuousClock.now - started < .seconds(20))
        #expect(mark.stderrLines.count == 1, "\(mark.transcript)")
        let line = mark.stderrLines.first ?? ""
        #expect(line.hasPrefix("beacon-coordinator: cannot reach the broker at mqtt://127.0.0.1:\(port) within 10 s"), "\(line)")
        #expect(line.hasSuffix(": nothing was marked"), "\(line)")
    }
}
