import BeaconMeshTesting
import Foundation
import Testing

/// A webhook receiver that fails for a while, seen from outside: what only processes show (a kill -9 between the
/// outbox and the receiver, the order across a restart). The retry rules themselves are `WebhookDispatchTests`'.
/// It mostly waits, so `deploy/run-tests.sh` runs it in a test process of its own beside the other tests that wait on
/// real time.
@Suite("webhooks through an outage")
struct WebhookOutageTests {
    static let outage: Duration = .seconds(10)

    @Test("a receiver answering 500 for 10 s, then 200, gets every event in order, across a kill -9 and restart of the coordinator")
    func failingReceiverAndKilledCoordinator() async throws {
        let setup = try await WebhookEndToEndTests.Setup()
        let started = ContinuousClock.now
        let receiver = try await WebhookReceiver.start(certificates: setup.certificates) { _ in
            ContinuousClock.now - started < Self.outage ? .status(500) : .status(200)
        }
        defer { Task { await receiver.stop() } }
        let secret = try setup.secret("crm")
        var run = try await CoordinatorRun.start(
            extraConfig: """
                metrics: "127.0.0.1:\(setup.metricsPort)"
                webhooks:
                \(setup.endpoint("crm", url: receiver.url, events: WebhookEndToEndTests.allTypes))
                """, directory: setup.directory)
        try await WebhookEndToEndTests.anasVisit(run)
        let before = run.events.lines.compactMap(Mesh.payload(of:)).compactMap { $0["id"] as? String }
        // Everything owed is in the outbox (the backlog gauge counts it) before the coordinator is killed.
        #expect(await setup.metric(#"beaconmesh_webhook_backlog{endpoint="crm"}"#, reaches: Double(before.count)))
        run.coordinator.send(SIGKILL)
        _ = await run.coordinator.waitForExit()
        run.coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", run.config])
        #expect(await run.coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") } != nil)
        // Another visit after the restart (a new scanner boot).
        try await WebhookEndToEndTests.anasVisit(run, boot: "b00t2")
        let published = run.events.lines.compactMap(Mesh.payload(of:)).compactMap { $0["id"] as? String }
        #expect(published.count > before.count)
        #expect(
            await receiver.waitFor(timeout: .seconds(60)) { _ in Set(receiver.deduplicated.map(\.eventID)).isSuperset(of: published) },
            "\(receiver.deduplicated.map(\.eventID)) vs \(published)\n\(run.coordinator.transcript)")
        // At least once each; after dropping duplicates, each once and in the order published.
        #expect(receiver.deduplicated.map(\.eventID) == published)
        #expect(receiver.received.allSatisfy { WebhookReceiver.verifies($0, secret: secret) })
        #expect(receiver.received.contains { $0.at - started < Self.outage && $0.status == 500 }, "it was tried while failing")
        await run.stop()
    }
}
