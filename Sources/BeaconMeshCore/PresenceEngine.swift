#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Works out which member is in which department of which store, from sighting batches, node status and ticks.
///
/// A pure state machine in the manner of a protocol state handler: every input method takes the current time and
/// returns `Output`s for the caller to act on (publish an event, persist a visit, republish a snapshot). Nothing in
/// here reads a clock, touches the network or the disk.
///
/// The rules, as the contract promises them:
/// - a member is identified by any of their beacons; all of them together make one presence;
/// - the department is the strongest fresh reading (`staleAfter`), per node smoothed over time; switching needs
///   `switchMargin` dB for `switchDwell`; when the current department has no fresh reading left, the best fresh
///   one takes over at once; proximity breaks ties;
/// - `exitAfter` without any fresh reading ends the presence with `left`; returning within `visitGap` continues
///   the visit without a second `arrived`;
/// - `lost` lists and offline nodes remove readings at once; batches are ordered per node by `boot`/`seq`.
public struct PresenceEngine: Sendable {
    /// What the caller must do after an input.
    public enum Output: Hashable, Sendable {
        /// A new visit began: greet the member and count the visit.
        case arrived(member: String, store: UInt16, department: UInt16, at: Timestamp)
        /// The member came back within `visitGap`: the visit goes on, nobody is greeted.
        case resumed(member: String, store: UInt16, department: UInt16, at: Timestamp)
        case moved(member: String, store: UInt16, from: UInt16, to: UInt16, at: Timestamp)
        /// The member left; `dwell` is the length of the whole visit up to the last reading.
        case left(member: String, store: UInt16, department: UInt16, dwell: Duration, at: Timestamp)
        case node(NodeAddress, LinkState, at: Timestamp)
        /// Something a store's snapshot shows changed.
        case presenceChanged(store: UInt16)
    }

    /// Why a batch was not applied.
    public enum BatchVerdict: Hashable, Sendable {
        case applied
        /// Same boot, a sequence number already seen (a QoS 1 redelivery).
        case duplicate
        /// Same boot, older than one already applied.
        case late
        /// The node is offline in this boot (its last will came first); its readings do not count.
        case nodeOffline
        /// The store is not served here.
        case unknownStore
    }

    /// A member's visit as it must survive a restart.
    public struct Visit: Hashable, Sendable {
        public var member: String
        public var store: UInt16
        public var arrivedAt: Timestamp
        public var department: UInt16
        public var inDepartmentSince: Timestamp
        public var lastSeen: Timestamp
        /// When `left` was announced; `nil` while the member is in the store.
        public var leftAt: Timestamp?
        public var proximity: Proximity

        public init(
            member: String, store: UInt16, arrivedAt: Timestamp, department: UInt16, inDepartmentSince: Timestamp,
            lastSeen: Timestamp, leftAt: Timestamp?, proximity: Proximity = .unknown
        ) {
            self.member = member
            self.store = store
            self.arrivedAt = arrivedAt
            self.department = department
            self.inDepartmentSince = inDepartmentSince
            self.lastSeen = lastSeen
            self.leftAt = leftAt
            self.proximity = proximity
        }
    }

    /// Counters of what the engine applied and refused.
    public struct Counters: Hashable, Sendable {
        public var batches: UInt64 = 0
        public var sightings: UInt64 = 0
        public var duplicates: UInt64 = 0
        public var late: UInt64 = 0
        public var gaps: UInt64 = 0
        public var fromOfflineNodes: UInt64 = 0
        public init() {}
    }

    /// One node's latest smoothed reading of one person (member or guest).
    struct Reading: Sendable {
        var node: NodeAddress
        var rssi: Double
        var proximity: Proximity
        var lastSeen: Timestamp
    }

    struct Person: Sendable {
        var readings: [Reading] = []
        var firstHeard: Timestamp?
        var visit: Visit?
        var challenger: (department: UInt16, since: Timestamp)?
    }

    struct NodeTrack: Sendable {
        var state: LinkState
        var boot: String?
        var lastSeq: UInt64
    }

    /// Time constant of the per-node smoothing of batch readings.
    static let smoothing: Duration = .milliseconds(600)

    private let defaultRules: PresenceRules
    private var departments: [UInt16: [UInt16: PresenceRules]]
    private var owners: [BeaconKey: String] = [:]
    private var members: [String: Person] = [:]
    private var guests: [BeaconKey: Person] = [:]
    private var nodes: [NodeAddress: NodeTrack] = [:]
    public private(set) var counters = Counters()

