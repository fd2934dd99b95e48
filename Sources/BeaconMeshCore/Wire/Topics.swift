/// The contract's MQTT topic tree under `<root>/v1`: builds every topic and recognises incoming ones.
public struct Topics: Sendable, Equatable {
    /// `<root>/v1`, e.g. `beaconmesh/v1`.
    public let prefix: String

    /// The contract's default first level of every topic, `topicRoot` in every program's config.
    public static let defaultRoot = "beaconmesh"

    /// The tree under `root` (the contract's configurable first level; `v1` is fixed).
    public init(root: String = Topics.defaultRoot) {
        prefix = root + "/v1"
    }

    public func sightings(_ node: NodeAddress) -> String { nodeTopic(node, "sightings") }
    public func nodeStatus(_ node: NodeAddress) -> String { nodeTopic(node, "status") }
    public func nodeHealth(_ node: NodeAddress) -> String { nodeTopic(node, "health") }
    /// One node's own retained node config (`beacon-coordinator nodes set --department D --node ID`).
    public func nodeConfig(_ node: NodeAddress) -> String { nodeTopic(node, "config") }
    /// The retained node config of every node of a store (`beacon-coordinator nodes set --store N`).
    public func storeNodeConfig(store: UInt16) -> String { "\(prefix)/stores/\(store)/nodes/config" }
    public func events(store: UInt16) -> String { "\(prefix)/stores/\(store)/events" }
    public func presence(store: UInt16) -> String { "\(prefix)/stores/\(store)/presence" }
    /// Where the store's alert rules tell staff (QoS 1, not retained).
    public func alerts(store: UInt16) -> String { "\(prefix)/stores/\(store)/alerts" }
    public func offers(member: String) -> String { "\(prefix)/members/\(member)/offers" }
    public func coordinatorStatus(id: String) -> String { "\(prefix)/coordinators/\(id)/status" }
    public func coordinatorHealth(id: String) -> String { "\(prefix)/coordinators/\(id)/health" }
    public func ranging(store: UInt16, member: String) -> String { "\(prefix)/stores/\(store)/members/\(member)/ranging" }
    public func checkins(store: UInt16) -> String { "\(prefix)/stores/\(store)/checkins" }
    public func checkins(member: String) -> String { "\(prefix)/members/\(member)/checkins" }
    /// Where surveyors (`beacon-coordinator survey mark`, the dashboard's survey page) publish a store's survey marks.
    public func survey(store: UInt16) -> String { "\(prefix)/stores/\(store)/survey" }
    public var registryEvents: String { "\(prefix)/registry/events" }

    /// The filter for every member's ranging reports in one store.
    public func allRanging(store: UInt16) -> String { rangingFilter(store: store, member: nil) }

    /// The filter for every node's sightings in one store.
    public func allSightings(store: UInt16) -> String { sightingsFilter(store: store) }
    /// The filter for every node's status in one store.
    public func allNodeStatus(store: UInt16) -> String { nodeStatusFilter(store: store) }
    /// The filter for everything of one store.
    public func everything(store: UInt16) -> String { "\(prefix)/stores/\(store)/#" }
    /// The filters of everything a store's broker sends up to head office over its bridge: the store's tree but its
    /// node configs, which only come down (`storeNodeConfigFilter`, `nodeConfigFilter`).
    public func uplinkFilters(store: UInt16) -> [String] {
        [
            sightingsFilter(store: store), nodeStatusFilter(store: store), nodeHealthFilter(store: store), events(store: store),
            presence(store: store), alerts(store: store), rangingFilter(store: store, member: nil), checkins(store: store),
            survey(store: store),
        ]
    }

    // Subscription filters and ACL topics: a `nil` level is `+`, any one value.

