extension PresenceEngine {
    /// The visit of `member`, open or recently left.
    public func visit(of member: String) -> Visit? { memberNumbers[member].flatMap { members[Int($0)].visit } }

    /// Every visit the engine holds, for persistence.
    public var visits: [Visit] { memberNumbers.values.compactMap { members[Int($0)].visit } }

    /// How many member slots the engine has: `visits(inSlots:)` takes ranges of `0..<memberSlots`.
    public var memberSlots: Int { members.count }

    /// The visits of the members in a range of slots, for saving the visits a slice at a time.
    public func visits(inSlots slots: Range<Int>) -> [Visit] {
        slots.clamped(to: members.indices).compactMap { members[$0].visit }
    }

    /// How many people (members with a reading or a visit, and guests) the engine tracks, for health.
    public var trackedCount: Int { trackedMembers + guests.count }

    /// The earliest time at which a tick or `expireVisits` may have something to do (a member's reading going
    /// stale, an exit, a switch dwell, an arrival settling, a guest's reading going stale or old, a visit to
    /// forget); `nil` when nothing waits. Ticks before then change nothing, so a caller may sleep until then or
    /// until the next input, whichever comes first. It may be early (a tick then finds nothing due).
    public var nextDeadline: Timestamp? {
        let earliest = [memberDeadlines.first?.deadline, guests.nextDeadline, visitExpiries.first?.deadline].compactMap { $0 }.min()
        return earliest.map { Timestamp(milliseconds: $0) }
    }

    /// Whether `member` was heard `immediate` or `near` in `department` of `store` within `window` before `now`
    /// (by a node or their phone) — what a till check-in asks.
    public func heardNear(member: String, store: UInt16, department: UInt16, within window: Duration, at now: Timestamp) -> Bool {
        guard let number = memberNumbers[member] else { return false }
        return members[Int(number)].readings.contains { reading in
            reading.store == store && reading.department == department
                && (reading.proximity == .immediate || reading.proximity == .near)
                && now.milliseconds - reading.lastSeen <= window.wholeMilliseconds
        }
    }

    /// Members in `store` now, with their visit, newest arrival first.
    public func presentMembers(store: UInt16) -> [Visit] {
        presentMembers(store: store, sorted: true)
    }

    /// Members in `store` now, with their visit: newest arrival first when `sorted`, else in no particular order
    /// (for a caller that sorts them later, off the decisions' task).
    public func presentMembers(store: UInt16, sorted: Bool) -> [Visit] {
        let visits = (presentByStore[store] ?? []).compactMap { members[Int($0)].visit }
        return sorted ? visits.sorted(by: Visit.newestFirst) : visits
    }

    /// Members in each store now, newest arrival first within a store (in no particular order unless `sorted`);
    /// only the stores in `stores` when given, and only stores with someone in them. Costs the members present, not
    /// every member.
    public func presentMembersByStore(in stores: Set<UInt16>? = nil, sorted: Bool = true) -> [UInt16: [Visit]] {
        var byStore: [UInt16: [Visit]] = [:]
        for store in stores.map(Array.init) ?? Array(presentByStore.keys) {
            let visits = presentMembers(store: store, sorted: sorted)
            if !visits.isEmpty { byStore[store] = visits }
        }
        return byStore
    }

    /// Guests per department of `store` at `now`: beacons of no member with a fresh reading there, each in the
    /// department of its best one. Costs the store's departments (plus the guests whose reading went stale since
    /// the last tick), not every guest.
    public func guestCounts(store: UInt16, at now: Timestamp) -> [UInt16: Int] {
        guests.counts(store: store, at: now.milliseconds)
    }

    /// Guests per department of every store at `now`: a guest counts in each store where it has a fresh reading,
    /// in the department of its best one there. Costs the departments (plus the guests whose reading went stale
    /// since the last tick), not every guest — unless `now` is before the latest input or tick (a clock set back),
    /// which walks every guest.
    public func guestCountsByStore(at now: Timestamp) -> [UInt16: [UInt16: Int]] {
        guests.countsByStore(at: now.milliseconds)
    }

    /// Every node the engine has heard of, with its state and how far its clock is ahead of ours (milliseconds,
    /// negative when behind), ordered by address.
    public var nodeClocks: [(node: NodeAddress, state: LinkState, clockSkew: Int64)] {
        nodes.filter { !$0.isPhone }.map { ($0.address, $0.state, $0.clock.skew) }.sorted { $0.node < $1.node }
    }

    /// The nodes of `store` the engine has heard of, with their state.
    public func nodeStates(store: UInt16) -> [(node: NodeAddress, state: LinkState)] {
        (nodesByStore[store] ?? []).map { (nodes[Int($0)].address, nodes[Int($0)].state) }.sorted { $0.node < $1.node }
    }
}

extension PresenceEngine {
    /// Who owns each beacon, as the directory holds it: a pass over the members and their beacons, for the
    /// coordinator's local cache, never for a message.
    public var beaconOwners: [BeaconKey: String] {
        var ids = [String](repeating: "", count: members.count)
        for (id, number) in memberNumbers { ids[Int(number)] = id }
        var result: [BeaconKey: String] = [:]
        result.reserveCapacity(owners.keys.count)
        for (index, beacon) in owners.keys.enumerated() { result[beacon] = ids[Int(owners.values[index])] }
        return result
    }
}