    /// An engine for the given stores (store id → its departments), with `rules` where a department sets none.
    public init(rules: PresenceRules, stores: [UInt16: [DepartmentLayout]]) {
        defaultRules = rules
        departments = stores.mapValues { layouts in
            Dictionary(layouts.map { ($0.id, $0.rules) }, uniquingKeysWith: { first, _ in first })
        }
    }

    // MARK: Directory and restart

    /// Replaces which beacon belongs to which member. Beacons of no member are guests.
    /// A member who is no longer in the directory is forgotten at once; returns the stores whose snapshot changed.
    public mutating func setDirectory(_ beaconOwners: [BeaconKey: String]) -> [Output] {
        owners = beaconOwners
        let known = Set(beaconOwners.values)
        var changedStores: Set<UInt16> = []
        for (id, person) in members where !known.contains(id) {
            if let visit = person.visit { changedStores.insert(visit.store) }
            members[id] = nil
        }
        for key in guests.keys where beaconOwners[key] != nil { guests[key] = nil }
        return changedStores.sorted().map { .presenceChanged(store: $0) }
    }

    /// Restores visits saved before a restart (open ones and recently left ones, for `visitGap`).
    public mutating func restore(_ visits: [Visit]) {
        for visit in visits where departments[visit.store] != nil {
            members[visit.member, default: Person()].visit = visit
        }
    }

    /// Restores what the engine knew of a node (from its retained status), without emitting events.
    public mutating func restoreNode(_ node: NodeAddress, state: LinkState, boot: String?) {
        nodes[node] = NodeTrack(state: state, boot: boot, lastSeq: 0)
    }

    /// The visit of `member`, open or recently left.
    public func visit(of member: String) -> Visit? { members[member]?.visit }

    /// Every visit the engine holds, for persistence.
    public var visits: [Visit] { members.values.compactMap(\.visit) }

    /// How many beacons and members the engine tracks (for health).
    public var trackedCount: Int { members.count + guests.count }

    // MARK: Inputs

    /// Applies one node's batch received at `now`.
    public mutating func ingest(_ batch: SightingBatch, at now: Timestamp) -> (verdict: BatchVerdict, outputs: [Output]) {
        let node = batch.node
        guard departments[node.store] != nil else { return (.unknownStore, []) }
        var outputs: [Output] = []
        var track = nodes[node] ?? NodeTrack(state: .online, boot: nil, lastSeq: 0)
        if track.boot == batch.boot {
            if track.state == .offline {
                counters.fromOfflineNodes += 1
                return (.nodeOffline, [])
            }
            if batch.seq == track.lastSeq {
                counters.duplicates += 1
                return (.duplicate, [])
            }
            if batch.seq < track.lastSeq {
                counters.late += 1
                return (.late, [])
            }
            if batch.seq > track.lastSeq + 1 { counters.gaps += batch.seq - track.lastSeq - 1 }
        } else {
            if track.state == .offline || nodes[node] == nil {
                outputs.append(.node(node, .online, at: now))
                outputs.append(.presenceChanged(store: node.store))
            }
            track.state = .online
            track.boot = batch.boot
        }
        track.lastSeq = batch.seq
        nodes[node] = track
        counters.batches += 1
        counters.sightings += UInt64(batch.sightings.count)

        var touched: Set<String> = []
        for sighting in batch.sightings {
            let reading = Reading(node: node, rssi: sighting.rssi, proximity: sighting.proximity, lastSeen: min(sighting.lastSeen, now))
            if let member = owners[sighting.beacon] {
                members[member, default: Person()].absorb(reading, now: now)
                touched.insert(member)
            } else {
                guests[sighting.beacon, default: Person()].absorb(reading, now: now)
            }
        }
        for beacon in batch.lost {
            if let member = owners[beacon] {
                members[member]?.readings.removeAll { $0.node == node }
                touched.insert(member)
            } else {
                guests[beacon]?.readings.removeAll { $0.node == node }
            }
        }
        if !batch.sightings.isEmpty || !batch.lost.isEmpty { outputs.append(.presenceChanged(store: node.store)) }
        for member in touched.sorted() { outputs += evaluate(member: member, at: now) }
        return (.applied, outputs)
    }

    /// Applies a node's status change (its retained status or last will).
    public mutating func nodeStatusChanged(_ node: NodeAddress, state: LinkState, boot: String?, at now: Timestamp) -> [Output] {
        guard departments[node.store] != nil else { return [] }
        let previous = nodes[node]
        if let previous, previous.state == state, state == .offline || previous.boot == boot { return [] }
        nodes[node] = NodeTrack(state: state, boot: boot ?? previous?.boot, lastSeq: previous?.boot == boot ? previous?.lastSeq ?? 0 : 0)
        var outputs: [Output] = [.node(node, state, at: now), .presenceChanged(store: node.store)]
        if state == .offline {
            var affected: [String] = []
            for (id, person) in members where person.readings.contains(where: { $0.node == node }) {
                members[id]?.readings.removeAll { $0.node == node }
                affected.append(id)
            }
            for key in guests.keys { guests[key]?.readings.removeAll { $0.node == node } }
            for member in affected.sorted() { outputs += evaluate(member: member, at: now) }
        }
        return outputs
    }

