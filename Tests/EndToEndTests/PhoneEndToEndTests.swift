import BeaconMeshTesting
import Foundation
import Testing

/// A broker, a coordinator and `beacon-phone` — and no scanner: the member is heard only through their phone.
struct PhoneRun {
    let broker: MosquittoBroker
    let directory: String
    let coordinator: TestProcess
    let events: Subscription

    /// Store 1 (Clothing 10 and Housewares 20, both with a promo; Automotive 30) and the café, store 9, whose
    /// Counter (6) is a till; short timings. Ana has a fob; Mia has no beacon at all.
    static let config = """
        presence: {staleAfter: 3s, exitAfter: 2s, switchMargin: 4, switchDwell: 1s, visitGap: 20m}
        promos: {dwell: 1s, cooldown: 24h}
        stores:
          - id: 1
            name: San Francisco
            greeting: "Welcome back, {name}! The usual {favoriteDrink}?"
            departments:
              - {id: 10, name: Clothing, promo: {id: shirts, title: "Promoção de blusas!", message: "Ganhe R$10!"}}
              - {id: 20, name: Housewares, promo: {id: kitchen, title: "Voucher de Desconto!", message: "Kit de cozinha com 20% de desconto"}}
              - {id: 30, name: Automotive}
          - id: 9
            name: PubNub Cafe
            departments:
              - {id: 6, name: Counter, till: true}
        """

    static func start() async throws -> PhoneRun {
        let broker = try await MosquittoBroker.start()
        let directory = try Mesh.temporaryDirectory()
        let members = """
            id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt
            ana,Ana Souza,Flat white,ibeacon:\(Mesh.uuid):1:1,,11,1763683200000,1735689600000
            mia,Mia Costa,Matcha latte,,,0,,
            """
        try members.write(toFile: directory + "/members.csv", atomically: true, encoding: .utf8)
        let path = directory + "/coordinator.yaml"
        try ("id: phone-e2e\nbroker: {url: \"\(broker.url)\"}\ndatabase: mesh.sqlite\nmembers: members.csv\n" + config)
            .write(toFile: path, atomically: true, encoding: .utf8)
        let events = try await MosquittoClients.subscribe(port: broker.port, filter: "beaconmesh/v1/stores/+/events", qos: 1)
        let coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", path, "--health-interval", "500ms"])
        let running = await coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") }
        try #require(running != nil, "\(coordinator.transcript)")
        return PhoneRun(broker: broker, directory: directory, coordinator: coordinator, events: events)
    }

    func phone(_ arguments: [String]) throws -> TestProcess {
        try Mesh.program("beacon-phone", arguments + ["--broker", broker.url])
    }

    /// `arrived 10`, `moved 10→20`, `promo kitchen`, `left 20`… of `member`, in the order published.
    func story(of member: String) -> [String] {
        events.lines.compactMap(Mesh.payload(of:)).filter { ($0["member"] as? [String: Any])?["id"] as? String == member }
            .compactMap { event in
                switch event["type"] as? String {
                case "arrived": "arrived \(event["department"] as? Int ?? -1)"
                case "moved": "moved \(event["from"] as? Int ?? -1)→\(event["to"] as? Int ?? -1)"
                case "promo": "promo \((event["promo"] as? [String: Any])?["id"] as? String ?? "?")"
                case "left": "left \(event["department"] as? Int ?? -1)"
                case "checkin": "checkin \(event["checkins"] as? Int ?? -1)"
                default: nil
                }
            }
    }

    func waitForEvent(_ type: String, of member: String, timeout: Duration) async -> [String: Any]? {
        guard
            let line = await events.waitForLine(
                timeout: timeout,
                where: {
                    $0.contains("\"type\":\"\(type)\"") && $0.contains("\"id\":\"\(member)\"")
                })
        else { return nil }
        return Mesh.payload(of: line)
    }

