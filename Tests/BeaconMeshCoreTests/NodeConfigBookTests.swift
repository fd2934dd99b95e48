import BeaconMeshCore
import Testing

/// The contract's "Node config" rules, decided purely: what a node applies, refuses and reports.
@Suite("Node config, decided purely")
struct NodeConfigBookTests {
    static let restartKeys: Set<String> = ["source", "broker", "store"]

    static func base() -> NodeSettings {
        var settings = NodeSettings()
        settings.rssiAdjustment = 0
        settings.minRssi = -127
        settings.flush = .milliseconds(500)
        settings.logLevel = "info"
        return settings
    }

    static func document(_ revision: Int64, _ entries: [(String, NodeSettingValue?)]) -> NodeConfigBook.Message {
        .document(
            NodeConfigDocument(
                revision: revision, at: Timestamp(milliseconds: 1),
                settings: entries.map { NodeConfigDocument.Entry(key: $0.0, value: $0.1) }))
    }

    @Test("the node's own settings, then the store's config, then its own config: each key overrides the one before")
    func levelsOverride() {
        var book = NodeConfigBook(base: Self.base(), restartKeys: Self.restartKeys)
        #expect(book.receive(Self.document(3, [("rssiAdjustment", .number(4)), ("minRssi", .number(-90))]), level: .store).changed)
        #expect(book.receive(Self.document(1, [("rssiAdjustment", .number(-2))]), level: .node).changed)
        #expect(book.effective.rssiAdjustment == -2)
        #expect(book.effective.minRssi == -90)
        #expect(book.effective.flush == .milliseconds(500))
        #expect(book.reports.store == NodeConfigReport(revision: 3, state: .applied))
        #expect(book.reports.node == NodeConfigReport(revision: 1, state: .applied))
        // Taking the node's level away brings the store's value back.
        #expect(book.receive(.removed, level: .node).changed)
        #expect(book.effective.rssiAdjustment == 4)
        #expect(book.reports.node == nil)
    }

    @Test("a config with an unknown key, a wrong type or an out-of-range value is refused whole, naming the key")
    func refusedWhole() {
        var book = NodeConfigBook(base: Self.base(), restartKeys: Self.restartKeys)
        _ = book.receive(Self.document(2, [("rssiAdjustment", .number(3))]), level: .store)
        let cases: [([(String, NodeSettingValue?)], String)] = [
            ([("rssiAdjustment", .number(5)), ("colour", .text("red"))], "colour is not a node config setting"),
            ([("rssiAdjustment", .text("loud"))], "rssiAdjustment must be a number of dB from -30 to 30"),
            ([("rssiAdjustment", .number(31))], "rssiAdjustment must be a number of dB from -30 to 30"),
            ([("flush", .text("50ms"))], "flush must be a duration from 100ms to 10s"),
            ([("uuid", .list(["not-a-uuid"]))], "uuid must be a list of UUIDs (8-4-4-4-12 hex digits)"),
            ([("source", .text("hci1"))], "source needs a restart"),
            ([("logLevel", .text("loud"))], "logLevel must be one of trace, debug, info, notice, warning, error, critical"),
            ([("measuredPower", .number(-59.5))], "measuredPower must be a whole number of dBm from -127 to 0"),
            ([("advertise", nil)], "advertise must be true or false"),
        ]
        for (revision, (entries, reason)) in cases.enumerated() {
            let outcome = book.receive(Self.document(Int64(3 + revision), entries), level: .store)
            #expect(!outcome.changed)
            #expect(outcome.refusalToLog?.hasSuffix(reason) == true, "\(entries)")
            #expect(book.reports.store?.state == .refused)
            #expect(book.reports.store?.error == reason)
            #expect(book.effective.rssiAdjustment == 3, "the node keeps what it had")
        }
    }

    @Test("a revision lower than the applied one is refused; the same refusal is logged once however often it comes")
    func lowerRevision() {
        var book = NodeConfigBook(base: Self.base())
        _ = book.receive(Self.document(7, [("minRssi", .number(-80))]), level: .store)
        let first = book.receive(Self.document(6, [("minRssi", .number(-70))]), level: .store)
        #expect(first.refusalToLog == "store node config revision 6 refused: revision 6 is lower than the applied revision 7")
        #expect(book.effective.minRssi == -80)
        let again = book.receive(Self.document(6, [("minRssi", .number(-70))]), level: .store)
        #expect(again.refusalToLog == nil)
        // The same revision again (a reconnection's retained copy) is taken; a higher one applies.
        #expect(!book.receive(Self.document(7, [("minRssi", .number(-80))]), level: .store).changed)
        #expect(book.reports.store == NodeConfigReport(revision: 7, state: .applied))
        #expect(book.receive(Self.document(8, [("minRssi", .number(-75))]), level: .store).changed)
        // A node that restarted has a new book: any revision applies.
        var restarted = NodeConfigBook(base: Self.base())
        #expect(restarted.receive(Self.document(2, [("minRssi", .number(-70))]), level: .store).changed)
    }

