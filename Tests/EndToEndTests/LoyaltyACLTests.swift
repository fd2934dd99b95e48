import BeaconMeshTesting
import Foundation
import Testing

/// The loyalty loop's rights on the production broker profile, with credentials from the real
/// `beacon-coordinator provision` and the real mosquitto clients: member apps publish only their own ranging reports
/// and read only their own offers and check-ins; only a till (and only its own store's) publishes check-in requests.
///
/// As in `BrokerSecurityTests`, mosquitto 2.0 drops a denied publish without telling the publisher: a denial is
/// proved by an authorised subscriber that never receives the message while a control message sent after it does.
@Suite("broker security: member apps and tills on the production profile with a real mosquitto", .serialized)
struct LoyaltyACLTests {
    static let tree = "beaconmesh/v1"

    /// A running production broker with credentials for a node, a monitor and a till of store 1, a till of store 2,
    /// the coordinator of stores 1 and 9, a till of store 9 and two members.
    func secureBroker() async throws -> ProfileBroker {
        let broker = try await ProfileBroker()
        for arguments in [
            ["node", "--store", "1", "--department", "10"], ["monitor", "--store", "1"], ["monitor", "--store", "1", "--till"],
            ["monitor", "--store", "2", "--till"], ["monitor", "--store", "9", "--till"],
            ["coordinator", "--id", "e2e", "--store", "1", "--store", "9"], ["member", "ana"], ["member", "ben"],
        ] {
            try await broker.provision(arguments)
        }
        try await broker.start()
        return broker
    }

    func publish(_ broker: ProfileBroker, as user: String, _ topic: String, _ message: String) async throws {
        try await MosquittoClients.publish(
            port: broker.port, topic: "\(Self.tree)/\(topic)", string: message, qos: 1,
            extraArguments: try broker.login(user))
    }

    /// Publishes a last message (as the coordinator) on each member's `offers` and waits until every subscription
    /// that reads it has it: the broker hands a subscriber its messages in order, so whatever the test published
    /// before would have arrived by then. `messages` leaves these last messages out.
    func barrier(_ broker: ProfileBroker, _ waits: [(Subscription, member: String)]) async throws {
        for member in Set(waits.map(\.member)).sorted() {
            try await publish(broker, as: "coordinator-e2e", "members/\(member)/offers", "barrier")
        }
        for (subscription, member) in waits {
            let suffix = "members/\(member)/offers barrier"
            #expect(await subscription.waitForLine { $0.hasSuffix(suffix) } != nil, "\(subscription.lines)\n\(broker.log)")
        }
    }

    func messages(_ subscription: Subscription) -> [String] {
        subscription.lines.filter { !$0.hasSuffix("/offers barrier") }
    }

    func subscribe(_ broker: ProfileBroker, as user: String, _ filters: [String]) async throws -> Subscription {
        try await MosquittoClients.subscribe(
            port: broker.port, filters: filters.map { "\(Self.tree)/\($0)" }, qos: 1,
            extraArguments: try broker.login(user))
    }