    /// Advances time: settles arrivals, completes switches whose dwell has passed, ends presences, drops old state.
    public mutating func tick(at now: Timestamp) -> [Output] {
        var outputs: [Output] = []
        for member in members.keys.sorted() { outputs += evaluate(member: member, at: now) }
        var guestsChanged: Set<UInt16> = []
        for (key, guest) in guests {
            let fresh = guest.readings.filter { now - $0.lastSeen < defaultRules.exitAfter }
            if fresh.count != guest.readings.count {
                for reading in guest.readings { guestsChanged.insert(reading.node.store) }
                if fresh.isEmpty { guests[key] = nil } else { guests[key]?.readings = fresh }
            }
        }
        outputs += guestsChanged.sorted().map { .presenceChanged(store: $0) }
        return outputs
    }

    // MARK: Decisions

    private mutating func evaluate(member id: String, at now: Timestamp) -> [Output] {
        guard var person = members[id] else { return [] }
        defer { members[id] = person }
        var outputs: [Output] = []
        let inStore = person.visit.flatMap { $0.leftAt == nil ? $0.store : nil }
        let fresh = freshDepartments(of: person, store: inStore, at: now)
        let lastHeard = person.readings.map(\.lastSeen).max()

        if var visit = person.visit, visit.leftAt == nil {
            // In the store: leave, switch, or stay.
            if let lastHeard, lastHeard > visit.lastSeen { visit.lastSeen = lastHeard }
            let rules = self.rules(store: visit.store, department: visit.department)
            if now - visit.lastSeen >= rules.exitAfter && fresh.isEmpty {
                visit.leftAt = now
                person.visit = visit
                person.readings.removeAll()
                person.challenger = nil
                person.firstHeard = nil
                outputs.append(.left(member: id, store: visit.store, department: visit.department,
                                     dwell: visit.lastSeen - visit.arrivedAt, at: now))
                outputs.append(.presenceChanged(store: visit.store))
                return outputs
            }
            guard let best = fresh.first else {
                person.visit = visit
                return outputs
            }
            let current = fresh.first { $0.department == visit.department }
            if let current { visit.proximity = current.proximity }
            if best.department == visit.department {
                person.challenger = nil
            } else if current == nil {
                outputs += switchDepartment(&visit, to: best, member: id, at: now)
                person.challenger = nil
            } else if let current, best.rssi >= current.rssi + self.rules(store: visit.store, department: best.department).switchMargin {
                let dwell = self.rules(store: visit.store, department: best.department).switchDwell
                if let challenger = person.challenger, challenger.department == best.department {
                    if now - challenger.since >= dwell {
                        outputs += switchDepartment(&visit, to: best, member: id, at: now)
                        person.challenger = nil
                    }
                } else {
                    person.challenger = (best.department, now)
                    if dwell <= .zero {
                        outputs += switchDepartment(&visit, to: best, member: id, at: now)
                        person.challenger = nil
                    }
                }
            } else {
                person.challenger = nil
            }
            person.visit = visit
            return outputs
        }

        // Not in any store: arrive (or resume) once the first readings have settled.
        guard let best = fresh.first, let firstHeard = person.firstHeard else {
            person.firstHeard = nil
            return outputs
        }
        let rules = self.rules(store: best.store, department: best.department)
        guard now - firstHeard >= rules.arrivalSettle else { return outputs }
        let lastSeen = lastHeard ?? now
        if let previous = person.visit, previous.store == best.store, let leftAt = previous.leftAt,
           now - leftAt < rules.visitGap {
            var visit = previous
            visit.leftAt = nil
            visit.lastSeen = lastSeen
            visit.proximity = best.proximity
            if visit.department != best.department {
                visit.department = best.department
                visit.inDepartmentSince = now
            }
            person.visit = visit
            outputs.append(.resumed(member: id, store: best.store, department: best.department, at: now))
        } else {
            person.visit = Visit(member: id, store: best.store, arrivedAt: now, department: best.department,
                                 inDepartmentSince: now, lastSeen: lastSeen, leftAt: nil, proximity: best.proximity)
            outputs.append(.arrived(member: id, store: best.store, department: best.department, at: now))
        }
        person.challenger = nil
        outputs.append(.presenceChanged(store: best.store))
        return outputs
    }