    func stop() async {
        _ = await coordinator.stop(with: SIGTERM, timeout: .seconds(10))
        await events.stop()
        await broker.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

@Suite("beacon-phone end to end: a member heard only through their phone", .serialized)
struct PhoneEndToEndTests {
    @Test("a phone walking Clothing → Housewares, no scanner: arrived, moved, the Housewares offer on the phone, left after exitAfter")
    func phoneOnlyVisit() async throws {
        let run = try await PhoneRun.start()
        let ranging = try await MosquittoClients.subscribe(
            port: run.broker.port, filter: "beaconmesh/v1/stores/1/members/ana/ranging", qos: 1)
        let phone = try run.phone(["--member", "ana", "--store", "1", "--route", "10,20", "--dwell", "4s"])
        defer { phone.send(SIGKILL) }

        let arrived = try #require(
            await run.waitForEvent("arrived", of: "ana", timeout: .seconds(8)), "\(phone.transcript)\n\(run.coordinator.transcript)")
        #expect(arrived["department"] as? Int == 10)
        #expect(arrived["departmentName"] as? String == "Clothing")
        #expect(arrived["greeting"] as? String == "Welcome back, Ana Souza! The usual Flat white?")
        let moved = try #require(await run.waitForEvent("moved", of: "ana", timeout: .seconds(8)), "\(run.events.lines)")
        #expect(moved["from"] as? Int == 10 && moved["to"] as? Int == 20)
        #expect(moved["toName"] as? String == "Housewares")

        let offer = await phone.waitForLine(in: .stdout, timeout: .seconds(6)) { $0.contains("offer") && $0.contains("Housewares") }
        #expect(
            offer?.hasSuffix("  offer     Housewares  Voucher de Desconto! — Kit de cozinha com 20% de desconto") == true,
            "\(phone.transcript)")
        #expect(
            phone.stdoutLines.contains { $0.hasSuffix("  offer     Clothing  Promoção de blusas! — Ganhe R$10!") }, "\(phone.transcript)")

        // The route ends 8 s after the start: the phone says it ranges nothing, and the visit ends exitAfter (2 s)
        // after it was last heard (the phone's clock is this machine's here, so its sentAt says when).
        let left = try #require(await run.waitForEvent("left", of: "ana", timeout: .seconds(14)), "\(run.events.lines)")
        let reports = ranging.lines.compactMap(Mesh.payload(of:))
        #expect((reports.last?["beacons"] as? [Any])?.isEmpty == true, "the phone said it left: \(ranging.lines.suffix(2))")
        let lastHeard = try #require(reports.last { ($0["beacons"] as? [Any])?.isEmpty == false }?["sentAt"] as? Int)
        let leftAfter = (left["at"] as? Int ?? 0) - lastHeard
        #expect((1900...3500).contains(leftAfter), "left exitAfter after last heard: \(leftAfter) ms")
        #expect(left["department"] as? Int == 20)
        #expect((left["dwellSeconds"] as? Int).map { (6...11).contains($0) } == true, "\(left)")
        #expect(run.story(of: "ana") == ["arrived 10", "promo shirts", "moved 10→20", "promo kitchen", "left 20"], "\(run.events.lines)")
        #expect(phone.stdoutLines.count == 2, "one line per offer, nothing else: \(phone.stdoutLines)")