    @Test("provision monitor --till makes till-<store>; provision member says what the app may do")
    func provisionOutput() async throws {
        let broker = try await ProfileBroker()
        let till = try await broker.provision(["monitor", "--store", "9", "--till"])
        #expect(till.first?.hasPrefix("till-9: created; password in ") == true, "\(till)")
        let member = try await broker.provision(["member", "ana"])
        #expect(
            member.contains {
                $0.contains(
                    "may publish only \(Self.tree)/stores/+/members/ana/ranging and read only \(Self.tree)/members/ana/offers and \(Self.tree)/members/ana/checkins"
                )
            },
            "\(member)")
        let acl = try String(contentsOfFile: broker.aclFile, encoding: .utf8)
        #expect(acl.contains("user till-9\ntopic read \(Self.tree)/stores/9/#\ntopic write \(Self.tree)/stores/9/checkins\n"), "\(acl)")
    }

    @Test(
        "a member app publishes its own ranging reports in any store, and nothing else: not another member's, not check-ins, events, sightings, offers"
    )
    func memberPublishesOnlyItsRanging() async throws {
        let broker = try await secureBroker()
        let store1 = try await subscribe(broker, as: "monitor-1", ["stores/1/#"])
        let store2 = try await subscribe(broker, as: "till-2", ["stores/2/#"])
        let anasOwn = try await subscribe(broker, as: "ana", ["members/ana/offers", "members/ana/checkins"])
        let bensOwn = try await subscribe(broker, as: "ben", ["members/ben/offers", "members/ben/checkins"])
        for (topic, message) in [
            ("stores/1/members/ben/ranging", "denied: ana ranging as ben"),
            ("stores/1/checkins", "denied: ana check-in request"),
            ("stores/1/events", "denied: ana event"),
            ("stores/1/departments/10/nodes/a/sightings", "denied: ana sightings"),
            ("stores/1/members/ana/ranging/extra", "denied: below her ranging topic"),
            ("members/ana/offers", "denied: ana forged her own offer"),
            ("members/ana/checkins", "denied: ana forged her own check-in"),
            ("members/ben/offers", "denied: ana wrote ben's offer"),
            ("members/ben/checkins", "denied: ana wrote ben's check-in"),
        ] {
            try await publish(broker, as: "ana", topic, message)
        }
        try await publish(broker, as: "ana", "stores/2/members/ana/ranging", "allowed: ana ranging in store 2")
        try await publish(broker, as: "ana", "stores/1/members/ana/ranging", "allowed: ana ranging in store 1")
        #expect(await store1.waitForLine { $0.hasSuffix("allowed: ana ranging in store 1") } != nil, "\(store1.lines)\n\(broker.log)")
        #expect(await store2.waitForLine { $0.hasSuffix("allowed: ana ranging in store 2") } != nil, "\(store2.lines)")
        try await barrier(broker, [(anasOwn, "ana"), (bensOwn, "ben")])
        for subscription in [store1, store2, anasOwn, bensOwn] { await subscription.stop() }
        #expect(store1.lines == ["\(Self.tree)/stores/1/members/ana/ranging allowed: ana ranging in store 1"], "\(store1.lines)")
        #expect(store2.lines == ["\(Self.tree)/stores/2/members/ana/ranging allowed: ana ranging in store 2"], "\(store2.lines)")
        #expect(messages(anasOwn).isEmpty && messages(bensOwn).isEmpty, "\(anasOwn.lines) \(bensOwn.lines)")
    }

    @Test("a member app reads only its own offers and check-ins, also through wildcards; the coordinator writes both")
    func memberReadsOnlyItsOwn() async throws {
        let broker = try await secureBroker()
        let anaWildcards = try await subscribe(broker, as: "ana", ["members/+/offers", "members/+/checkins", "members/#"])
        let anaSpying = try await subscribe(
            broker, as: "ana", ["members/ben/checkins", "members/ben/offers", "stores/1/members/ben/ranging", "members/ana/offers"])
        let ben = try await subscribe(broker, as: "ben", ["members/ben/checkins", "members/ben/offers"])
        try await publish(broker, as: "ben", "stores/1/members/ben/ranging", "ben's ranging")
        for member in ["ben", "ana"] {
            try await publish(broker, as: "coordinator-e2e", "members/\(member)/offers", "offer for \(member)")
            try await publish(broker, as: "coordinator-e2e", "members/\(member)/checkins", "check-in of \(member)")
        }
        #expect(await ben.waitForLine { $0.hasSuffix("check-in of ben") } != nil, "\(ben.lines)\n\(broker.log)")
        #expect(await anaWildcards.waitForLine { $0.hasSuffix("check-in of ana") } != nil, "\(anaWildcards.lines)")
        try await barrier(broker, [(anaWildcards, "ana"), (anaSpying, "ana"), (ben, "ben")])
        for subscription in [anaWildcards, anaSpying, ben] { await subscription.stop() }
        #expect(
            Set(messages(anaWildcards)) == [
                "\(Self.tree)/members/ana/offers offer for ana", "\(Self.tree)/members/ana/checkins check-in of ana",
            ], "ana sees only her own: \(anaWildcards.lines)")
        #expect(messages(anaSpying) == ["\(Self.tree)/members/ana/offers offer for ana"], "\(anaSpying.lines)")
        #expect(messages(ben) == ["\(Self.tree)/members/ben/offers offer for ben", "\(Self.tree)/members/ben/checkins check-in of ben"])
    }

    @Test("only a till of the store publishes its check-in requests: not a plain monitor, another store's till, a node, a member")
    func onlyTheStoresTillChecksIn() async throws {
        let broker = try await secureBroker()
        let coordinator = try await subscribe(broker, as: "coordinator-e2e", ["stores/1/checkins", "stores/9/checkins"])
        let store1 = try await subscribe(broker, as: "monitor-1", ["stores/1/#"])
        let ana = try await subscribe(broker, as: "ana", ["members/ana/checkins", "members/ana/offers"])
        for (user, topic, message) in [
            ("monitor-1", "stores/1/checkins", "denied: a plain monitor"),
            ("till-2", "stores/1/checkins", "denied: store 2's till"),
            ("till-9", "stores/1/checkins", "denied: store 9's till"),
            ("node-1-10-a", "stores/1/checkins", "denied: a node"),
            ("ana", "stores/1/checkins", "denied: a member"),
            ("till-1", "stores/9/checkins", "denied: store 1's till in store 9"),
            ("till-1", "stores/1/events", "denied: a till's event"),
            ("till-1", "stores/1/members/ana/ranging", "denied: a till's ranging"),
            ("till-1", "members/ana/checkins", "denied: a till told ana she checked in"),
        ] {
            try await publish(broker, as: user, topic, message)
        }
        try await publish(broker, as: "till-9", "stores/9/checkins", "allowed: store 9's till")
        try await publish(broker, as: "till-1", "stores/1/checkins", "allowed: store 1's till")
        #expect(await coordinator.waitForLine { $0.hasSuffix("allowed: store 1's till") } != nil, "\(coordinator.lines)\n\(broker.log)")
        #expect(await store1.waitForLine { $0.hasSuffix("allowed: store 1's till") } != nil, "\(store1.lines)")
        try await barrier(broker, [(ana, "ana")])
        for subscription in [coordinator, store1, ana] { await subscription.stop() }
        #expect(
            Set(coordinator.lines) == [
                "\(Self.tree)/stores/9/checkins allowed: store 9's till", "\(Self.tree)/stores/1/checkins allowed: store 1's till",
            ], "\(coordinator.lines)")
        #expect(store1.lines == ["\(Self.tree)/stores/1/checkins allowed: store 1's till"], "\(store1.lines)")
        #expect(messages(ana).isEmpty, "\(ana.lines)")
    }

    @Test("over TLS with provisioned credentials: ana's phone is greeted at the café, gets its offer, and the till's check-in reaches it")
    func phoneAndTillOverTLS() async throws {
        let broker = try await secureBroker()
        let directory = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt\nana,Ana Souza,Flat white,,,4,,\n"
            .write(toFile: directory + "/members.csv", atomically: true, encoding: .utf8)
        let stores = PhoneRun.config.replacingOccurrences(
            of: "{id: 6, name: Counter, till: true}",
            with: "{id: 6, name: Counter, till: true, promo: {id: latte, title: \"Free Latte!\", message: \"Come on down\", dwell: 0s}}")
        try """
        id: e2e
        broker: {url: "\(broker.url)", username: coordinator-e2e, passwordFile: "\(broker.credentialFile(of: "coordinator-e2e"))", cafile: "\(broker.caFile)"}
        database: mesh.sqlite
        members: members.csv
        \(stores)
        """.write(toFile: directory + "/coordinator.yaml", atomically: true, encoding: .utf8)
        let events = try await subscribe(broker, as: "till-9", ["stores/9/events"])
        let coordinator = try TestProcess(
            executable: try BuiltProducts.path(of: "beacon-coordinator"),
            arguments: ["run", "--config", directory + "/coordinator.yaml"], currentDirectory: directory)
        defer { coordinator.send(SIGKILL) }
        try #require(
            await coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") } != nil,
            "\(coordinator.transcript)\n\(broker.log)")

        let phone = try Mesh.program(
            "beacon-phone",
            [
                "--member", "ana", "--store", "9", "--route", "6", "--dwell", "60s", "--broker", broker.url, "--cafile", broker.caFile,
                "--username", "ana", "--password-file", broker.credentialFile(of: "ana"),
            ])
        defer { phone.send(SIGKILL) }
        #expect(
            await events.waitForLine(timeout: .seconds(10)) { $0.contains("\"type\":\"arrived\"") && $0.contains("\"ana\"") } != nil,
            "ranging over TLS greets ana:\n\(phone.transcript)\n\(coordinator.transcript)\n\(broker.log)")
        #expect(
            await phone.waitForLine(in: .stdout, timeout: .seconds(5)) { $0.hasSuffix("  offer     Counter  Free Latte! — Come on down") }
                != nil,
            "\(phone.transcript)")
        let request = #"{"v":1,"id":"tls-1","member":"ana","department":6,"till":"counter-1","at":\#(Mesh.nowMilliseconds)}"#
        try await publish(broker, as: "till-9", "stores/9/checkins", request)
        #expect(
            await phone.waitForLine(in: .stdout, timeout: .seconds(5)) { $0.hasSuffix("  check-in  at Counter (#1)") } != nil,
            "\(phone.transcript)\n\(events.lines)")
        #expect(await phone.stop(with: SIGTERM, timeout: .seconds(10)) == .exited(0), "\(phone.transcript)")
        #expect(await coordinator.stop(with: SIGTERM, timeout: .seconds(15)) == .exited(0), "\(coordinator.transcript)")
        await events.stop()
    }
}
