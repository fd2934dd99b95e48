/// Everything the full-screen monitor shows about one store, updated from snapshots, events and the broker link.
///
/// A pure value: it never reads a clock. Every change takes the time it happened (`at`), and every question about
/// something that fades (an arrival highlight, the "Presence change" flash) takes the time it is asked (`at`).
public struct MonitorModel: Sendable {
    /// How long a member who just arrived stays highlighted.
    public static let arrivalHighlight: Duration = .milliseconds(1500)
    /// How long "Presence change" stays on the status line after a change.
    public static let presenceChangeFlash: Duration = .seconds(1)
    /// How many promos the panel remembers.
    public static let recentPromoLimit = 5

    /// The store this monitor watches.
    public let store: UInt16
    /// The broker as the status line names it, e.g. `mqtt://127.0.0.1:1883`.
    public let broker: String

    /// The latest presence snapshot, or `nil` until the first one arrives.
    public private(set) var snapshot: PresenceSnapshot?
    /// The last promos offered, newest first, at most `recentPromoLimit`.
    public private(set) var recentPromos: [RecentPromo] = []
    /// Whether the broker connection is up.
    public private(set) var connection: Connection = .connecting
    /// When the last snapshot or event was received; `nil` before the first.
    public private(set) var lastUpdate: Timestamp?
    /// Messages that could not be read (bad JSON, wrong store), counted for the status line.
    public private(set) var droppedMessages = 0
    /// Department names learnt from snapshots and events, for the node and occupancy panels.
    public private(set) var departmentNames: [UInt16: String] = [:]
    /// The "near the till" list, when this is a till's view (`beacon-monitor --till DEPT`).
    public private(set) var till: TillPanel?
    /// The last check-in decided at this store (accepted or refused), newest first, at most `recentCheckinLimit`.
    public private(set) var recentCheckins: [RecentCheckin] = []
    /// The store's latest alert (the monitor shows it on a highlighted line of its own until the next).
    public private(set) var latestAlert: Alert?
    public static let recentCheckinLimit = 5

    /// Member id → end of that member's arrival highlight.
    private var highlightDeadlines: [String: Timestamp] = [:]
    /// End of the "Presence change" flash.
    private var presenceChangeDeadline: Timestamp?
    /// Ids of recent events, so a QoS 1 redelivery is not applied twice.
    private var recentEventIDs: [String] = []

    /// A model of `store`'s view; `tillDepartment` adds the "near the till" list of that department.
    public init(store: UInt16, broker: String, tillDepartment: UInt16? = nil) {
        self.store = store
        self.broker = broker
        self.till = tillDepartment.map(TillPanel.init(department:))
    }

    /// A check-in the store decided: who, and accepted (with the member's count) or refused (with the reason).
    public struct RecentCheckin: Hashable, Sendable {
        public var member: String
        public var accepted: Bool
        /// The member's count after an accepted check-in; the contract's reason of a refused one.
        public var detail: String
        public var at: Timestamp
    }

    /// The state of the broker link.
    public enum Connection: Hashable, Sendable {
        /// Not connected yet since the monitor started.
        case connecting
        /// Connected; snapshots and events flow.
        case connected
        /// The connection was lost at this time; what is shown may be out of date until it comes back.
        case lost(since: Timestamp)
    }

    /// One promo offered to a member, as the promos panel lists it.
    public struct RecentPromo: Hashable, Sendable {
        public var memberName: String
        public var departmentName: String
        public var title: String
        public var at: Timestamp
    }

    // MARK: Changes

