/// The contract's MQTT topic tree under `<root>/v1`: builds every topic and recognises incoming ones.
public struct Topics: Sendable, Equatable {
    /// `<root>/v1`, e.g. `beaconmesh/v1`.
    public let prefix: String

    /// The tree under `root` (the contract's configurable first level; `v1` is fixed).
    public init(root: String = "beaconmesh") {
        prefix = root + "/v1"
    }

    public func sightings(_ node: NodeAddress) -> String { nodeTopic(node, "sightings") }
    public func nodeStatus(_ node: NodeAddress) -> String { nodeTopic(node, "status") }
    public func nodeHealth(_ node: NodeAddress) -> String { nodeTopic(node, "health") }
    public func events(store: UInt16) -> String { "\(prefix)/stores/\(store)/events" }
    public func presence(store: UInt16) -> String { "\(prefix)/stores/\(store)/presence" }
    public func offers(member: String) -> String { "\(prefix)/members/\(member)/offers" }
    public func coordinatorStatus(id: String) -> String { "\(prefix)/coordinators/\(id)/status" }
    public func coordinatorHealth(id: String) -> String { "\(prefix)/coordinators/\(id)/health" }

    /// The filter for every node's sightings in one store.
    public func allSightings(store: UInt16) -> String { "\(prefix)/stores/\(store)/departments/+/nodes/+/sightings" }
    /// The filter for every node's status in one store.
    public func allNodeStatus(store: UInt16) -> String { "\(prefix)/stores/\(store)/departments/+/nodes/+/status" }
    /// The filter for everything of one store.
    public func everything(store: UInt16) -> String { "\(prefix)/stores/\(store)/#" }

    private func nodeTopic(_ node: NodeAddress, _ leaf: String) -> String {
        "\(prefix)/stores/\(node.store)/departments/\(node.department)/nodes/\(node.node)/\(leaf)"
    }

    /// What a topic of this tree is about.
    public enum Kind: Hashable, Sendable {
        case sightings(NodeAddress)
        case nodeStatus(NodeAddress)
        case nodeHealth(NodeAddress)
        case events(store: UInt16)
        case presence(store: UInt16)
        case offers(member: String)
        case coordinatorStatus(id: String)
        case coordinatorHealth(id: String)
    }

    /// Recognises `topic`; `nil` when it is not one of the contract's topics under this prefix.
    public func parse(_ topic: String) -> Kind? {
        guard topic.hasPrefix(prefix + "/") else { return nil }
        let levels = topic.dropFirst(prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        switch levels.count {
        case 3 where levels[0] == "stores":
            guard let store = UInt16(levels[1]) else { return nil }
            switch levels[2] {
            case "events": return .events(store: store)
            case "presence": return .presence(store: store)
            default: return nil
            }
        case 3 where levels[0] == "members" && levels[2] == "offers" && !levels[1].isEmpty:
            return .offers(member: String(levels[1]))
        case 3 where levels[0] == "coordinators" && !levels[1].isEmpty:
            switch levels[2] {
            case "status": return .coordinatorStatus(id: String(levels[1]))
            case "health": return .coordinatorHealth(id: String(levels[1]))
            default: return nil
            }
        case 7 where levels[0] == "stores" && levels[2] == "departments" && levels[4] == "nodes":
            guard let store = UInt16(levels[1]), let department = UInt16(levels[3]),
                  let node = NodeAddress(store: store, department: department, node: String(levels[5]))
            else { return nil }
            switch levels[6] {
            case "sightings": return .sightings(node)
            case "status": return .nodeStatus(node)
            case "health": return .nodeHealth(node)
            default: return nil
            }
        default:
            return nil
        }
    }
}
