import BeaconMeshCore

extension WireCodec {
    /// The retained presence snapshot of `stores/{store}/presence`.
    public static func encode(_ snapshot: PresenceSnapshot) -> [UInt8] {
        let members: [JSONValue] = snapshot.members.map { present in
            .object([
                ("member", memberJSON(present.member)), ("department", .integer(present.department)),
                ("departmentName", .string(present.departmentName)), ("proximity", .string(present.proximity.rawValue)),
                ("arrivedAt", .timestamp(present.arrivedAt)), ("inDepartmentSince", .timestamp(present.inDepartmentSince)),
                ("lastSeen", .timestamp(present.lastSeen)),
            ])
        }
        let occupancy: [(String, JSONValue)] = snapshot.occupancy.sorted { $0.key < $1.key }.map {
            (String($0.key), .object([("members", .integer($0.value.members)), ("guests", .integer($0.value.guests))]))
        }
        let nodes: [JSONValue] = snapshot.nodes.map {
            .object([("department", .integer($0.department)), ("node", .string($0.node)), ("state", .string($0.state.rawValue))])
        }
        return serialize(.object([
            ("v", .integer(1)), ("store", .integer(snapshot.store)), ("name", .string(snapshot.name)),
            ("updatedAt", .timestamp(snapshot.updatedAt)), ("members", .array(members)),
            ("occupancy", .object(occupancy)), ("nodes", .array(nodes)),
        ]))
    }

    /// Reads a presence snapshot.
    public static func decodePresenceSnapshot(_ bytes: [UInt8]) throws(WireError) -> PresenceSnapshot {
        let body = try parseVersion1(bytes)
        var members: [PresenceSnapshot.PresentMember] = []
        for (index, element) in try body.array("members").enumerated() {
            let item = try JSONReader(element, path: "members[\(index)]")
            members.append(PresenceSnapshot.PresentMember(
                member: try decodeMember(try item.object("member")), department: try item.uint16("department"),
                departmentName: try item.string("departmentName"), proximity: try item.proximity("proximity"),
                arrivedAt: try item.timestamp("arrivedAt"), inDepartmentSince: try item.timestamp("inDepartmentSince"),
                lastSeen: try item.timestamp("lastSeen")))
        }
        var occupancy: [UInt16: PresenceSnapshot.Occupancy] = [:]
        guard case .object(let departments)? = body.value["occupancy"] else {
            throw .wrongType(field: "occupancy", expected: "an object")
        }
        for (key, value) in departments {
            guard let department = UInt16(key) else { throw .absurdValue(field: "occupancy", value: key) }
            let counts = try JSONReader(value, path: "occupancy.\(key)")
            occupancy[department] = .init(members: Int(try counts.int("members")), guests: Int(try counts.int("guests")))
        }
        var nodes: [PresenceSnapshot.NodeState] = []
        for (index, element) in try body.optionalArray("nodes").enumerated() {
            let item = try JSONReader(element, path: "nodes[\(index)]")
            nodes.append(.init(department: try item.uint16("department"), node: try item.string("node"), state: try item.linkState("state")))
        }
        return PresenceSnapshot(store: try body.uint16("store"), name: try body.string("name"),
                                updatedAt: try body.timestamp("updatedAt"), members: members, occupancy: occupancy, nodes: nodes)
    }
}
