import BeaconMeshCore

extension WireCodec {
    /// The retained presence snapshot of `stores/{store}/presence`.
    ///
    /// Republished up to four times a second with every member in the store, so it is written straight into json-c
    /// and printed one member at a time.
    public static func encode(_ snapshot: PresenceSnapshot) -> [UInt8] {
        var writer = JSONStreamWriter(capacity: 256 + snapshot.members.count * 320) { body in
            body.set("v", 1)
            body.set("store", Int(snapshot.store))
            body.set("name", snapshot.name)
            body.set("updatedAt", snapshot.updatedAt.milliseconds)
        }
        writer.objects("members", snapshot.members) { present, item in
            item.setObject("member") { writeMember(present.member, into: &$0) }
            item.set("department", Int(present.department))
            item.set("departmentName", present.departmentName)
            item.set("proximity", present.proximity.rawValue)
            item.set("arrivedAt", present.arrivedAt.milliseconds)
            item.set("inDepartmentSince", present.inDepartmentSince.milliseconds)
            item.set("lastSeen", present.lastSeen.milliseconds)
        }
        writer.value("occupancy", .object(snapshot.occupancy.sorted { $0.key < $1.key }.map {
            (String($0.key), .object(dropping: ["members": .integer($0.value.members), "guests": .integer($0.value.guests),
                                                "name": $0.value.name.map(JSONValue.string)]))
        }))
        writer.value("nodes", .array(snapshot.nodes.map {
            .object([("department", .integer($0.department)), ("node", .string($0.node)), ("state", .string($0.state.rawValue))])
        }))
        return writer.finish()
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
            occupancy[department] = .init(members: Int(try counts.int("members")), guests: Int(try counts.int("guests")),
                                          name: try counts.optionalString("name"))
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
