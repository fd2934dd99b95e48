import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import Foundation
import Testing

@testable import BeaconMeshCoordinator

@Suite("Coordinator config webhooks, signatures and routes")
struct WebhookConfigTests {
    private func config(_ webhooks: String) throws(ConfigurationError) -> CoordinatorConfiguration {
        try CoordinatorConfiguration.parse(
            yaml: """
                stores:
                  - id: 1
                    departments: [{id: 10, name: Womenswear}]
                webhooks:
                \(webhooks)
                """, file: "c.yaml", defaultID: "x")
    }

    @Test("endpoints are read with their events, personalData (false by default) and cafile")
    func endpoints() throws {
        let endpoints = try config(
            """
              - {name: crm, url: "https://crm.example.com/hooks", secretFile: crm.secret, events: [arrived, alert], personalData: true, cafile: ca.pem}
              - {name: local, url: "http://127.0.0.1:8080/in", secretFile: s, events: [member-forgotten, checkin]}
              - {name: local6, url: "http://[::1]:8080/in", secretFile: s, events: [node]}
            """
        ).webhooks
        #expect(endpoints.map(\.name) == ["crm", "local", "local6"])
        #expect(endpoints[0].events == [.arrived, .alert] && endpoints[0].personalData && endpoints[0].cafile == "ca.pem")
        #expect(endpoints[1].events == [.memberForgotten, .checkin] && !endpoints[1].personalData && endpoints[1].cafile == nil)
    }