    /// Takes a new presence snapshot received `at`.
    ///
    /// Members who were not in the previous snapshot are highlighted; on the first snapshot only those who arrived
    /// within `arrivalHighlight` of `at` are, so starting the monitor does not light up the whole store. A change in
    /// who is where (not a periodic republish) flashes "Presence change".
    public mutating func apply(snapshot new: PresenceSnapshot, at now: Timestamp) {
        guard new.store == store else {
            droppedMessages += 1
            return
        }
        expire(at: now)
        if let old = snapshot {
            let before = Set(old.members.map(\.member.id))
            for present in new.members where !before.contains(present.member.id) {
                highlightDeadlines[present.member.id] = now + Self.arrivalHighlight
            }
            if Self.whereabouts(old) != Self.whereabouts(new) {
                presenceChangeDeadline = now + Self.presenceChangeFlash
            }
        } else {
            for present in new.members where now - present.arrivedAt < Self.arrivalHighlight {
                highlightDeadlines[present.member.id] = now + Self.arrivalHighlight
            }
        }
        for (department, occupancy) in new.occupancy { if let name = occupancy.name { departmentNames[department] = name } }
        for present in new.members {
            if let department = present.department, let name = present.departmentName { departmentNames[department] = name }
        }
        snapshot = new
        till?.apply(new, at: now)
        lastUpdate = now
    }

    /// Takes a store event received `at`: an arrival highlights its member, promos join the panel; arrivals, moves,
    /// departures and node changes show at once in the members and nodes (the next snapshot confirms them: it may
    /// come up to 250 ms later). An event already seen (same `id`) changes nothing.
    public mutating func apply(event: StoreEvent, at now: Timestamp) {
        guard event.store == store else {
            droppedMessages += 1
            return
        }
        guard !recentEventIDs.contains(event.id) else { return }
        recentEventIDs.append(event.id)
        if recentEventIDs.count > 64 { recentEventIDs.removeFirst() }
        expire(at: now)
        lastUpdate = now
        switch event.kind {
        case .arrived(let member, let department, let departmentName, let visit, _, let evidence):
            highlightDeadlines[member.id] = now + Self.arrivalHighlight
            showPresent(
                member, visit: visit, department: department, departmentName: departmentName, evidence: evidence, at: event.at, now: now)
        case .resumed(let member, let department, let departmentName, let visit, let evidence):
            // Back within the visit gap: shown again, not highlighted as a new arrival.
            showPresent(
                member, visit: visit, department: department, departmentName: departmentName, evidence: evidence, at: event.at, now: now)
        case .moved(let member, let from, let to, let fromName, let toName, let evidence):
            departmentNames[from] = fromName
            departmentNames[to] = toName
            presenceChangeDeadline = now + Self.presenceChangeFlash
            if var current = snapshot, let index = current.members.firstIndex(where: { $0.member.id == member.id }),
                current.members[index].department != to
            {
                if let old = current.members[index].department { current.occupancy[old]?.members -= 1 }
                current.occupancy[to, default: .init(members: 0, guests: 0, name: toName)].members += 1
                current.members[index].department = to
                current.members[index].departmentName = toName
                current.members[index].inDepartmentSince = event.at
                current.members[index].confidence = evidence?.confidence
                snapshot = current
            }
        case .left(let member, _, _):
            presenceChangeDeadline = now + Self.presenceChangeFlash
            if var current = snapshot, let index = current.members.firstIndex(where: { $0.member.id == member.id }) {
                if let old = current.members[index].department { current.occupancy[old]?.members -= 1 }
                current.members.remove(at: index)
                snapshot = current
            }
        case .promo(let member, let department, let departmentName, let promo):
            departmentNames[department] = departmentName
            recentPromos.insert(
                RecentPromo(memberName: member.name, departmentName: departmentName, title: promo.title, at: event.at),
                at: 0)
            if recentPromos.count > Self.recentPromoLimit { recentPromos.removeLast() }
        case .node(let department, let node, let state):
            guard var current = snapshot else { return }
            if let index = current.nodes.firstIndex(where: { $0.department == department && $0.node == node }) {
                current.nodes[index].state = state
            } else {
                current.nodes.append(.init(department: department, node: node, state: state))
            }
            snapshot = current
        case .checkin(let member, _, _, _, let checkins, _):
            noteCheckin(RecentCheckin(member: member.name, accepted: true, detail: "check-in \(checkins)", at: event.at))
        case .checkinRefused(_, let member, _, let reason):
            let name = snapshot?.members.first { $0.member.id == member }?.member.name ?? member
            noteCheckin(RecentCheckin(member: name, accepted: false, detail: reason.rawValue, at: event.at))
        }
    }

