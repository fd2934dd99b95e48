import BeaconMeshCore

extension WireCodec {
    /// The event payload of `stores/{store}/events`: the envelope plus the fields of its type.
    public static func encode(_ event: StoreEvent) -> [UInt8] { serialize(eventJSON(event)) }

    static func eventJSON(_ event: StoreEvent) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("v", .integer(1)), ("id", .string(event.id)), ("type", .string(event.type)), ("store", .integer(event.store)),
            ("at", .timestamp(event.at)),
        ]
        switch event.kind {
        case .arrived(let member, let department, let departmentName, let visit, let greeting):
            members += [
                ("member", memberJSON(member)), ("department", .integer(department)),
                ("departmentName", .string(departmentName)),
                ("visit", .object([("number", .integer(visit.number)), ("previousAt", .timestamp(visit.previousAt))])),
                ("greeting", .string(greeting)),
            ]
        case .moved(let member, let from, let to, let fromName, let toName):
            members += [
                ("member", memberJSON(member)), ("from", .integer(from)), ("to", .integer(to)),
                ("fromName", .string(fromName)), ("toName", .string(toName)),
            ]
        case .left(let member, let department, let dwellSeconds):
            members += [("member", memberJSON(member)), ("department", .integer(department)), ("dwellSeconds", .integer(dwellSeconds))]
        case .promo(let member, let department, let departmentName, let promo):
            members += [
                ("member", memberJSON(member)), ("department", .integer(department)),
                ("departmentName", .string(departmentName)), ("promo", promoJSON(promo)),
            ]
        case .node(let department, let node, let state):
            members += [("department", .integer(department)), ("node", .string(node)), ("state", .string(state.rawValue))]
        case .checkin(let member, let department, let departmentName, let request, let checkins, let verified):
            members += [
                ("member", memberJSON(member)), ("department", .integer(department)), ("departmentName", .string(departmentName)),
                ("request", .string(request)), ("checkins", .integer(checkins)), ("verified", .bool(verified)),
            ]
        case .checkinRefused(let request, let member, let department, let reason):
            members += [
                ("request", .string(request)), ("member", .string(member)), ("department", .integer(department)),
                ("reason", .string(reason.rawValue)),
            ]
        }
        return .object(members)
    }

    static func memberJSON(_ member: MemberProfile) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .string(member.id)), ("name", .string(member.name)),
            ("favoriteDrink", member.favoriteDrink.map(JSONValue.string) ?? .null), ("visits", .integer(member.visits)),
            ("lastVisitAt", .timestamp(member.lastVisitAt)), ("checkins", .integer(member.checkins)),
        ]
        if let photo = member.photo { members.append(("photo", .string(photo))) }
        for (key, value) in member.customFields.sorted(by: { $0.key < $1.key }) where !reservedMemberFields.contains(key) {
            members.append((key, .string(value)))
        }
        return .object(members)
    }

    /// Writes the contract's `member` object (the same fields as `memberJSON`) straight into json-c.
    static func writeMember(_ member: MemberProfile, into builder: inout JSONCObjectBuilder) {
        builder.set("id", member.id)
        builder.set("name", member.name)
        if let drink = member.favoriteDrink { builder.set("favoriteDrink", drink) } else { builder.setNull("favoriteDrink") }
        builder.set("visits", member.visits)
        if let last = member.lastVisitAt { builder.set("lastVisitAt", last.milliseconds) } else { builder.setNull("lastVisitAt") }
        builder.set("checkins", member.checkins)
        if let photo = member.photo { builder.set("photo", photo) }
        for (key, value) in member.customFields.sorted(by: { $0.key < $1.key }) where !reservedMemberFields.contains(key) {
            builder.set(dynamicKey: key, value)
        }
    }

    static let reservedMemberFields: Set<String> = ["id", "name", "favoriteDrink", "visits", "lastVisitAt", "photo", "checkins"]

    static func promoJSON(_ promo: Promo) -> JSONValue {
        .object([("id", .string(promo.id)), ("title", .string(promo.title)), ("message", .string(promo.message))])
    }

    /// Reads an event of any contract type.
    public static func decodeEvent(_ bytes: [UInt8]) throws(WireError) -> StoreEvent {
        try decodeEvent(parseVersion1(bytes))
    }

    static func decodeEvent(_ body: JSONReader) throws(WireError) -> StoreEvent {
        let kind: StoreEvent.Kind
        let type = try body.string("type")
        switch type {
        case "arrived":
            let visit = try body.object("visit")
            kind = .arrived(
                member: try decodeMember(try body.object("member")), department: try body.uint16("department"),
                departmentName: try body.string("departmentName"),
                visit: VisitNumber(number: Int(try visit.int("number")), previousAt: try visit.optionalTimestamp("previousAt")),
                greeting: try body.string("greeting"))
        case "moved":
            kind = .moved(
                member: try decodeMember(try body.object("member")), from: try body.uint16("from"), to: try body.uint16("to"),
                fromName: try body.string("fromName"), toName: try body.string("toName"))
        case "left":
            kind = .left(member: try decodeMember(try body.object("member")), department: try body.uint16("department"),
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
            kind = .checkinRefused(request: try body.string("request"), member: try body.string("member"),
                                   department: try body.uint16("department"), reason: reason)
        default:
            throw .wrongType(field: "type", expected: "arrived, moved, left, promo, node, checkin or checkin-refused")
        }
        return StoreEvent(id: try body.string("id"), store: try body.uint16("store"), at: try body.timestamp("at"), kind: kind)
    }

    static func decodeMember(_ body: JSONReader) throws(WireError) -> MemberProfile {
        var custom: [String: String] = [:]
        if case .object(let members) = body.value {
            for (key, value) in members {
                if case .string(let text) = value, !["id", "name", "favoriteDrink", "photo"].contains(key) { custom[key] = text }
            }
        }
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
        serialize(.object(dropping: [
            "v": .integer(1), "id": .string(offer.id), "member": .string(offer.member), "store": .integer(offer.store),
            "department": .integer(offer.department), "departmentName": offer.departmentName.map(JSONValue.string),
            "promo": promoJSON(offer.promo), "at": .timestamp(offer.at),
        ]))
    }

    /// Reads an offer.
    public static func decodeOffer(_ bytes: [UInt8]) throws(WireError) -> Offer {
        let body = try parseVersion1(bytes)
        return Offer(id: try body.string("id"), member: try body.optionalString("member") ?? "", store: try body.uint16("store"),
                     department: try body.uint16("department"), departmentName: try body.optionalString("departmentName"),
                     promo: try decodePromo(try body.object("promo")),
                     at: try body.timestamp("at"))
    }
}