    @Test(
        "a URL that is not https (plain http only to loopback), an unknown event type, a name given twice: one line naming the key",
        arguments: [
            (
                #"- {name: a, url: "http://crm.example.com/h", secretFile: s, events: [arrived]}"#,
                "c.yaml:5: webhooks[0].url must be https://"
            ),
            (#"- {name: a, url: "http://127.0.0.1.example.com/h", secretFile: s, events: [arrived]}"#, "webhooks[0].url must be https://"),
            (#"- {name: a, url: "ftp://x/h", secretFile: s, events: [arrived]}"#, "webhooks[0].url must be an https:// URL"),
            (#"- {name: a, url: "https://x/h", secretFile: s, events: [arived]}"#, "webhooks[0].events has 'arived', which is not one of"),
            (#"- {name: a, url: "https://x/h", secretFile: s, events: []}"#, "webhooks[0].events must name at least one"),
            (#"- {name: a, url: "https://x/h", events: [left]}"#, "webhooks[0] needs name, url, secretFile and events"),
            (
                #"- {name: a, url: "https://x/h", secretFile: s, events: [left], personalData: yes please}"#,
                "personalData must be true or false"
            ),
            (#"- {name: a, url: "https://x/h", secretFile: s, events: [left], retries: 3}"#, "unknown key 'retries' in webhooks[0]"),
            (
                "- {name: a, url: \"https://x/h\", secretFile: s, events: [left]}\n  - {name: a, url: \"https://y/h\", secretFile: s, events: [left]}",
                "webhooks[1].name 'a' appears twice"
            ),
        ])
    func refused(yaml: String, message: String) {
        #expect {
            _ = try config("  " + yaml)
        } throws: { error in
            "\(error)".contains(message) && !"\(error)".contains("\n")
        }
    }

    @Test("the secret is read at load (its final line break dropped); an unreadable or empty secretFile is an error naming the key")
    func secrets() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/c.yaml"
        func write(_ secretFile: String) throws {
            try """
            stores: [{id: 1, departments: [{id: 10, name: A}]}]
            webhooks: [{name: crm, url: "https://x/h", secretFile: \(secretFile), events: [arrived]}]
            """.write(toFile: path, atomically: true, encoding: .utf8)
        }
        try "s3cret\n".write(toFile: folder + "/crm.secret", atomically: true, encoding: .utf8)
        try write("crm.secret")
        let loaded = try CoordinatorConfiguration.load(path: path, defaultID: "x").webhooks[0]
        #expect(loaded.secret == Array("s3cret".utf8) && loaded.secretFile == folder + "/crm.secret")
        try write("missing.secret")
        #expect(throws: ConfigurationError.self) { try CoordinatorConfiguration.load(path: path, defaultID: "x") }
        #expect { try CoordinatorConfiguration.load(path: path, defaultID: "x") } throws: {
            "\($0)".contains("webhooks[0].secretFile cannot be read")
        }
        try "\n".write(toFile: folder + "/empty.secret", atomically: true, encoding: .utf8)
        try write("empty.secret")
        #expect { try CoordinatorConfiguration.load(path: path, defaultID: "x") } throws: {
            "\($0)".contains("webhooks[0].secretFile is empty")
        }
    }

    @Test("the signature is the hex HMAC-SHA256 of \"{timestamp}.{body}\" (the value Python's hmac module gives)")
    func signature() {
        let body = Array(#"{"v":1,"id":"e1"}"#.utf8)
        #expect(
            WebhookSignature.header(secret: Array("whsec-test".utf8), timestamp: 1_700_000_000, body: body)
                == "sha256=328758c8aeb35baa9b2ae59fb3c206bf2c11b75d01e383464d27f1dff69fb54d")
        #expect(WebhookSignature.header(secret: Array("whsec-other".utf8), timestamp: 1_700_000_000, body: body).count == 71)
        #expect(
            WebhookSignature.header(secret: Array("whsec-test".utf8), timestamp: 1_700_000_001, body: body)
                != WebhookSignature.header(secret: Array("whsec-test".utf8), timestamp: 1_700_000_000, body: body))
    }

    @Test(
        "routes: each endpoint gets the types it asked for; without personalData a member is their id and no greeting or name; a check-in once"
    )
    func routes() {
        var crm = WebhookEndpoint(name: "crm", url: "https://x", secretFile: "s", events: [.arrived, .alert])
        crm.personalData = true
        let analytics = WebhookEndpoint(name: "bi", url: "https://y", secretFile: "s", events: Set(WebhookEndpoint.EventType.allCases))
        let routes = WebhookRoutes(endpoints: [crm, analytics], topics: Topics())
        let ana = MemberProfile(
            id: "ana", name: "Ana Souza", favoriteDrink: "Flat white", visits: 3, lastVisitAt: nil, photo: "data:image/png;base64,AAAA")
        let arrived = StoreEvent(
            id: "c/1", store: 1, at: Timestamp(milliseconds: 5),
            kind: .arrived(
                member: ana, department: 10, departmentName: "Womenswear", visit: VisitNumber(number: 3, previousAt: nil),
                greeting: "Welcome back, Ana Souza!", evidence: nil))
        let checkin = StoreEvent(
            id: "c/2", store: 1, at: Timestamp(milliseconds: 6),
            kind: .checkin(member: ana, department: 6, departmentName: "Counter", request: "r1", checkins: 2, verified: true))
        var alert = Alert(
            rule: "vip", kind: .memberArrived, store: 1, at: Timestamp(milliseconds: 5), member: ana,
            text: "Ana Souza (tier vip) arrived in Womenswear")
        alert.id = "c/3"
        let publications = [
            Publication(topic: Topics().events(store: 1), message: .event(arrived), qos: .atLeastOnce, retain: false),
            Publication(topic: Topics().events(store: 1), message: .event(checkin), qos: .atLeastOnce, retain: false),
            Publication(topic: Topics().checkins(member: "ana"), message: .event(checkin), qos: .atLeastOnce, retain: false),
            Publication(topic: Topics().alerts(store: 1), message: .alert(alert), qos: .atLeastOnce, retain: false),
        ]
        let deliveries = routes.deliveries(for: publications, at: Timestamp(milliseconds: 9))
        #expect(deliveries.map { "\($0.endpoint) \($0.eventID)" } == ["crm c/1", "bi c/1", "bi c/2", "crm c/3", "bi c/3"])
        let bodies = deliveries.map { String(decoding: $0.body, as: UTF8.self) }
        #expect(bodies[0].contains("Ana Souza") && bodies[0].contains("greeting") && deliveries[0].personalDataOf == "ana")
        for (delivery, body) in zip(deliveries, bodies) where delivery.endpoint == "bi" {
            #expect(
                !body.contains("Ana") && !body.contains("Flat white") && !body.contains("photo") && !body.contains("greeting"), "\(body)")
            #expect(body.contains(#""member":{"id":"ana"}"#) && delivery.personalDataOf == nil, "\(body)")
        }
        #expect(bodies[4].contains(#""text":"ana (tier vip) arrived in Womenswear""#), "\(bodies[4])")
        let forgotten = routes.deliveries(
            for: RegistryEvent(id: "c-registry-7", kind: .forgotten, member: "ana", at: Timestamp(milliseconds: 1)), store: 1,
            at: Timestamp(milliseconds: 2))
        #expect(forgotten.map(\.endpoint) == ["bi"] && forgotten[0].store == 1)
    }
}
