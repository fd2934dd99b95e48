import BeaconMeshCore

extension WireCodec {
    /// The event payload of `stores/{store}/events`: the envelope plus the fields of its type. With `.idOnly` (a
    /// webhook that did not ask for personal data) a member is `{"id":"…"}` alone and an arrival carries no greeting
    /// (which names them).
    public static func encode(_ event: StoreEvent, members detail: MemberDetail = .full) -> [UInt8] {
        payload(capacity: 512) { body in
            body.member("v", 1)
            body.member("id", event.id)
            body.member("type", event.type)
            body.member("store", event.store)
            body.member("at", event.at)
            switch event.kind {
            case .arrived(let member, let department, let departmentName, let visit, let greeting, let evidence):
                body.member("member") { writeMember(member, detail, into: &$0) }
                body.member("department", department)
                body.member("departmentName", departmentName)
                body.member("visit") { writeVisit(visit, into: &$0) }
                if detail == .full { body.member("greeting", greeting) }
                if let evidence { writeEvidence(evidence, into: &body) }
            case .moved(let member, let from, let to, let fromName, let toName, let evidence):
                body.member("member") { writeMember(member, detail, into: &$0) }
                body.member("from", from)
                body.member("to", to)
                body.member("fromName", fromName)
                body.member("toName", toName)
                if let evidence { writeEvidence(evidence, into: &body) }
            case .resumed(let member, let department, let departmentName, let visit, let evidence):
                body.member("member") { writeMember(member, detail, into: &$0) }
                body.member("department", department)
                body.member("departmentName", departmentName)
                body.member("visit") { writeVisit(visit, into: &$0) }
                if let evidence { writeEvidence(evidence, into: &body) }
            case .left(let member, let department, let dwellSeconds):
                body.member("member") { writeMember(member, detail, into: &$0) }
                body.member("department", department)
                body.member("dwellSeconds", dwellSeconds)
            case .promo(let member, let department, let departmentName, let promo):
                body.member("member") { writeMember(member, detail, into: &$0) }
                body.member("department", department)
                body.member("departmentName", departmentName)
                body.member("promo") { writePromo(promo, into: &$0) }
            case .node(let department, let node, let state):
                body.member("department", department)
                body.member("node", node)
                body.member("state", state.rawValue)
            case .checkin(let member, let department, let departmentName, let request, let checkins, let verified):
                body.member("member") { writeMember(member, detail, into: &$0) }
                body.member("department", department)
                body.member("departmentName", departmentName)
                body.member("request", request)
                body.member("checkins", checkins)
                body.member("verified", verified)
            case .checkinRefused(let request, let member, let department, let reason):
                body.member("request", request)
                body.member("member", member)
                body.member("department", department)
                body.member("reason", reason.rawValue)
            }
        }
    }

    /// Writes the members of the contract's `member` object: the one spelling of a member, in events and in the
    /// presence snapshot. Custom fields follow in name order, except those that would shadow a contract field.
    static func writeMember(_ member: MemberProfile, _ detail: MemberDetail = .full, into writer: inout JSONStreamWriter) {
        writer.member("id", member.id)
        guard detail == .full else { return }
        writer.member("name", member.name)
        writer.member("favoriteDrink", orNull: member.favoriteDrink)
        writer.member("visits", member.visits)
        writer.member("lastVisitAt", orNull: member.lastVisitAt)
        writer.member("checkins", member.checkins)
        if let photo = member.photo { writer.member("photo", photo) }
        for (key, value) in member.customFields.sorted(by: { $0.key < $1.key }) where !reservedMemberFields.contains(key) {
            writer.key(key)
            writer.string(value)
        }
    }

    /// How much of a member a payload carries: everything (MQTT, a webhook with `personalData: true`), or the id alone.
    public enum MemberDetail: Sendable {
        case full, idOnly
    }

    static let reservedMemberFields: Set<String> = ["id", "name", "favoriteDrink", "visits", "lastVisitAt", "photo", "checkins"]

    /// Writes the `visit` object of an `arrived` or `resumed` event: `{"number":12,"previousAt":…|null}`.
    static func writeVisit(_ visit: VisitNumber, into writer: inout JSONStreamWriter) {
        writer.member("number", visit.number)
        writer.member("previousAt", orNull: visit.previousAt)
    }

    /// Reads the `visit` object of an `arrived` or `resumed` event.
    static func decodeVisit(_ visit: JSONReader) throws(WireError) -> VisitNumber {
        VisitNumber(number: Int(try visit.int("number")), previousAt: try visit.optionalTimestamp("previousAt"))
    }

    /// Writes the contract's `confidence` and `reason` of an `arrived`, `moved` or `resumed` event.
    static func writeEvidence(_ evidence: DecisionEvidence, into writer: inout JSONStreamWriter) {
        writer.member("confidence", evidence.confidence)
        writer.member("reason", evidence.reason)
    }

    /// Reads `confidence` and `reason`; `nil` when both are missing (an event from a coordinator older than them).
    static func decodeEvidence(_ body: JSONReader) throws(WireError) -> DecisionEvidence? {
        guard body.contains("confidence") || body.contains("reason") else { return nil }
        return DecisionEvidence(confidence: try body.fraction("confidence"), reason: try body.string("reason"))
    }