    private func switchDepartment(_ visit: inout Visit, to best: DepartmentReading, member: String, at now: Timestamp) -> [Output] {
        let from = visit.department
        visit.department = best.department
        visit.inDepartmentSince = now
        visit.proximity = best.proximity
        return [.moved(member: member, store: visit.store, from: from, to: best.department, at: now),
                .presenceChanged(store: visit.store)]
    }

    struct DepartmentKey: Hashable {
        var store: UInt16
        var department: UInt16
    }

    /// A department's best fresh reading of one person.
    struct DepartmentReading: Sendable {
        var store: UInt16
        var department: UInt16
        var rssi: Double
        var proximity: Proximity
    }

    /// Fresh readings grouped by department (the strongest node of each), strongest first; proximity breaks ties.
    /// Only readings of online nodes in `store` (any served store when `nil`) count.
    private func freshDepartments(of person: Person, store: UInt16?, at now: Timestamp) -> [DepartmentReading] {
        var best: [DepartmentKey: DepartmentReading] = [:]
        for reading in person.readings {
            let node = reading.node
            if let store, node.store != store { continue }
            guard nodes[node]?.state != .offline else { continue }
            let rules = self.rules(store: node.store, department: node.department)
            guard now - reading.lastSeen < rules.staleAfter else { continue }
            let key = DepartmentKey(store: node.store, department: node.department)
            if let existing = best[key], existing.rssi >= reading.rssi { continue }
            best[key] = DepartmentReading(store: node.store, department: node.department, rssi: reading.rssi,
                                          proximity: reading.proximity)
        }
        return best.values.sorted {
            if $0.rssi != $1.rssi { return $0.rssi > $1.rssi }
            if $0.proximity != $1.proximity { return $0.proximity < $1.proximity }
            return ($0.store, $0.department) < ($1.store, $1.department)
        }
    }

    /// The rules of one department: its overrides, else the engine's.
    public func rules(store: UInt16, department: UInt16) -> PresenceRules {
        departments[store]?[department] ?? defaultRules
    }

    // MARK: Views for snapshots

    /// Members in `store` now, with their visit.
    public func presentMembers(store: UInt16) -> [Visit] {
        members.values.compactMap { person in
            guard let visit = person.visit, visit.store == store, visit.leftAt == nil else { return nil }
            return visit
        }.sorted { ($0.arrivedAt, $0.member) > ($1.arrivedAt, $1.member) }
    }

    /// Guests per department of `store`: beacons of no member with a fresh reading there (their strongest).
    public func guestCounts(store: UInt16, at now: Timestamp) -> [UInt16: Int] {
        var counts: [UInt16: Int] = [:]
        for guest in guests.values {
            if let best = freshDepartments(of: guest, store: store, at: now).first { counts[best.department, default: 0] += 1 }
        }
        return counts
    }

    /// The nodes of `store` the engine has heard of, with their state.
    public func nodeStates(store: UInt16) -> [(node: NodeAddress, state: LinkState)] {
        nodes.filter { $0.key.store == store }.map { ($0.key, $0.value.state) }.sorted { $0.node < $1.node }
    }

    /// Forgets visits that ended more than `visitGap` ago; returns the members whose visit ended for good.
    public mutating func expireVisits(at now: Timestamp) -> [String] {
        var expired: [String] = []
        for (id, person) in members {
            guard let visit = person.visit, let leftAt = visit.leftAt else { continue }
            if now - leftAt >= rules(store: visit.store, department: visit.department).visitGap {
                members[id]?.visit = nil
                expired.append(id)
            }
            if members[id]?.visit == nil && person.readings.isEmpty { members[id] = nil }
        }
        return expired.sorted()
    }
}

extension PresenceEngine.Person {
    /// Folds a node's reading into this person's readings, smoothing successive readings of the same node.
    mutating func absorb(_ reading: PresenceEngine.Reading, now: Timestamp) {
        if firstHeard == nil { firstHeard = now }
        if let index = readings.firstIndex(where: { $0.node == reading.node }) {
            let previous = readings[index]
            guard reading.lastSeen >= previous.lastSeen else { return }
            let elapsed = (reading.lastSeen - previous.lastSeen).inSeconds
            let weight = elapsed >= 5 ? 1 : 1 - exp(-elapsed / PresenceEngine.smoothing.inSeconds)
            readings[index].rssi = previous.rssi + weight * (reading.rssi - previous.rssi)
            readings[index].proximity = reading.proximity
            readings[index].lastSeen = reading.lastSeen
        } else {
            readings.append(reading)
        }
    }
}