        #expect(await phone.stop(with: SIGINT, timeout: .seconds(10)) == .exited(0), "\(phone.transcript)")
        await ranging.stop()
        await run.stop()
    }

    @Test("a phone whose clock is 3 h behind still gets greeted; its reports carry its own clock")
    func phoneClockOff() async throws {
        let run = try await PhoneRun.start()
        let ranging = try await MosquittoClients.subscribe(
            port: run.broker.port, filter: "beaconmesh/v1/stores/1/members/+/ranging", qos: 1)
        let phone = try run.phone(["--member", "mia", "--store", "1", "--route", "30", "--dwell", "30s", "--clock-offset", "-3h"])
        defer { phone.send(SIGKILL) }
        let arrived = try #require(
            await run.waitForEvent("arrived", of: "mia", timeout: .seconds(8)), "\(phone.transcript)\n\(run.coordinator.transcript)")
        #expect(arrived["departmentName"] as? String == "Automotive")
        let report = try #require(
            await ranging.waitForLine(timeout: .seconds(3)) { $0.contains("\"member\":\"mia\"") }.flatMap(Mesh.payload(of:)))
        let sentAt = try #require(report["sentAt"] as? Int64 ?? (report["sentAt"] as? Int).map(Int64.init))
        let behind = Mesh.nowMilliseconds - sentAt
        #expect(abs(behind - 3 * 3_600_000) < 60_000, "sentAt is 3 h behind: \(behind) ms")
        // Readings stay fresh: a few seconds on, Mia has not been counted out (staleAfter 3 s, exitAfter 2 s).
        try await Task.sleep(for: .seconds(5))
        #expect(run.story(of: "mia") == ["arrived 30"], "\(run.events.lines)\n\(run.coordinator.transcript)")
        #expect(!run.coordinator.stderrLines.contains { $0.contains("dropped a message") }, "\(run.coordinator.transcript)")
        // The coordinator's health counts the reports it applied.
        let health = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/coordinators/phone-e2e/health")
        let counted = await health.waitForLine(timeout: .seconds(3)) { _ in true }.flatMap(Mesh.payload(of:))
        await health.stop()
        let published = ranging.lines.filter { $0.contains("\"member\":\"mia\"") }.count
        #expect(
            (counted?["rangingReports"] as? Int).map { $0 >= published - 1 && $0 <= published + 2 } == true,
            "health rangingReports \(String(describing: counted?["rangingReports"])) for \(published) reports published")
        #expect((counted?["dropped"] as? [String: Any])?.isEmpty == true, "\(String(describing: counted))")
        #expect(await phone.stop(with: SIGTERM, timeout: .seconds(10)) == .exited(0), "\(phone.transcript)")
        await ranging.stop()
        await run.stop()
    }

    @Test("at the café till a check-in request for the phone's member is printed by the phone: where, and the count")
    func checkinReachesThePhone() async throws {
        let run = try await PhoneRun.start()
        let phone = try run.phone(["--member", "ana", "--store", "9", "--route", "6", "--dwell", "60s"])
        defer { phone.send(SIGKILL) }
        #expect(
            await run.waitForEvent("arrived", of: "ana", timeout: .seconds(8)) != nil, "\(phone.transcript)\n\(run.coordinator.transcript)")
        let request = #"{"v":1,"id":"req-1","member":"ana","department":6,"till":"counter-1","at":\#(Mesh.nowMilliseconds)}"#
        try await MosquittoClients.publish(port: run.broker.port, topic: "beaconmesh/v1/stores/9/checkins", string: request, qos: 1)
        let line = await phone.waitForLine(in: .stdout, timeout: .seconds(5)) { $0.contains("check-in") }
        #expect(line?.hasSuffix("  check-in  at Counter (#1)") == true, "\(phone.transcript)\n\(run.events.lines)")
        // The same request again (a redelivery) is counted once: no line of its own before the next request's (#2).
        try await MosquittoClients.publish(port: run.broker.port, topic: "beaconmesh/v1/stores/9/checkins", string: request, qos: 1)
        let next = request.replacingOccurrences(of: "req-1", with: "req-2")
        try await MosquittoClients.publish(port: run.broker.port, topic: "beaconmesh/v1/stores/9/checkins", string: next, qos: 1)
        #expect(await phone.waitForLine(in: .stdout, timeout: .seconds(5)) { $0.hasSuffix("(#2)") } != nil, "\(phone.transcript)")
        #expect(
            phone.stdoutLines.filter { $0.contains("check-in") }.map { String($0.suffix(4)) } == ["(#1)", "(#2)"],
            "\(phone.stdoutLines)")
        #expect(await phone.stop(with: SIGTERM, timeout: .seconds(10)) == .exited(0))
        await run.stop()
    }

    @Test("malformed offers and check-ins: one stderr line each, ignored; the phone goes on; SIGTERM ends the walk with an empty report")
    func malformedAndShutdown() async throws {
        let broker = try await MosquittoBroker.start()
        let ranging = try await MosquittoClients.subscribe(port: broker.port, filter: "beaconmesh/v1/stores/1/members/ana/ranging", qos: 1)
        let phone = try Mesh.program(
            "beacon-phone", ["--member", "ana", "--store", "1", "--route", "10,20", "--dwell", "60s", "--broker", broker.url])
        defer { phone.send(SIGKILL) }
        #expect(await phone.waitForLine(in: .stderr, timeout: .seconds(10)) { $0.contains("phone running") } != nil, "\(phone.transcript)")
        #expect(await ranging.waitForLine(timeout: .seconds(5)) { _ in true } != nil)
        for (topic, payload) in [("offers", "not json"), ("checkins", #"{"v":1,"type":"arrived"}"#), ("offers", #"{"v":9}"#)] {
            try await MosquittoClients.publish(port: broker.port, topic: "beaconmesh/v1/members/ana/\(topic)", string: payload, qos: 1)
        }
        let offer =
            #"{"v":1,"id":"o1","store":1,"department":10,"departmentName":"Clothing","promo":{"id":"s","title":"Sale","message":"Now"},"at":\#(Mesh.nowMilliseconds)}"#
        try await MosquittoClients.publish(port: broker.port, topic: "beaconmesh/v1/members/ana/offers", string: offer, qos: 1)
        try await MosquittoClients.publish(port: broker.port, topic: "beaconmesh/v1/members/ben/offers", string: offer, qos: 1)
        #expect(
            await phone.waitForLine(in: .stdout, timeout: .seconds(5)) { $0.hasSuffix("  offer     Clothing  Sale — Now") } != nil,
            "\(phone.transcript)")
        let ignored = phone.stderrLines.filter { $0.hasPrefix("beacon-phone: ignored a message on beaconmesh/v1/members/ana/") }
        #expect(ignored.count == 3, "\(phone.transcript)")
        #expect(phone.stdoutLines.count == 1, "Ben's offer is not Ana's: \(phone.stdoutLines)")
        #expect(await eventually(timeout: .seconds(10)) { ranging.lines.count >= 3 }, "about one a second: \(ranging.lines)")

        #expect(await phone.stop(with: SIGTERM, timeout: .seconds(10)) == .exited(0), "\(phone.transcript)")
        // Its last report, sent before it exits, ranges nothing.
        #expect(await ranging.waitForLine(timeout: .seconds(5)) { $0.contains(#""beacons":[]"#) } != nil, "\(ranging.lines.suffix(2))")
        await ranging.stop()
        let reports = ranging.lines.compactMap(Mesh.payload(of:))
        #expect(reports.count >= 3, "about one a second: \(ranging.lines)")
        #expect(reports.map { $0["seq"] as? Int ?? -1 } == Array(1...reports.count), "seq from 1, one by one")
        #expect(Set(reports.compactMap { $0["session"] as? String }).count == 1)
        let first = try #require(reports.first?["beacons"] as? [[String: Any]])
        #expect(first.first?["department"] as? Int == 10 && first.first?["proximity"] as? String == "near", "\(first)")
        #expect(first.dropFirst().map { $0["department"] as? Int } == [20] && first.last?["proximity"] as? String == "far", "\(first)")
        #expect(
            (reports.last?["beacons"] as? [Any])?.isEmpty == true,
            "the last report says the phone ranges nothing: \(ranging.lines.suffix(2))")
        await broker.stop()
    }

    @Test("beacon-phone answers --help; a bad flag is one line and exit 2")
    func commandLine() async throws {
        let help = try Mesh.program("beacon-phone", ["--help"])
        #expect(await help.waitForExit() == .exited(0))
        #expect(help.stdoutLines.contains { $0.hasPrefix("USAGE: beacon-phone --member <ID> --store <N>") }, "\(help.transcript)")
        let bad = try Mesh.program("beacon-phone", ["--member", "ana", "--store", "1", "--dwell", "forever"])
        #expect(await bad.waitForExit() == .exited(2))
        #expect(bad.stderrLines.count == 1 && bad.stderrLines.first?.hasPrefix("beacon-phone: ") == true, "\(bad.transcript)")
        #expect(bad.stdoutLines.isEmpty)
    }
}
