import BeaconMeshTesting
import Foundation
import Testing

/// Webhooks through the real programs: a coordinator POSTing to receivers of the tests' own over HTTPS (a test CA),
/// the events it published on MQTT, signed, in order, each at least once, personal data only where asked.
@Suite("webhooks end to end", .serialized)
struct WebhookEndToEndTests {
    /// A folder with a test CA, a receiver per endpoint, secrets and a metrics port.
    struct Setup {
        let directory: String
        let certificates: TestCertificates
        let metricsPort: Int

        init() async throws {
            directory = try Mesh.temporaryDirectory()
            certificates = try await TestCertificates.generate(in: directory + "/tls")
            metricsPort = try FreePort.next()
        }

        func secret(_ name: String) throws -> [UInt8] {
            let text = "\(name)-secret-\(UUID().uuidString)"
            try (text + "\n").write(toFile: directory + "/\(name).secret", atomically: true, encoding: .utf8)
            return Array(text.utf8)
        }

        func endpoint(_ name: String, url: String, events: String, personalData: Bool = false) -> String {
            """
              - {name: \(name), url: "\(url)", secretFile: \(name).secret, events: [\(events)], personalData: \(personalData), cafile: \(certificates.caCertificate)}
            """
        }

        func metrics() async -> PrometheusText? {
            guard let text = try? await HTTP.get("http://127.0.0.1:\(metricsPort)/metrics").body else { return nil }
            return try? PrometheusText(text)
        }

        /// Waits until the metrics show `series` at `value` or more.
        func metric(_ series: String, reaches value: Double, timeout: Duration = .seconds(20)) async -> Bool {
            await eventually(timeout: timeout, interval: .milliseconds(200)) { (await metrics()?[series] ?? -1) >= value }
        }
    }

    static let allTypes = "arrived, moved, left, resumed, promo, checkin, node, alert, member-forgotten"