    /// The filter for the events of one store, or of every store.
    public func eventsFilter(store: UInt16?) -> String { "\(prefix)/stores/\(Self.level(store))/events" }
    /// The filter for the presence snapshot of one store, or of every store.
    public func presenceFilter(store: UInt16?) -> String { "\(prefix)/stores/\(Self.level(store))/presence" }
    /// The filter for one store's alerts, or every store's.
    public func alertsFilter(store: UInt16?) -> String { "\(prefix)/stores/\(Self.level(store))/alerts" }
    /// The filter for the check-in requests of one store, or of every store.
    public func checkinsFilter(store: UInt16?) -> String { "\(prefix)/stores/\(Self.level(store))/checkins" }
    /// The filter for the survey marks of one store, or of every store.
    public func surveyFilter(store: UInt16?) -> String { "\(prefix)/stores/\(Self.level(store))/survey" }
    /// The filter for every node's status in one store, or in every store.
    public func nodeStatusFilter(store: UInt16?) -> String {
        "\(prefix)/stores/\(Self.level(store))/departments/+/nodes/+/status"
    }
    /// The filter for every node's health in one store, or in every store.
    public func nodeHealthFilter(store: UInt16?) -> String {
        "\(prefix)/stores/\(Self.level(store))/departments/+/nodes/+/health"
    }
    /// The filter for every node's own config in one store, or in every store.
    public func nodeConfigFilter(store: UInt16?) -> String {
        "\(prefix)/stores/\(Self.level(store))/departments/+/nodes/+/config"
    }
    /// The filter for the store-wide node config of one store, or of every store.
    public func storeNodeConfigFilter(store: UInt16?) -> String { "\(prefix)/stores/\(Self.level(store))/nodes/config" }
    /// The filter for every node's sightings in one store, or in every store.
    public func sightingsFilter(store: UInt16?) -> String {
        "\(prefix)/stores/\(Self.level(store))/departments/+/nodes/+/sightings"
    }
    /// The filter for everything of every department (every node's topics) of one store, or of every store.
    public func departmentsFilter(store: UInt16?) -> String { "\(prefix)/stores/\(Self.level(store))/departments/#" }
    /// The filter for the ranging reports of one member (or every member) in one store (or every store).
    ///
    /// `member` may also be an ACL pattern's `%u`.
    public func rangingFilter(store: UInt16?, member: String?) -> String {
        "\(prefix)/stores/\(Self.level(store))/members/\(member ?? "+")/ranging"
    }
    /// The filter for one member's offers, or every member's.
    public func offersFilter(member: String?) -> String { offers(member: member ?? "+") }
    /// The filter for one member's check-ins, or every member's.
    public func checkinsFilter(member: String?) -> String { checkins(member: member ?? "+") }
    /// The filter for one coordinator's status, or every coordinator's.
    public func coordinatorStatusFilter(id: String?) -> String { coordinatorStatus(id: id ?? "+") }
    /// The filter for one coordinator's health, or every coordinator's.
    public func coordinatorHealthFilter(id: String?) -> String { coordinatorHealth(id: id ?? "+") }

    private static func level(_ store: UInt16?) -> String { store.map { String($0) } ?? "+" }

    private func nodeTopic(_ node: NodeAddress, _ leaf: String) -> String {
        "\(prefix)/stores/\(node.store)/departments/\(node.department)/nodes/\(node.node)/\(leaf)"
    }

    /// What a topic of this tree is about.
    public enum Kind: Hashable, Sendable {
        case sightings(NodeAddress)
        case nodeStatus(NodeAddress)
        case nodeHealth(NodeAddress)
        case nodeConfig(NodeAddress)
        case storeNodeConfig(store: UInt16)
        case events(store: UInt16)
        case presence(store: UInt16)
        case alerts(store: UInt16)
        case offers(member: String)
        case coordinatorStatus(id: String)
        case coordinatorHealth(id: String)
        case ranging(store: UInt16, member: String)
        case storeCheckins(store: UInt16)
        case survey(store: UInt16)
        case memberCheckins(member: String)
        case registryEvents
    }

    /// Recognises `topic`; `nil` when it is not one of the contract's topics under this prefix.
    ///
    /// Works on the topic's bytes without splitting it into strings: the coordinator parses every topic it receives.
    public func parse(_ topic: String) -> Kind? {
        var topic = topic
        var prefix = prefix
        return prefix.withUTF8 { prefix in topic.withUTF8 { Topics.parse(TopicLevels(bytes: $0, prefix: prefix)) } }
    }