    @Test("an unreadable payload is refused with its reason and the revision when it could be read; an empty settings takes the level away")
    func unreadableAndEmpty() {
        var book = NodeConfigBook(base: Self.base())
        _ = book.receive(Self.document(4, [("flush", .text("1s"))]), level: .node)
        _ = book.receive(.unreadable(reason: "not valid JSON (unexpected end)", revision: nil), level: .node)
        #expect(book.reports.node == NodeConfigReport(revision: 4, state: .refused, error: "not valid JSON (unexpected end)"))
        #expect(book.effective.flush == .seconds(1))
        #expect(book.receive(Self.document(5, []), level: .node).changed)
        #expect(book.reports.node == nil)
        #expect(book.effective.flush == .milliseconds(500))
    }

    @Test("a setting the node cannot take where it is (advertising without a radio) is refused with why")
    func situationalRefusal() {
        var book = NodeConfigBook(
            base: Self.base(), refusedValues: { key, value in key == .advertise && value == .bool(true) ? "needs an hciN source" : nil })
        let outcome = book.receive(Self.document(1, [("advertise", .bool(true))]), level: .store)
        #expect(outcome.refusalToLog == "store node config revision 1 refused: advertise needs an hciN source")
        #expect(book.receive(Self.document(2, [("advertise", .bool(false))]), level: .store).changed)
    }

    @Test("nodes set's VALUE text: numbers, booleans, durations, names and comma-separated UUIDs, ranges checked")
    func valuesFromText() throws {
        var settings = NodeSettings()
        try settings.set(.rssiAdjustment, NodeSettingKey.rssiAdjustment.value(fromText: "-4.5"))
        try settings.set(.advertise, NodeSettingKey.advertise.value(fromText: "true"))
        try settings.set(.flush, NodeSettingKey.flush.value(fromText: "250ms"))
        try settings.set(
            .uuid, NodeSettingKey.uuid.value(fromText: "0CF052C2-97CA-407C-84F8-B62AAC4E9020, 11111111-2222-3333-4444-555555555555"))
        #expect(settings.rssiAdjustment == -4.5)
        #expect(settings.advertise == true)
        #expect(settings.flush == .milliseconds(250))
        #expect(settings.uuid?.map(\.description) == ["0cf052c2-97ca-407c-84f8-b62aac4e9020", "11111111-2222-3333-4444-555555555555"])
        #expect(throws: NodeSettingError.self) { try settings.set(.advertise, NodeSettingKey.advertise.value(fromText: "yes")) }
        #expect(throws: NodeSettingError.self) { try settings.set(.healthInterval, NodeSettingKey.healthInterval.value(fromText: "2s")) }
        #expect(throws: NodeSettingError.self) { try settings.set(.minRssi, NodeSettingKey.minRssi.value(fromText: "5")) }
        #expect(settings.setKeys == [.rssiAdjustment, .uuid, .advertise, .flush])
    }

    @Test("node config topics are built and recognised: the store's and one node's")
    func topics() {
        let topics = Topics()
        let node = NodeAddress(store: 1, department: 10, node: "a")!
        #expect(topics.storeNodeConfig(store: 1) == "beaconmesh/v1/stores/1/nodes/config")
        #expect(topics.nodeConfig(node) == "beaconmesh/v1/stores/1/departments/10/nodes/a/config")
        #expect(topics.parse("beaconmesh/v1/stores/1/nodes/config") == .storeNodeConfig(store: 1))
        #expect(topics.parse("beaconmesh/v1/stores/1/departments/10/nodes/a/config") == .nodeConfig(node))
        #expect(topics.parse("beaconmesh/v1/stores/x/nodes/config") == nil)
    }

    @Test("versions compare by their numbers: 1.10.0 is newer than 1.9.2")
    func versionOrder() {
        #expect(NodeDirectory.isOlder("1.9.2", than: "1.10.0"))
        #expect(!NodeDirectory.isOlder("1.10.0", than: "1.9.2"))
        #expect(!NodeDirectory.isOlder("2.0.0", than: "2.0.0"))
    }
}
