import BeaconMeshTesting
import Foundation
import Testing

/// `beacon-coordinator webhooks test NAME --config FILE` as a person runs it, against receivers of the tests' own over
/// HTTPS (a test CA): no broker, no coordinator running.
@Suite("beacon-coordinator webhooks test end to end")
struct WebhookTestCommandTests {
    @Test(
        "webhooks test NAME POSTs one signed test event and prints the answer: 2xx exits 0; a refusal or no receiver exits 1; an unknown name exits 2"
    )
    func oneSignedTestEvent() async throws {
        let setup = try await WebhookEndToEndTests.Setup()
        let secret = try setup.secret("crm")
        _ = try setup.secret("gone")
        _ = try setup.secret("away")
        let crm = try await WebhookReceiver.start(certificates: setup.certificates)
        let gone = try await WebhookReceiver.start(certificates: setup.certificates) { _ in .status(410) }
        defer {
            Task {
                await crm.stop()
                await gone.stop()
            }
        }
        let nobodyThere = try FreePort.next()
        let away = "https://127.0.0.1:\(nobodyThere)/hooks/beaconmesh"
        let config = try Mesh.writeCoordinatorConfig(
            in: setup.directory, brokerURL: "mqtt://127.0.0.1:\(nobodyThere)",
            extra: """
                webhooks:
                \(setup.endpoint("crm", url: crm.url, events: "arrived"))
                \(setup.endpoint("gone", url: gone.url, events: "arrived"))
                \(setup.endpoint("away", url: away, events: "arrived"))
                """)
        func webhooksTest(_ name: String) async throws -> (TestProcess, TestProcess.ExitStatus?) {
            let command = try Mesh.program("beacon-coordinator", ["webhooks", "test", name, "--config", config])
            return (command, await command.waitForExit(timeout: .seconds(20)))
        }

        // Taken: one POST, signed with the endpoint's secret, its id in the header, the body and the printed line.
        let (taken, takenExit) = try await webhooksTest("crm")
        #expect(takenExit == .exited(0), "\(taken.transcript)")
        let line = try #require(taken.stdoutLines.first)
        #expect(taken.stdoutLines.count == 1 && line.hasPrefix("crm: 200 from \(crm.url) in "), "\(taken.transcript)")
        #expect(crm.received.count == 1)
        let post = try #require(crm.received.first)
        #expect(WebhookReceiver.verifies(post, secret: secret), "\(post.signature)")
        #expect(post.eventID.hasPrefix("test-") && line.hasSuffix("(event \(post.eventID))"), "\(line) / \(post.eventID)")
        let body = try #require(Mesh.payload(of: "body " + post.text))
        #expect(body["type"] as? String == "test" && body["id"] as? String == post.eventID, "\(post.text)")

        // Refused for good (410): said so, exit 1, and not tried again.
        let (refused, refusedExit) = try await webhooksTest("gone")
        #expect(refusedExit == .exited(1), "\(refused.transcript)")
        #expect(refused.stdoutLines.first?.contains("gone: 410 from \(gone.url)") == true, "\(refused.transcript)")
        #expect(refused.stdoutLines.first?.hasSuffix("refused, not retried") == true, "\(refused.transcript)")
        #expect(gone.received.count == 1)

        // Nobody listening: one line saying it was not delivered, exit 1.
        let (unanswered, unansweredExit) = try await webhooksTest("away")
        #expect(unansweredExit == .exited(1), "\(unanswered.transcript)")
        #expect(unanswered.stdoutLines.count == 1, "\(unanswered.transcript)")
        #expect(unanswered.stdoutLines.first?.hasPrefix("away: not delivered to \(away) after ") == true, "\(unanswered.transcript)")

        // A name the config does not have: exit 2, one line naming the ones it has; nothing was sent.
        let (unknown, unknownExit) = try await webhooksTest("nobody")
        #expect(unknownExit == .exited(2), "\(unknown.transcript)")
        #expect(unknown.stderrLines.count == 1, "\(unknown.transcript)")
        #expect(
            unknown.stderrLines.first?.contains("no webhook named 'nobody' (known: crm, gone, away)") == true, "\(unknown.transcript)")
        #expect(crm.received.count == 1 && gone.received.count == 1)
    }
}