    /// Ana's visit: arrives in Clothing (arrived, then the promo after 1 s), moves to Housewares, leaves.
    static func anasVisit(_ run: CoordinatorRun, boot: String = "b00t") async throws {
        let left = run.events(ofType: "left").count
        try await run.send(department: 10, minor: 1, boot: boot, from: 1, count: 8)
        try await run.send(department: 20, minor: 1, boot: boot, from: 9, count: 8)
        #expect(
            await eventually(timeout: .seconds(15)) { run.events(ofType: "left").count > left }, "\(run.coordinator.transcript)")
    }

    @Test("each event reaches each endpoint that asked for it over HTTPS, signed, in MQTT's order; names only where personalData is true")
    func signedInOrderPersonalDataOnlyWhereAsked() async throws {
        let setup = try await Setup()
        let crm = try await WebhookReceiver.start(certificates: setup.certificates)
        let analytics = try await WebhookReceiver.start(certificates: setup.certificates)
        defer {
            Task {
                await crm.stop()
                await analytics.stop()
            }
        }
        let crmSecret = try setup.secret("crm")
        let analyticsSecret = try setup.secret("analytics")
        let run = try await CoordinatorRun.start(
            extraConfig: """
                metrics: "127.0.0.1:\(setup.metricsPort)"
                webhooks:
                \(setup.endpoint("crm", url: crm.url, events: "arrived, left, promo", personalData: true))
                \(setup.endpoint("analytics", url: analytics.url, events: Self.allTypes))
                """, directory: setup.directory)
        try await Self.anasVisit(run)
        let published = run.events.lines.compactMap(Mesh.payload(of:))
        let forCRM = published.filter { ["arrived", "left", "promo"].contains($0["type"] as? String ?? "") }.compactMap {
            $0["id"] as? String
        }
        let forAnalytics = published.compactMap { $0["id"] as? String }
        #expect(Set(published.compactMap { $0["type"] as? String }) == ["node", "arrived", "promo", "moved", "left"], "\(published)")
        #expect(await crm.waitFor(forCRM.count), "\(crm.received.map(\.text))\n\(run.coordinator.transcript)")
        #expect(await analytics.waitFor(forAnalytics.count), "\(analytics.received.map(\.text))")
        // In the order MQTT had them, each once (every answer was 200).
        #expect(crm.received.map(\.eventID) == forCRM)
        #expect(analytics.received.map(\.eventID) == forAnalytics)
        for post in crm.received {
            #expect(WebhookReceiver.verifies(post, secret: crmSecret), "\(post.signature)")
            #expect(!WebhookReceiver.verifies(post, secret: analyticsSecret), "verifies with another secret")
            #expect(post.text.contains("Ana Souza"), "personalData: true carries the member: \(post.text)")
            #expect(Int64(post.timestamp).map { abs($0 - Int64(Date().timeIntervalSince1970)) < 120 } == true, "\(post.timestamp)")
        }
        // The body is the event as MQTT had it.
        let mqttArrival = try #require(
            run.events.lines.first { $0.contains(#""type":"arrived""#) }.map { String($0.split(separator: " ", maxSplits: 1)[1]) })
        #expect(crm.received.first?.text == mqttArrival)
        for post in analytics.received {
            #expect(WebhookReceiver.verifies(post, secret: analyticsSecret))
            #expect(!WebhookReceiver.verifies(post, secret: crmSecret))
            for personal in ["Ana Souza", "Ana", "Flat white", "photo", "favoriteDrink", "greeting", "Welcome back"] {
                #expect(!post.text.contains(personal), "\(personal) in \(post.text)")
            }
            #expect(post.text.contains(#""type":"node""#) || post.text.contains(#""member":{"id":"ana"}"#), "\(post.text)")
        }
        #expect(
            await setup.metric(
                #"beaconmesh_webhook_deliveries_total{endpoint="analytics",result="delivered"}"#, reaches: Double(forAnalytics.count)))
        #expect(await setup.metrics()?[#"beaconmesh_webhook_backlog{endpoint="crm"}"#] == 0)
        await run.stop()
    }

    @Test(
        "a 410 is not retried; a redirect is not followed; a huge answer and a receiver that is not there are failures, retried, in the backlog"
    )
    func refusalsRedirectsAndFailures() async throws {
        let setup = try await Setup()
        let gone = try await WebhookReceiver.start(certificates: setup.certificates) { _ in .status(410) }
        let target = try await WebhookReceiver.start(certificates: setup.certificates)
        let moved = try await WebhookReceiver.start(certificates: setup.certificates) { _ in .redirect(target.url) }
        let huge = try await WebhookReceiver.start(certificates: setup.certificates) { _ in .huge(1 << 20) }
        defer { Task { for receiver in [gone, target, moved, huge] { await receiver.stop() } } }
        for name in ["gone", "moved", "huge", "down"] { _ = try setup.secret(name) }
        let nobody = "https://127.0.0.1:\(try FreePort.next())/hooks"
        let run = try await CoordinatorRun.start(
            extraConfig: """
                metrics: "127.0.0.1:\(setup.metricsPort)"
                webhooks:
                \(setup.endpoint("gone", url: gone.url, events: Self.allTypes))
                \(setup.endpoint("moved", url: moved.url, events: Self.allTypes))
                \(setup.endpoint("huge", url: huge.url, events: Self.allTypes))
                \(setup.endpoint("down", url: nobody, events: Self.allTypes))
                """, arguments: ["--health-interval", "500ms"], directory: setup.directory)
        try await Self.anasVisit(run)
        let ids = run.events.lines.compactMap(Mesh.payload(of:)).compactMap { $0["id"] as? String }
        // Refused: each event POSTed once, none again.
        #expect(await setup.metric(#"beaconmesh_webhook_deliveries_total{endpoint="gone",result="refused"}"#, reaches: Double(ids.count)))
        // Failures are retried; the down endpoint's backlog is every event.
        #expect(await setup.metric(#"beaconmesh_webhook_deliveries_total{endpoint="moved",result="failed"}"#, reaches: 2))
        #expect(await setup.metric(#"beaconmesh_webhook_deliveries_total{endpoint="huge",result="failed"}"#, reaches: 2))
        #expect(await setup.metric(#"beaconmesh_webhook_deliveries_total{endpoint="down",result="failed"}"#, reaches: 1))
        #expect(await setup.metric(#"beaconmesh_webhook_backlog{endpoint="down"}"#, reaches: Double(ids.count)))
        #expect(gone.received.map(\.eventID) == ids, "each once: \(gone.received.map(\.eventID)) vs \(ids)")
        #expect(target.received.isEmpty, "the redirect was followed: \(target.received.map(\.text))")
        // In order: nothing after the first event goes while the first fails.
        #expect(Set(moved.received.map(\.eventID)) == [ids[0]] && Set(huge.received.map(\.eventID)) == [ids[0]])
        // Health says which endpoint fails, why, and what waits.
        let health = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/coordinators/e2e/health", qos: 0)
        let line = await health.waitForLine(timeout: .seconds(5)) { $0.contains(#""webhooks""#) }
        await health.stop()
        let report: [String: Any]? = line.flatMap { Mesh.payload(of: $0) }
        var webhooks: [String: [String: Any]] = [:]
        for entry in report?["webhooks"] as? [[String: Any]] ?? [] { webhooks[entry["name"] as? String ?? ""] = entry }
        #expect(
            webhooks["down"]?["state"] as? String == "failing" && webhooks["down"]?["backlog"] as? Int == ids.count,
            "\(String(describing: report))")
        let movedError = webhooks["moved"]?["error"] as? String ?? ""
        #expect(movedError.contains("redirect"), "\(movedError)")
        #expect(webhooks["gone"]?["state"] as? String == "ok" && webhooks["gone"]?["refused"] as? Int == ids.count)
        await run.stop()
    }

    @Test(
        "deploy/webhooks/receiver.py (the receiver deploy/README.md shows) verifies every POST over HTTPS, logs each event once, and refuses a wrong secret (not retried)"
    )
    func theDocumentedReceiver() async throws {
        let setup = try await Setup()
        _ = try setup.secret("crm")
        _ = try setup.secret("wrong")
        let port = try FreePort.next()
        let script = BuiltProducts.packageRoot.appendingPathComponent("deploy/webhooks/receiver.py").path
        let receiver = try TestProcess(
            executable: "/usr/bin/python3",
            arguments: [
                script, "\(port)", setup.directory + "/crm.secret", setup.certificates.serverCertificate, setup.certificates.serverKey,
            ])
        defer { receiver.send(SIGKILL) }
        #expect(await receiver.waitForLine(in: .stdout) { $0 == "listening on \(port)" } != nil, "\(receiver.transcript)")
        let url = "https://127.0.0.1:\(port)/hooks/beaconmesh"
        let run = try await CoordinatorRun.start(
            extraConfig: """
                metrics: "127.0.0.1:\(setup.metricsPort)"
                webhooks:
                \(setup.endpoint("crm", url: url, events: Self.allTypes))
                \(setup.endpoint("wrong", url: url, events: "arrived"))
                """, directory: setup.directory)
        // The endpoint "wrong" signs with a secret of its own: the receiver refuses, the coordinator does not retry.
        try await Self.anasVisit(run)
        let published = run.events.lines.compactMap(Mesh.payload(of:))
        let ids = published.compactMap { $0["id"] as? String }
        #expect(await setup.metric(#"beaconmesh_webhook_deliveries_total{endpoint="crm",result="delivered"}"#, reaches: Double(ids.count)))
        #expect(await setup.metric(#"beaconmesh_webhook_deliveries_total{endpoint="wrong",result="refused"}"#, reaches: 1))
        let logged = receiver.stdoutLines.filter { !$0.hasPrefix("listening") }
        let arrival = try #require(published.first { $0["type"] as? String == "arrived" }?["id"] as? String)
        #expect(logged.contains("arrived \(arrival) store 1 member ana"), "\(logged)")
        #expect(logged.filter { $0.hasPrefix("refused") } == ["refused \(arrival): bad signature"], "\(logged)")
        #expect(logged.filter { !$0.hasPrefix("refused") }.map { $0.split(separator: " ")[1] }.map(String.init) == ids, "\(logged)")
        print("the receiver's log:\n" + logged.joined(separator: "\n"))
        await run.stop()
    }
}