    /// Writes the members of the contract's `promo` object.
    static func writePromo(_ promo: Promo, into writer: inout JSONStreamWriter) {
        writer.member("id", promo.id)
        writer.member("title", promo.title)
        writer.member("message", promo.message)
    }

    /// Reads an event of any contract type.
    public static func decodeEvent(_ bytes: [UInt8]) throws(WireError) -> StoreEvent {
        try JSONReader.withVersion1Document(bytes) { body throws(WireError) in try decodeEvent(body) }
    }

    static func decodeEvent(_ body: JSONReader) throws(WireError) -> StoreEvent {
        let kind: StoreEvent.Kind
        let type = try body.string("type")
        switch type {
        case "arrived":
            kind = .arrived(
                member: try decodeMember(try body.object("member")), department: try body.uint16("department"),
                departmentName: try body.string("departmentName"),
                visit: try decodeVisit(try body.object("visit")),
                greeting: try body.string("greeting"), evidence: try decodeEvidence(body))
        case "moved":
            kind = .moved(
                member: try decodeMember(try body.object("member")), from: try body.uint16("from"), to: try body.uint16("to"),
                fromName: try body.string("fromName"), toName: try body.string("toName"), evidence: try decodeEvidence(body))
        case "resumed":
            kind = .resumed(
                member: try decodeMember(try body.object("member")), department: try body.uint16("department"),
                departmentName: try body.string("departmentName"),
                visit: try decodeVisit(try body.object("visit")),
                evidence: try decodeEvidence(body))
        case "left":
            kind = .left(
                member: try decodeMember(try body.object("member")), department: try body.uint16("department"),
                dwellSeconds: Int(try body.int("dwellSeconds")))
        case "promo":
            kind = .promo(
                member: try decodeMember(try body.object("member")), department: try body.uint16("department"),
                departmentName: try body.string("departmentName"), promo: try decodePromo(try body.object("promo")))
        case "node":
            kind = .node(department: try body.uint16("department"), node: try body.string("node"), state: try body.linkState("state"))
        case "checkin":
            kind = .checkin(
                member: try decodeMember(try body.object("member")), department: try body.uint16("department"),
                departmentName: try body.string("departmentName"), request: try body.string("request"),
                checkins: Int(try body.int("checkins")), verified: try body.bool("verified"))
        case "checkin-refused":
            guard let reason = CheckinRefusal(rawValue: try body.string("reason")) else {
                throw .wrongType(field: "reason", expected: "not-near-till, unknown-member or not-a-till")
            }
            kind = .checkinRefused(
                request: try body.string("request"), member: try body.string("member"),
                department: try body.uint16("department"), reason: reason)
        default:
            throw .wrongType(field: "type", expected: "arrived, moved, resumed, left, promo, node, checkin or checkin-refused")
        }
        return StoreEvent(id: try body.string("id"), store: try body.uint16("store"), at: try body.timestamp("at"), kind: kind)
    }

    static func decodeMember(_ body: JSONReader) throws(WireError) -> MemberProfile {
        let custom = body.stringMembers(excluding: ["id", "name", "favoriteDrink", "photo"])
        return MemberProfile(
            id: try body.string("id"), name: try body.string("name"), favoriteDrink: try body.optionalString("favoriteDrink"),
            visits: Int(try body.optionalInt("visits") ?? 0), lastVisitAt: try body.optionalTimestamp("lastVisitAt"),
            photo: try body.optionalString("photo"), customFields: custom, checkins: Int(try body.optionalInt("checkins") ?? 0))
    }

    static func decodePromo(_ body: JSONReader) throws(WireError) -> Promo {
        Promo(id: try body.string("id"), title: try body.string("title"), message: try body.string("message"))
    }

    /// The offer payload of `members/{member}/offers` (with the added `departmentName` when the offer has one).
    public static func encode(_ offer: Offer) -> [UInt8] {
        payload { body in
            body.member("v", 1)
            body.member("id", offer.id)
            body.member("member", offer.member)
            body.member("store", offer.store)
            body.member("department", offer.department)
            if let name = offer.departmentName { body.member("departmentName", name) }
            body.member("promo") { writePromo(offer.promo, into: &$0) }
            body.member("at", offer.at)
        }
    }

    /// Reads an offer.
    public static func decodeOffer(_ bytes: [UInt8]) throws(WireError) -> Offer {
        try JSONReader.withVersion1Document(bytes) { body throws(WireError) in
            Offer(
                id: try body.string("id"), member: try body.optionalString("member") ?? "", store: try body.uint16("store"),
                department: try body.uint16("department"), departmentName: try body.optionalString("departmentName"),
                promo: try decodePromo(try body.object("promo")),
                at: try body.timestamp("at"))
        }
    }
}

extension WireCodec {
    /// The `test` event `beacon-coordinator webhooks test` sends: the envelope alone, with `"type":"test"` and no store.
    public static func encodeWebhookTest(id: String, at time: Timestamp) -> [UInt8] {
        payload(capacity: 96) { body in
            body.member("v", 1)
            body.member("id", id)
            body.member("type", "test")
            body.member("at", time)
        }
    }
}
