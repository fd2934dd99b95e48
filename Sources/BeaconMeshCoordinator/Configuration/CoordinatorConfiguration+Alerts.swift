import BeaconMeshCore
import Yams

/// The config's `alerts:` — `[{id, store: N|all, when: {…}, cap: "1/visit"|"1/30m", quiet: "22:00-07:00"}]` — read
/// strictly: a store, department or member field the stores do not have is an error naming the key.
extension YAMLReader {
    func alertRules(_ node: Node, stores: [CoordinatorConfiguration.Store]) throws(ConfigurationError) -> [AlertRule] {
        var rules: [AlertRule] = []
        for (index, item) in try sequence(node, at: "alerts").enumerated() {
            let rule = try alertRule(item, at: "alerts[\(index)]", stores: stores)
            if rules.contains(where: { $0.id == rule.id }) { throw error(item, "alerts[\(index)].id '\(rule.id)' appears twice") }
            rules.append(rule)
        }
        return rules
    }

    private func alertRule(_ node: Node, at place: String, stores: [CoordinatorConfiguration.Store]) throws(ConfigurationError) -> AlertRule
    {
        let fields = try mapping(node, at: place, allowed: ["id", "store", "when", "cap", "quiet"])
        guard let idNode = fields["id"], let storeNode = fields["store"], let whenNode = fields["when"] else {
            throw error(node, "\(place) needs id, store and when")
        }
        let id = try string(idNode, at: "\(place).id")
        guard !id.isEmpty, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw error(idNode, "\(place).id must be a name of letters, digits, - and _, such as vip-arrived (found '\(id)')")
        }
        let scope: AlertRule.Stores
        let storeText = try string(storeNode, at: "\(place).store")
        if storeText == "all" {
            scope = .all
        } else if let number = UInt16(storeText), stores.contains(where: { $0.id == number }) {
            scope = .one(number)
        } else {
            throw error(
                storeNode,
                "\(place).store must be all or one of the stores (\(stores.map { "\($0.id)" }.joined(separator: ", "))), not '\(storeText)'"
            )
        }
        let watched = stores.filter { scope.contains($0.id) }
        var rule = AlertRule(id: id, stores: scope, when: try condition(whenNode, at: "\(place).when", stores: watched))
        if let cap = fields["cap"] { rule.cap = try alertCap(cap, at: "\(place).cap") }
        if let quiet = fields["quiet"] {
            let text = try string(quiet, at: "\(place).quiet")
            guard let hours = PromoWindow.Hours(text) else {
                throw error(quiet, "\(place).quiet must be local hours HH:MM-HH:MM, such as 22:00-07:00 (found '\(text)')")
            }
            rule.quiet = hours
        }
        return rule
    }

    private func condition(_ node: Node, at place: String, stores: [CoordinatorConfiguration.Store]) throws(ConfigurationError)
        -> AlertRule.Condition
    {
        let kinds = try mapping(node, at: place, allowed: ["memberArrived", "dwell", "nodeOffline", "storeUndecided"])
        guard kinds.count == 1, let (kind, body) = kinds.first else {
            throw error(node, "\(place) must name one of memberArrived, dwell, nodeOffline, storeUndecided")
        }
        let inner = "\(place).\(kind)"
        switch kind {
        case "memberArrived":
            let fields = try mapping(body, at: inner, allowed: ["member", "department"])
            guard let member = fields["member"] else { throw error(body, "\(inner) needs member: {FIELD: VALUE}") }
            var wanted: [String: String] = [:]
            guard case .mapping(let pairs) = member, !pairs.isEmpty else {
                throw error(member, "\(inner).member must be a mapping of member fields to values, such as {tier: vip}")
            }
            for (key, value) in pairs {
                guard let name = key.string, !name.isEmpty,
                    name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
                else { throw error(key, "\(inner).member has a field that is not a CSV column name (letters, digits, _ and -)") }
                wanted[name] = try string(value, at: "\(inner).member.\(name)")
            }
            var only: UInt16?
            if let departmentNode = fields["department"] {
                only = try department(departmentNode, at: "\(inner).department", stores: stores)
            }
            return .memberArrived(fields: wanted, department: only)
        case "dwell":
            let fields = try mapping(body, at: inner, allowed: ["department", "over"])
            guard let departmentNode = fields["department"], let over = fields["over"] else {
                throw error(body, "\(inner) needs department and over, such as {department: 30, over: 10m}")
            }
            return .dwell(
                department: try department(departmentNode, at: "\(inner).department", stores: stores),
                over: try length(over, at: "\(inner).over"))
        default:
            let fields = try mapping(body, at: inner, allowed: ["over"])
            guard let over = fields["over"] else { throw error(body, "\(inner) needs over, such as {over: 2m}") }
            let length = try length(over, at: "\(inner).over")
            return kind == "nodeOffline" ? .nodeOffline(over: length) : .storeUndecided(over: length)
        }
    }

    private func department(_ node: Node, at place: String, stores: [CoordinatorConfiguration.Store]) throws(ConfigurationError) -> UInt16 {
        let number = try uint16(node, at: place)
        guard stores.contains(where: { $0.departments.contains { $0.id == number } }) else {
            throw error(node, "\(place) \(number) is not a department of the rule's stores")
        }
        return number
    }

    private func length(_ node: Node, at place: String) throws(ConfigurationError) -> Duration {
        let length = try duration(node, at: place)
        guard length > .zero else { throw error(node, "\(place) must be longer than 0s") }
        return length
    }

    private func alertCap(_ node: Node, at place: String) throws(ConfigurationError) -> AlertRule.Cap {
        let text = try string(node, at: place)
        if text == "1/visit" { return .oncePerVisit }
        if text.hasPrefix("1/"), let period = DurationText.parse(String(text.dropFirst(2))), period > .zero { return .oncePer(period) }
        throw error(node, "\(place) must be 1/visit or 1/DURATION, such as 1/30m (found '\(text)')")
    }
}
