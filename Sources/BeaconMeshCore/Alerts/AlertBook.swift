/// The alert rules' memory, pure, with time passed in: who stays where since when, which nodes are offline and which
/// stores undecided since when, and what each rule sent for whom. The coordinator's decisions tell it what they
/// decided (arrivals, moves, departures, node changes, the stores they decide) and tick it; it answers with the
/// alerts due, each within a second of its moment.
///
/// A rule fires on an edge: an arrival (or a move into the rule's department), or a spell — a stay in a
/// department, a node offline, a store undecided — growing past the rule's duration. Then its cap decides: once per
/// visit (for a node or a store, per spell), or at most once per period for that member, node or store. An alert due
/// in the rule's quiet hours (`localMinute`, the store's local time) is not sent, and not sent later.
public struct AlertBook: Sendable {
    /// Whom a rule fired for: a member in a store, a node, a store.
    enum Subject: Hashable, Sendable {
        case member(String, store: UInt16)
        case node(NodeAddress)
        case store(UInt16)
    }

    /// A member present: where, since when (in that department), as the events showed them.
    struct Stay: Sendable {
        var member: MemberProfile
        var department: UInt16
        var departmentName: String
        var since: Timestamp
    }

    /// A node offline since when, and its department's name.
    struct Outage: Sendable {
        var since: Timestamp
        var departmentName: String
    }

    public let rules: [AlertRule]
    private var stays: [Subject: Stay] = [:]
    private var outages: [NodeAddress: Outage] = [:]
    private var undecided: [UInt16: Timestamp] = [:]
    /// What each subject's current visit or spell has had: the rules that sent for it (`oncePerVisit`), and the
    /// spells (rule, start) dealt with — sent, capped or quiet. Forgotten when the visit or spell ends.
    private var current: [Subject: Current] = [:]
    /// When a rule last sent for a subject (`oncePer`), across visits.
    private var lastSent: [RuleSubject: Timestamp] = [:]
    private var nextScan = Timestamp(milliseconds: .min)

    struct Current: Sendable {
        var sentBy: Set<Int> = []
        var spellsDone: Set<SpellStart> = []
    }

    struct SpellStart: Hashable, Sendable {
        var rule: Int
        var since: Timestamp
    }

    struct RuleSubject: Hashable, Sendable {
        var rule: Int
        var subject: Subject
    }

    public init(rules: [AlertRule]) {
        self.rules = rules
    }

    /// Whether any rule watches anything (a coordinator without rules skips the book).
    public var isEmpty: Bool { rules.isEmpty }

    /// `member` arrived in `store`'s `department`.
    public mutating func arrived(
        _ member: MemberProfile, store: UInt16, department: UInt16, departmentName: String, at: Timestamp, localMinute: Int
    ) -> [Alert] {
        let subject = Subject.member(member.id, store: store)
        stays[subject] = Stay(member: member, department: department, departmentName: departmentName, since: at)
        return arrivalAlerts(member, store: store, department: department, departmentName: departmentName, at: at, localMinute: localMinute)
    }

    /// `member` moved into `department` of `store`: a new stay there, and an arrival for rules about that department.
    public mutating func moved(
        _ member: MemberProfile, store: UInt16, to department: UInt16, departmentName: String, at: Timestamp, localMinute: Int
    ) -> [Alert] {
        stays[.member(member.id, store: store)] = Stay(member: member, department: department, departmentName: departmentName, since: at)
        return arrivalAlerts(
            member, store: store, department: department, departmentName: departmentName, at: at, localMinute: localMinute,
            departmentRulesOnly: true)
    }

    /// `member` came back to `department` of `store` within the visit gap: a stay there is timed from now (a dwell
    /// alert counts the resumed stay); no arrival is told, since the visit goes on.
    public mutating func resumed(_ member: MemberProfile, store: UInt16, in department: UInt16, departmentName: String, at: Timestamp) {
        stays[.member(member.id, store: store)] = Stay(member: member, department: department, departmentName: departmentName, since: at)
    }

    /// `member` left `store`: the visit ends, and with it what was sent in it.
    public mutating func left(member: String, store: UInt16) {
        let subject = Subject.member(member, store: store)
        stays[subject] = nil
        endSpells(of: subject)
    }

    /// A node went offline or came back.
    public mutating func node(_ node: NodeAddress, online: Bool, departmentName: String, at: Timestamp) {
        if online {
            outages[node] = nil
            endSpells(of: .node(node))
        } else if outages[node] == nil {
            outages[node] = Outage(since: at, departmentName: departmentName)
        }
    }

    /// Whether somebody decides `store` now (a lease held, by this coordinator or another).
    public mutating func store(_ store: UInt16, decided: Bool, at: Timestamp) {
        if decided {
            undecided[store] = nil
            endSpells(of: .store(store))
        } else if undecided[store] == nil {
            undecided[store] = at
        }
    }