    /// Shows `member` present in `department` from `time` (an arrival or a resumed visit) until the next snapshot says.
    private mutating func showPresent(
        _ member: MemberProfile, visit: VisitNumber, department: UInt16, departmentName: String, evidence: DecisionEvidence?,
        at time: Timestamp, now: Timestamp
    ) {
        departmentNames[department] = departmentName
        presenceChangeDeadline = now + Self.presenceChangeFlash
        guard var current = snapshot, !current.members.contains(where: { $0.member.id == member.id }) else { return }
        var profile = member
        profile.visits = visit.number
        current.members.insert(
            .init(
                member: profile, department: department, departmentName: departmentName, proximity: .unknown, arrivedAt: time,
                inDepartmentSince: time, lastSeen: time, confidence: evidence?.confidence),
            at: 0)
        current.occupancy[department, default: .init(members: 0, guests: 0, name: departmentName)].members += 1
        snapshot = current
    }

    /// Takes a change of the broker link at `now`. Losing it keeps everything shown, marked stale.
    /// Takes an alert from the store's `alerts` topic.
    public mutating func apply(alert: Alert, at now: Timestamp) {
        latestAlert = alert
        lastUpdate = now
    }

    public mutating func connection(changed connected: Bool, at now: Timestamp) {
        if connected {
            connection = .connected
        } else if case .lost = connection {
            return  // still lost: keep the time it was first lost
        } else {
            connection = .lost(since: now)
        }
    }

    /// Counts a message that could not be read.
    public mutating func noteDroppedMessage() {
        droppedMessages += 1
    }

    // MARK: Questions

    /// Whether `memberID` is still highlighted as a new arrival at `now`.
    public func isHighlighted(_ memberID: String, at now: Timestamp) -> Bool {
        guard let deadline = highlightDeadlines[memberID] else { return false }
        return now < deadline
    }

    /// Whether the status line shows "Presence change" at `now`.
    public func showsPresenceChange(at now: Timestamp) -> Bool {
        guard let deadline = presenceChangeDeadline else { return false }
        return now < deadline
    }

    /// Whether what is shown may be out of date: the broker link is lost.
    public var isStale: Bool {
        if case .lost = connection { return true }
        return false
    }

    /// Members in the store, newest arrival first (then by name, so equal times do not shuffle).
    public var membersByArrival: [PresenceSnapshot.PresentMember] {
        (snapshot?.members ?? []).sorted {
            $0.arrivedAt != $1.arrivedAt ? $0.arrivedAt > $1.arrivedAt : $0.member.name < $1.member.name
        }
    }

    /// The name of `department`, or `Dept N` when no snapshot or event has named it yet.
    public func departmentName(_ department: UInt16) -> String {
        departmentNames[department] ?? "Dept \(department)"
    }

    // MARK: Private

    /// Who is in which department (`nil`: unknown): what a "Presence change" is about (a proximity that wavers is not).
    private static func whereabouts(_ snapshot: PresenceSnapshot) -> [String: UInt16?] {
        Dictionary(snapshot.members.map { ($0.member.id, $0.department) }, uniquingKeysWith: { first, _ in first })
    }

    /// Forgets highlights that have ended, so the table of deadlines does not grow.
    private mutating func expire(at now: Timestamp) {
        highlightDeadlines = highlightDeadlines.filter { now < $0.value }
        till?.prune(at: now)
    }

    private mutating func noteCheckin(_ checkin: RecentCheckin) {
        recentCheckins.insert(checkin, at: 0)
        if recentCheckins.count > Self.recentCheckinLimit { recentCheckins.removeLast() }
    }

    /// Drops members last heard near the till too long ago (the view calls it on every tick).
    public mutating func tick(at now: Timestamp) {
        expire(at: now)
    }
}
