/// Where a scanner node sits: store (iBeacon major), department (iBeacon minor) and node id.
public struct NodeAddress: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var store: UInt16
    public var department: UInt16
    public var node: String

    /// Makes an address; `nil` when `node` is not `[a-z0-9-]{1,32}`.
    public init?(store: UInt16, department: UInt16, node: String) {
        guard NodeAddress.isValidNodeID(node) else { return nil }
        self.store = store
        self.department = department
        self.node = node
    }

    /// Whether `id` is a valid node id: 1 to 32 of `a-z`, `0-9`, `-`.
    public static func isValidNodeID(_ id: String) -> Bool {
        let bytes = id.utf8
        return (1...32).contains(bytes.count)
            && bytes.allSatisfy {
                ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                    || $0 == UInt8(ascii: "-")
            }
    }

    public static func < (lhs: NodeAddress, rhs: NodeAddress) -> Bool {
        (lhs.store, lhs.department, lhs.node) < (rhs.store, rhs.department, rhs.node)
    }

    public var description: String { "store \(store) department \(department) node \(node)" }
}