    private static func parse(_ levels: TopicLevels?) -> Kind? {
        guard let levels else { return nil }
        switch levels.count {
        case 2 where levels.is(0, "registry") && levels.is(1, "events"):
            return .registryEvents
        case 3 where levels.is(0, "stores"):
            guard let store = levels.number(1) else { return nil }
            if levels.is(2, "events") { return .events(store: store) }
            if levels.is(2, "presence") { return .presence(store: store) }
            if levels.is(2, "alerts") { return .alerts(store: store) }
            if levels.is(2, "checkins") { return .storeCheckins(store: store) }
            if levels.is(2, "survey") { return .survey(store: store) }
            return nil
        case 3 where levels.is(0, "members") && !levels.isEmpty(1):
            if levels.is(2, "offers") { return .offers(member: levels.text(1)) }
            if levels.is(2, "checkins") { return .memberCheckins(member: levels.text(1)) }
            return nil
        case 4 where levels.is(0, "stores") && levels.is(2, "nodes") && levels.is(3, "config"):
            return levels.number(1).map { .storeNodeConfig(store: $0) }
        case 5 where levels.is(0, "stores") && levels.is(2, "members") && levels.is(4, "ranging") && !levels.isEmpty(3):
            guard let store = levels.number(1) else { return nil }
            return .ranging(store: store, member: levels.text(3))
        case 3 where levels.is(0, "coordinators") && !levels.isEmpty(1):
            if levels.is(2, "status") { return .coordinatorStatus(id: levels.text(1)) }
            if levels.is(2, "health") { return .coordinatorHealth(id: levels.text(1)) }
            return nil
        case 7 where levels.is(0, "stores") && levels.is(2, "departments") && levels.is(4, "nodes"):
            guard let store = levels.number(1), let department = levels.number(3),
                let node = NodeAddress(store: store, department: department, node: levels.text(5))
            else { return nil }
            if levels.is(6, "sightings") { return .sightings(node) }
            if levels.is(6, "status") { return .nodeStatus(node) }
            if levels.is(6, "health") { return .nodeHealth(node) }
            if levels.is(6, "config") { return .nodeConfig(node) }
            return nil
        default:
            return nil
        }
    }
}

/// The levels of a topic after the tree's prefix, as byte ranges of the topic (at most 8 are told apart).
private struct TopicLevels {
    let bytes: UnsafeBufferPointer<UInt8>
    private var starts = InlineArray<9, Int>(repeating: 0)
    private(set) var count = 0

    /// The levels of `bytes` after `prefix` and a `/`; `nil` when the topic does not start so or has over 8 levels.
    init?(bytes: UnsafeBufferPointer<UInt8>, prefix: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        guard bytes.count > prefix.count, bytes[prefix.count] == UInt8(ascii: "/"),
            UnsafeBufferPointer(rebasing: bytes[..<prefix.count]).elementsEqual(prefix)
        else { return nil }
        starts[0] = prefix.count + 1
        count = 1
        for index in (prefix.count + 1)..<bytes.count where bytes[index] == UInt8(ascii: "/") {
            guard count < 8 else { return nil }
            starts[count] = index + 1
            count += 1
        }
        starts[count] = bytes.count + 1
    }

    private func level(_ index: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[starts[index]..<(starts[index + 1] - 1)])
    }

    func `is`(_ index: Int, _ name: StaticString) -> Bool {
        level(index).elementsEqual(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    func isEmpty(_ index: Int) -> Bool { level(index).isEmpty }

    func text(_ index: Int) -> String { String(decoding: level(index), as: UTF8.self) }

    /// The level as a decimal number of 1 to 5 digits that fits 16 bits.
    func number(_ index: Int) -> UInt16? {
        let digits = level(index)
        guard (1...5).contains(digits.count) else { return nil }
        var value = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return UInt16(exactly: value)
    }
}
