import BeaconMeshCore

extension WireCodec {
    /// The alert payload of `stores/{store}/alerts`: `{"v":1,"id":…,"rule":…,"kind":…,"store":…,"at":…,
    /// "department":…|null,"departmentName":…|null,"member":{…}|null,"node":…|null,"text":…}`.
    /// With `.idOnly` the member is `{"id":"…"}` and the text names them by id.
    public static func encode(_ alert: Alert, members detail: MemberDetail = .full) -> [UInt8] {
        payload(capacity: 384) { body in
            body.member("v", 1)
            body.member("id", alert.id)
            body.member("rule", alert.rule)
            body.member("kind", alert.kind.rawValue)
            body.member("store", alert.store)
            body.member("at", alert.at)
            body.member("department", orNull: alert.department.map(Int.init))
            body.member("departmentName", orNull: alert.departmentName)
            if let member = alert.member {
                body.member("member") { writeMember(member, detail, into: &$0) }
            } else {
                body.key("member")
                body.null()
            }
            body.member("node", orNull: alert.node)
            if detail == .idOnly, let member = alert.member, !member.name.isEmpty {
                body.member("text", alert.text.replacing(member.name, with: member.id))
            } else {
                body.member("text", alert.text)
            }
        }
    }

    /// Reads an alert payload (a staff app's, the dashboard's and the monitor's view of it).
    public static func decodeAlert(_ bytes: [UInt8]) throws(WireError) -> Alert {
        try JSONReader.withVersion1Document(bytes) { body throws(WireError) in
            let kindText = try body.string("kind")
            guard let kind = Alert.Kind(rawValue: kindText) else {
                throw .wrongType(field: "kind", expected: Alert.Kind.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))
            }
            var alert = Alert(
                rule: try body.string("rule"), kind: kind, store: try body.uint16("store"), at: try body.timestamp("at"),
                department: try body.optionalUInt16("department"), departmentName: try body.optionalString("departmentName"),
                member: try body.optionalObject("member").map { object throws(WireError) in try decodeMember(object) },
                node: try body.optionalString("node"), text: try body.string("text"))
            alert.id = try body.string("id")
            return alert
        }
    }
}
