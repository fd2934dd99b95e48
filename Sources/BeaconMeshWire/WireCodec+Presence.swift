import BeaconMeshCore

extension WireCodec {
    /// The retained presence snapshot of `stores/{store}/presence`.
    ///
    /// Republished up to four times a second with every member in the store, so it is written as bytes straight
    /// into one buffer, one member at a time.
    public static func encode(_ snapshot: PresenceSnapshot) -> [UInt8] {
        payload(capacity: 256 + snapshot.members.count * 320) { body in
            body.member("v", 1)
            body.member("store", snapshot.store)
            body.member("name", snapshot.name)
            body.member("updatedAt", snapshot.updatedAt)
            body.key("members")
            body.array(snapshot.members) { present, writer in
                writer.object { item in
                    item.member("member") { writeMember(present.member, into: &$0) }
                    item.member("department", orNull: present.department.map(Int.init))
                    item.member("departmentName", orNull: present.departmentName)
                    item.member("proximity", present.proximity.rawValue)
                    item.member("arrivedAt", present.arrivedAt)
                    item.member("inDepartmentSince", present.inDepartmentSince)
                    item.member("lastSeen", present.lastSeen)
                    if let confidence = present.confidence { item.member("confidence", confidence) }
                }
            }
            body.member("occupancy") { occupancy in
                for (department, counts) in snapshot.occupancy.sorted(by: { $0.key < $1.key }) {
                    occupancy.key(String(department))
                    occupancy.object { entry in
                        entry.member("members", counts.members)
                        entry.member("guests", counts.guests)
                        if let name = counts.name { entry.member("name", name) }
                    }
                }
            }
            body.key("nodes")
            body.array(snapshot.nodes) { node, writer in
                writer.object { entry in
                    entry.member("department", node.department)
                    entry.member("node", node.node)
                    entry.member("state", node.state.rawValue)
                }
            }
            if let survey = snapshot.survey {
                body.key("survey")
                writeSurveyStatus(survey, into: &body)
            }
        }
    }

    /// Reads a presence snapshot; a member's `department` and `departmentName` may be null (department unknown), and
    /// `confidence` may be missing (a coordinator older than it).
    public static func decodePresenceSnapshot(_ bytes: [UInt8]) throws(WireError) -> PresenceSnapshot {
        try JSONReader.withVersion1Document(bytes) { body throws(WireError) in
            var members: [PresenceSnapshot.PresentMember] = []
            try body.forEachObject("members") { item throws(WireError) in
                members.append(
                    PresenceSnapshot.PresentMember(
                        member: try decodeMember(try item.object("member")), department: try item.optionalUInt16("department"),
                        departmentName: try item.optionalString("departmentName"), proximity: try item.proximity("proximity"),
                        arrivedAt: try item.timestamp("arrivedAt"), inDepartmentSince: try item.timestamp("inDepartmentSince"),
                        lastSeen: try item.timestamp("lastSeen"), confidence: try item.optionalFraction("confidence")))
            }
            var occupancy: [UInt16: PresenceSnapshot.Occupancy] = [:]
            try body.forEachObjectMember("occupancy") { key, counts throws(WireError) in
                guard let department = UInt16(key) else { throw .absurdValue(field: "occupancy", value: key) }
                occupancy[department] = .init(
                    members: Int(try counts.int("members")), guests: Int(try counts.int("guests")),
                    name: try counts.optionalString("name"))
            }
            var nodes: [PresenceSnapshot.NodeState] = []
            try body.forEachObject("nodes", optional: true) { item throws(WireError) in
                nodes.append(
                    .init(department: try item.uint16("department"), node: try item.string("node"), state: try item.linkState("state")))
            }
            var snapshot = PresenceSnapshot(
                store: try body.uint16("store"), name: try body.string("name"),
                updatedAt: try body.timestamp("updatedAt"), members: members, occupancy: occupancy, nodes: nodes)
            if body.contains("survey") { snapshot.survey = try decodeSurveyStatus(try body.object("survey")) }
            return snapshot
        }
    }
}