    /// The spells grown past a rule's duration by `now` (looked at once a second); `localMinute` gives a store's
    /// local minute after midnight. Alerts of one tick come out in a stable order: by rule, then the spell that began
    /// first, then member id, node or store (so a cap keeps the same ones whatever the dictionaries' order).
    public mutating func tick(at now: Timestamp, localMinute: (UInt16) -> Int) -> [Alert] {
        guard now >= nextScan, !rules.isEmpty else { return [] }
        nextScan = now + .seconds(1)
        var alerts: [Alert] = []
        for (index, rule) in rules.enumerated() {
            switch rule.when {
            case .memberArrived:
                continue
            case .dwell(let department, let over):
                let due = stays.filter { $0.value.department == department && now - $0.value.since >= over }
                for (subject, stay) in due.sorted(by: { ($0.value.since, $0.value.member.id) < ($1.value.since, $1.value.member.id) }) {
                    guard case .member(_, let store) = subject, rule.stores.contains(store) else { continue }
                    let alert = Alert(
                        rule: rule.id, kind: .dwell, store: store, at: now, department: department, departmentName: stay.departmentName,
                        member: stay.member, text: "\(stay.member.name) has been in \(stay.departmentName) for \(Self.words(over))")
                    if let sent = spell(index, subject, since: stay.since, alert, localMinute: localMinute(store)) { alerts.append(sent) }
                }
            case .nodeOffline(let over):
                let due = outages.filter { rule.stores.contains($0.key.store) && now - $0.value.since >= over }
                for (node, outage) in due.sorted(by: {
                    ($0.value.since, $0.key.store, $0.key.department, $0.key.node) < (
                        $1.value.since, $1.key.store, $1.key.department, $1.key.node
                    )
                }) {
                    let alert = Alert(
                        rule: rule.id, kind: .nodeOffline, store: node.store, at: now, department: node.department,
                        departmentName: outage.departmentName, node: node.node,
                        text: "Node \(node.node) of \(outage.departmentName) has been offline for \(Self.words(over))")
                    if let sent = spell(index, .node(node), since: outage.since, alert, localMinute: localMinute(node.store)) {
                        alerts.append(sent)
                    }
                }
            case .storeUndecided(let over):
                let due = undecided.filter { rule.stores.contains($0.key) && now - $0.value >= over }
                for (store, since) in due.sorted(by: { ($0.value, $0.key) < ($1.value, $1.key) }) {
                    // One id for the spell, whoever tells it: every coordinator standing by for the store sees it.
                    var alert = Alert(
                        rule: rule.id, kind: .storeUndecided, store: store, at: now,
                        text: "Nobody has decided store \(store) for \(Self.words(over))")
                    alert.id = "\(rule.id)/store-\(store)/\(since.milliseconds)"
                    if let sent = spell(index, .store(store), since: since, alert, localMinute: localMinute(store)) { alerts.append(sent) }
                }
            }
        }
        forgetOldSends(at: now)
        return alerts
    }

    // MARK: - Rules, caps and quiet hours

    private mutating func arrivalAlerts(
        _ member: MemberProfile, store: UInt16, department: UInt16, departmentName: String, at: Timestamp, localMinute: Int,
        departmentRulesOnly: Bool = false
    ) -> [Alert] {
        var alerts: [Alert] = []
        for (index, rule) in rules.enumerated() {
            guard case .memberArrived(let fields, let wanted) = rule.when, rule.stores.contains(store),
                wanted.map({ $0 == department }) ?? !departmentRulesOnly,
                fields.allSatisfy({ member.customFields[$0.key] == $0.value })
            else { continue }
            let traits = fields.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            let alert = Alert(
                rule: rule.id, kind: .memberArrived, store: store, at: at, department: department, departmentName: departmentName,
                member: member, text: "\(member.name)\(traits.isEmpty ? "" : " (\(traits))") arrived in \(departmentName)")
            if let sent = send(index, .member(member.id, store: store), alert, localMinute: localMinute) { alerts.append(sent) }
        }
        return alerts
    }

    /// A spell past the rule's duration: dealt with once, whatever the cap and the hour say.
    private mutating func spell(_ rule: Int, _ subject: Subject, since: Timestamp, _ alert: Alert, localMinute: Int) -> Alert? {
        guard current[subject, default: Current()].spellsDone.insert(SpellStart(rule: rule, since: since)).inserted else { return nil }
        return send(rule, subject, alert, localMinute: localMinute)
    }

    /// `alert`, unless the rule's quiet hours or its cap keep it.
    private mutating func send(_ rule: Int, _ subject: Subject, _ alert: Alert, localMinute: Int) -> Alert? {
        if let quiet = rules[rule].quiet, quiet.contains(minute: localMinute) { return nil }
        let key = RuleSubject(rule: rule, subject: subject)
        switch rules[rule].cap {
        case .oncePerVisit:
            guard current[subject, default: Current()].sentBy.insert(rule).inserted else { return nil }
        case .oncePer(let period):
            if let last = lastSent[key], alert.at - last < period { return nil }
            lastSent[key] = alert.at
        }
        return alert
    }

    /// A visit or spell ended: what was sent in it no longer counts against `oncePerVisit`, and its spells are gone.
    private mutating func endSpells(of subject: Subject) {
        current[subject] = nil
    }

    /// Sends older than their rule's period no longer hold anything back.
    private mutating func forgetOldSends(at now: Timestamp) {
        lastSent = lastSent.filter { key, at in
            guard case .oncePer(let period) = rules[key.rule].cap else { return false }
            return now - at < period
        }
    }

    /// "10 min", "45 s", "2 h".
    static func words(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        if seconds >= 3600, seconds % 3600 == 0 { return "\(seconds / 3600) h" }
        if seconds >= 60, seconds % 60 == 0 { return "\(seconds / 60) min" }
        return "\(seconds) s"
    }
}
