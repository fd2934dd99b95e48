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
///
/// Inside, members and nodes are numbered (`Int32`) so that a sighting costs a few array accesses and one
/// `BeaconTable` lookup: the engine handles over a million sightings a second on one core. Nothing walks every
/// member or guest per tick, count or message: people wait in `DeadlineQueue`s for the time they next need
/// attention, guests are counted per department as they change (`GuestTracker`), and the members present in each
/// store, the people tracked and each node's listeners are kept up to date as they change.
public struct PresenceEngine: Sendable {
    /// What the caller must do after an input.
    public enum Output: Hashable, Sendable {
        /// A new visit began: greet the member and count the visit; `evidence` says why this department.
        case arrived(member: String, store: UInt16, department: UInt16, at: Timestamp, evidence: DecisionEvidence)
        /// The member came back within `visitGap`: the visit goes on, nobody is greeted.
        case resumed(member: String, store: UInt16, department: UInt16, at: Timestamp)
        /// The member changed department; `evidence` says why.
        case moved(member: String, store: UInt16, from: UInt16, to: UInt16, at: Timestamp, evidence: DecisionEvidence)
        /// The member left; `dwell` is the length of the whole visit up to the last reading.
        case left(member: String, store: UInt16, department: UInt16, dwell: Duration, at: Timestamp)
        case node(NodeAddress, LinkState, at: Timestamp)
        /// Something a store's snapshot shows changed.
        case presenceChanged(store: UInt16)
        /// The member's visit as it stands after an arrival, a resumption, a move or a departure (the outputs just
        /// before this one): what the registry keeps of it.
        case visitChanged(Visit)
    }

    /// What became of a batch.
    public enum BatchVerdict: Hashable, Sendable {
        case applied
        /// Same boot, a sequence number already seen (a QoS 1 redelivery).
        case duplicate
        /// Same boot, older than one already applied.
        case late
        /// The node is offline in this boot (its last will came first) and the batch is not newer than the last one
        /// applied; its readings do not count.
        case nodeOffline
        /// The store is not served here.
        case unknownStore
    }

    /// A member's visit as it must survive a restart.
    public struct Visit: Hashable, Sendable {
        /// The order of snapshots and promos: the newest arrival first, then by member id (descending).
        public static func newestFirst(_ left: Visit, _ right: Visit) -> Bool {
            (left.arrivedAt, left.member) > (right.arrivedAt, right.member)
        }

        public var member: String
        public var store: UInt16
        public var arrivedAt: Timestamp
        public var department: UInt16
        public var inDepartmentSince: Timestamp
        public var lastSeen: Timestamp
        /// When the member counted as gone: `exitAfter` after their last reading (announced then, or by the restart
        /// that found them gone); `nil` while the member is in the store.
        public var leftAt: Timestamp?
        public var proximity: Proximity
        /// How sure the engine is of `department` now (0–1, as on events).
        public var confidence: Double = 1
        /// The evidence no longer says surely which department the member is in ("unknown beats wrong"): the
        /// snapshot lists the member with `department: null`; `department` keeps the last one decided.
        public var departmentUnknown = false

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
        /// Sequence numbers skipped and not (yet) arrived: a late batch or report that fills one takes it back.
        public var gaps: UInt64 = 0
        public var fromOfflineNodes: UInt64 = 0
        /// Ranging reports applied (their ranged beacons count as sightings).
        public var rangingReports: UInt64 = 0
        public init() {}
    }

    /// A member: their readings, their visit and a pending department switch.
    struct Person: Sendable {
        var readings: [Reading] = []
        var firstHeard: Int64?
        var visit: Visit?
        var challengerDepartment: UInt16?
        var challengerSince: Int64 = 0
        /// The challenger's lead over the current department (dB, at most three times `switchMargin`) added up over
        /// the time it has held, in dB·ms; the lead at the last evaluation, and when that was.
        var challengerEvidence: Double = 0
        var challengerLead: Double = 0
        var challengerCheckedAt: Int64 = 0
        /// A department whose latest readings have led the current one's by three times the margin, without a
        /// break, since `decisiveSince`.
        var decisiveDepartment: UInt16?
        var decisiveSince: Int64 = 0
        /// The batch that last touched this person, so a batch evaluates each person once.
        var lastBatch: UInt64 = 0
        /// Milliseconds since the epoch at which time alone (a reading going stale, an exit, a switch dwell, an
        /// arrival settling) could change this person's state; ticks before then skip them.
        var nextCheck: Int64 = 0

        /// Whether the engine counts this member as tracked: heard lately or with a visit to remember.
        var isTracked: Bool { !readings.isEmpty || visit != nil }
    }

    /// What the engine's member indexes hold of one member, to update them when the member changes.
    struct MemberMarks: Equatable, Sendable {
        var tracked: Bool
        /// The store the member is in now.
        var presentIn: UInt16?
        /// The visit that ended, for its expiry: its store, department and end.
        var left: LeftVisit?

        struct LeftVisit: Equatable, Sendable {
            var store: UInt16
            var department: UInt16
            var leftAt: Int64
        }
    }

    /// What the engine knows of a node.
    struct NodeTrack: Sendable {
        var address: NodeAddress
        var state: LinkState
        var boot: String?
        var lastSeq: UInt64
        /// The node's department's `staleAfter`, in milliseconds.
        var staleAfter: Int64
        /// The node's clock against ours: its readings' times are turned into ours with it.
        var clock = SenderClock()
        /// A department as members' phones range it (one track per store and department, shared by all phones).
        var isPhone = false
    }

    /// A member's phone app in one store: its session, order and clock.
    struct PhoneTrack: Sendable {
        var session: String
        var lastSeq: UInt64
        var clock = SenderClock()
    }

    /// Which member's phone in which store.
    struct PhoneKey: Hashable, Sendable {
        var store: UInt16
        var member: Int32
    }

    /// Time constant of the per-node smoothing of batch readings.
    static let smoothing: Duration = .milliseconds(600)

    private let defaultRules: PresenceRules
    private let departments: [UInt16: [UInt16: PresenceRules]]
    /// The same rules in milliseconds, for the lookups of every sighting.
    private let timings: DepartmentTimings
    /// The departments one can walk to from each department that names them (`store << 16 | department`).
    private let neighbours: [UInt32: Set<UInt16>]
    /// Member id → number, and back; numbers of forgotten members are reused.
    private var memberNumbers: [String: Int32] = [:]
    private var memberIDs: [String] = []
    private(set) var members: [Person] = []
    private var freeMemberNumbers: [Int32] = []
    private var owners = BeaconTable<Int32>()
    /// How many beacons each member owns in `owners`, by member number.
    private var beaconCounts: [Int32] = []
    private(set) var guests: GuestTracker
    private(set) var nodeNumbers: [NodeAddress: Int32] = [:]
    private var nodes: [NodeTrack] = []
    /// The batches each node skipped, by node number, and the reports each phone skipped.
    private var missingBatches = MissingSequences<Int32>()
    private var missingReports = MissingSequences<PhoneKey>()
    /// Members by the time they next need a tick (`Person.nextCheck`), and the earliest time queued for each.
    private var memberDeadlines = DeadlineQueue()
    private var memberQueuedAt: [Int64] = []
    /// Members whose visit ended, by the time it is forgotten (`visitGap` after it ended).
    private var visitExpiries = DeadlineQueue()
    /// The members in each store now (an open visit there).
    private var presentByStore: [UInt16: Set<Int32>] = [:]
    /// How many members are tracked (`Person.isTracked`).
    private var trackedMembers = 0
    /// The members each node has had a reading of since it last went offline (some may have lost it since), by
    /// node number.
    private var membersHeardBy: [Set<Int32>] = []
    private var nodesByStore: [UInt16: [Int32]] = [:]
    /// The phone-ranging node of each store and department (`store << 16 | department`).
    private var phoneNodes: [UInt32: Int32] = [:]
    private var phones: [PhoneKey: PhoneTrack] = [:]
    /// Ticks evaluate every person instead of only those whose `nextCheck` has come (tests compare the two).
    var evaluatesEveryoneOnTick = false
    private var batchNumber: UInt64 = 0
    public private(set) var counters = Counters()

    /// An engine for the given stores (store id → its departments), with `rules` where a department sets none.
    public init(rules: PresenceRules, stores: [UInt16: [DepartmentLayout]]) {
        defaultRules = rules
        guests = GuestTracker(exitAfter: rules.exitAfter.wholeMilliseconds)
        departments = stores.mapValues { layouts in
            Dictionary(layouts.map { ($0.id, $0.rules) }, uniquingKeysWith: { first, _ in first })
        }
        timings = DepartmentTimings(
            default: rules, stores: departments,
            minRSSI: stores.mapValues { layouts in
                Dictionary(layouts.compactMap { layout in layout.minRSSI.map { (layout.id, $0) } }, uniquingKeysWith: { first, _ in first })
            })
        var neighbours: [UInt32: Set<UInt16>] = [:]
        for (store, layouts) in stores {
            for layout in layouts { if let near = layout.neighbours { neighbours[UInt32(store) << 16 | UInt32(layout.id)] = near } }
        }
        self.neighbours = neighbours
    }

    // MARK: Directory and restart

    /// Replaces which beacon belongs to which member, and who is a member (`members`: also those with no beacon,
    /// heard only through their phone's ranging reports). Beacons of no member are guests. A member who is no longer
    /// in the directory is forgotten at once; returns the stores whose snapshot changed.
    public mutating func setDirectory(_ beaconOwners: [BeaconKey: String], members allMembers: some Sequence<String> = [String]())
        -> [Output]
    {
        var known = Set(beaconOwners.values)
        known.formUnion(allMembers)
        var changedStores: Set<UInt16> = []
        for id in memberNumbers.keys where !known.contains(id) {
            if let store = forgetMember(id) { changedStores.insert(store) }
        }
        for id in known { _ = memberNumber(for: id) }
        var table = BeaconTable<Int32>()
        beaconCounts = [Int32](repeating: 0, count: members.count)
        for (beacon, id) in beaconOwners {
            let number = memberNumber(for: id)
            table.insert(beacon, number)
            beaconCounts[Int(number)] += 1
            guests.remove(beacon)
        }
        owners = table
        return changedStores.sorted().map { .presenceChanged(store: $0) }
    }

    /// Changes the directory for some members only, as `setDirectory` would with the whole of it: each member in
    /// `changed` now owns exactly the beacons listed (one no longer listed belongs to no one), and the `removed` are
    /// forgotten at once. A member whose beacons are those they had (a count changed: the usual case in a chain,
    /// where every visit counted in another store is announced) costs a lookup per beacon; only members who gave up a
    /// beacon cost a pass over the beacons' owners. Returns the stores whose snapshot changed.
    public mutating func updateDirectory(_ changed: [String: [BeaconKey]], removing removed: Set<String>) -> [Output] {
        // Members whose former beacons must be found (and freed) by a pass over the table.
        var giveUp: Set<Int32> = []
        var keeps: Set<Int32> = []
        for id in removed where changed[id] == nil {
            if let number = memberNumbers[id], beaconCounts[Int(number)] > 0 { giveUp.insert(number) }
        }
        for (id, beacons) in changed {
            guard let number = memberNumbers[id] else { continue }
            let listed = Set(beacons)
            let same =
                listed.count == Int(beaconCounts[Int(number)])
                && listed.allSatisfy { beacon in owners.position(of: beacon).map { owners.values[$0] == number } ?? false }
            if same { keeps.insert(number) } else if beaconCounts[Int(number)] > 0 { giveUp.insert(number) }
        }
        if !giveUp.isEmpty {
            let former = owners.keys.indices.filter { giveUp.contains(owners.values[$0]) }.map { owners.keys[$0] }
            for beacon in former { removeOwner(of: beacon) }
        }
        var changedStores: Set<UInt16> = []
        for id in removed where changed[id] == nil {
            if let store = forgetMember(id) { changedStores.insert(store) }
        }
        for (id, beacons) in changed {
            let number = memberNumber(for: id)
            guard !keeps.contains(number) else { continue }
            for beacon in Set(beacons) {
                removeOwner(of: beacon)
                owners.insert(beacon, number)
                beaconCounts[Int(number)] += 1
                guests.remove(beacon)
            }
        }
        return changedStores.sorted().map { .presenceChanged(store: $0) }
    }

    /// Takes `beacon` from whoever owns it.
    private mutating func removeOwner(of beacon: BeaconKey) {
        if let former = owners.remove(beacon) { beaconCounts[Int(former)] -= 1 }
    }

    /// Forgets member `id` at once (their number is free again); returns the store they were present in, if any.
    private mutating func forgetMember(_ id: String) -> UInt16? {
        guard let number = memberNumbers[id] else { return nil }
        let store = members[Int(number)].visit.flatMap { $0.leftAt == nil ? $0.store : nil }
        changeMember(number) { $0 = Person() }
        memberNumbers[id] = nil
        memberIDs[Int(number)] = ""
        freeMemberNumbers.append(number)
        phones = phones.filter { $0.key.member != number }
        return store
    }

    private mutating func memberNumber(for id: String) -> Int32 {
        if let number = memberNumbers[id] { return number }
        let number: Int32
        if let reused = freeMemberNumbers.popLast() {
            number = reused
            memberIDs[Int(number)] = id
        } else {
            number = Int32(members.count)
            members.append(Person())
            memberQueuedAt.append(.max)
            beaconCounts.append(0)
            memberIDs.append(id)
        }
        memberNumbers[id] = number
        return number
    }

    /// Restores visits saved before a restart (open ones and recently left ones, for `visitGap`).
    public mutating func restore(_ visits: [Visit]) {
        for var visit in visits where departments[visit.store] != nil {
            let number = memberNumber(for: visit.member)
            // The readings behind the placement are gone with the restart: as sure as a restored decision can be.
            visit.confidence = DecisionEvidence.restored.confidence
            changeMember(number) {
                $0.visit = visit
                $0.nextCheck = 0
            }
            scheduleMember(number, at: 0)
        }
    }

    /// Takes `store` over from another decider (a lease changed hands): the store's visits become `visits` (the
    /// registry's, as the previous decider left them), without emitting events.
    ///
    /// A standby that kept its engine warm heard the same sightings: a visit it holds open in the store keeps the later
    /// of its own last-seen time and the registry's (the registry's is saved only now and then), so a member heard all
    /// along is not taken for one who went away. A visit it holds in the store that the registry lacks was never
    /// announced: it is dropped, and its member, if still heard, arrives (and is greeted) once their readings settle.
    public mutating func takeOver(store: UInt16, visits: [Visit]) {
        guard departments[store] != nil else { return }
        var given: [String: Visit] = [:]
        for visit in visits where visit.store == store { given[visit.member] = visit }
        for (id, number) in memberNumbers {
            guard let held = members[Int(number)].visit, held.store == store else { continue }
            if var visit = given[id] {
                if held.leftAt == nil, visit.leftAt == nil, held.lastSeen > visit.lastSeen { visit.lastSeen = held.lastSeen }
                given[id] = visit
            } else {
                changeMember(number) { person in
                    person.visit = nil
                    person.firstHeard = person.readings.map(\.lastSeen).min()
                    person.nextCheck = 0
                }
                scheduleMember(number, at: 0)
            }
        }
        restore(given.values.sorted { $0.member < $1.member })
    }

    /// Restores what the engine knew of a node (from its retained status), without emitting events.
    /// The same retained status comes again at every re-subscription (after a reconnect): the order of the boot the
    /// engine already follows is kept, so that the next batch is not taken for a gap or a late one for new.
    public mutating func restoreNode(_ node: NodeAddress, state: LinkState, boot: String?) {
        let number = nodeNumber(for: node)
        if boot == nil || nodes[Int(number)].boot != boot { nodes[Int(number)].lastSeq = 0 }
        nodes[Int(number)].state = state
        nodes[Int(number)].boot = boot
    }

    private mutating func nodeNumber(for node: NodeAddress) -> Int32 {
        if let number = nodeNumbers[node] { return number }
        let number = Int32(nodes.count)
        let staleAfter = timing(store: node.store, department: node.department).staleAfter
        nodes.append(NodeTrack(address: node, state: .online, boot: nil, lastSeq: 0, staleAfter: staleAfter))
        guests.addNode(number, store: node.store, department: node.department, staleAfter: staleAfter)
        membersHeardBy.append([])
        nodeNumbers[node] = number
        nodesByStore[node.store, default: []].append(number)
        return number
    }

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

    // MARK: Inputs

    /// Applies one node's batch received at `now`.
    public mutating func ingest(_ batch: SightingBatch, at now: Timestamp) -> (verdict: BatchVerdict, outputs: [Output]) {
        let address = batch.node
        guard timings.serves(store: address.store) else { return (.unknownStore, []) }
        var outputs: [Output] = []
        let isNew = nodeNumbers[address] == nil
        let node = nodeNumber(for: address)
        var track = nodes[Int(node)]
        let follows = track.boot == batch.boot && track.lastSeq > 0 && batch.seq == track.lastSeq + 1
        if track.boot == batch.boot {
            if track.state == .offline {
                // Its last will said offline. A batch it numbered before that is dropped; a newer one proves a
                // reconnection (its resent queue may reach the broker before its `online` status does).
                guard batch.seq > track.lastSeq else {
                    if missingBatches.arrived(batch.seq, from: node) { counters.gaps -= 1 }
                    counters.fromOfflineNodes += 1
                    return (.nodeOffline, [])
                }
                track.state = .online
                outputs.append(.node(address, .online, at: now))
                outputs.append(.presenceChanged(store: address.store))
            }
            if batch.seq == track.lastSeq {
                counters.duplicates += 1
                return (.duplicate, [])
            }
            if batch.seq < track.lastSeq {
                // Its readings are older than ones applied: dropped. If it was counted missing, it was only late.
                if missingBatches.arrived(batch.seq, from: node) { counters.gaps -= 1 }
                counters.late += 1
                return (.late, [])
            }
            counters.gaps += missingBatches.skipped(by: node, after: track.lastSeq, before: batch.seq)
        } else {
            if track.boot != nil { missingBatches.forget(node) }
            if track.state == .offline || isNew {
                outputs.append(.node(address, .online, at: now))
                outputs.append(.presenceChanged(store: address.store))
            }
            track.state = .online
            track.boot = batch.boot
        }
        track.lastSeq = batch.seq
        let nowMilliseconds = now.milliseconds
        // How old a reading is comes from our clock: the node's times only space its own readings.
        track.clock.observe(sentAt: batch.sentAt.milliseconds, receivedAt: nowMilliseconds, followsPrevious: follows)
        nodes[Int(node)] = track
        counters.batches += 1
        counters.sightings += UInt64(batch.sightings.count)
        batchNumber += 1

        var touched: [Int32] = []
        for sighting in batch.sightings {
            let reading = Reading(
                node: node, store: address.store, department: address.department, rssi: sighting.rssi,
                latest: sighting.rssi,
                proximity: sighting.proximity,
                lastSeen: track.clock.local(sighting.lastSeen.milliseconds, now: nowMilliseconds))
            let beacon = sighting.beacon
            if let position = owners.position(of: beacon) {
                let member = owners.values[position]
                let wasTracked = members[Int(member)].isTracked
                if members[Int(member)].absorb(reading, now: nowMilliseconds) { membersHeardBy[Int(node)].insert(member) }
                if !wasTracked { trackedMembers += 1 }
                if members[Int(member)].lastBatch != batchNumber {
                    members[Int(member)].lastBatch = batchNumber
                    touched.append(member)
                }
            } else {
                guests.hear(beacon, reading, at: nowMilliseconds)
            }
        }
        for beacon in batch.lost {
            if let position = owners.position(of: beacon) {
                let member = owners.values[position]
                changeMember(member) { $0.readings.removeAll { $0.node == node } }
                if members[Int(member)].lastBatch != batchNumber {
                    members[Int(member)].lastBatch = batchNumber
                    touched.append(member)
                }
            } else {
                guests.lose(beacon, node: node, at: nowMilliseconds)
            }
        }
        if !batch.sightings.isEmpty || !batch.lost.isEmpty { outputs.append(.presenceChanged(store: address.store)) }
        for member in touched { evaluate(member: member, at: nowMilliseconds, into: &outputs) }
        return (.applied, outputs)
    }

    /// What became of a ranging report.
    public enum RangingVerdict: Hashable, Sendable {
        case applied
        /// Same session, a sequence number already seen.
        case duplicate
        /// Same session, older than one already applied.
        case late
        case unknownStore
        /// The registry knows no such member.
        case unknownMember
    }

    /// Applies a ranging report of `member`'s phone in `store`, received at `now`: each ranged department beacon
    /// is a reading of the member in that department, under the same rules as node sightings; a department the
    /// phone no longer ranges stops counting at once (as a node's `lost`).
    public mutating func ingest(_ report: RangingReport, store: UInt16, at now: Timestamp) -> (verdict: RangingVerdict, outputs: [Output]) {
        guard timings.serves(store: store) else { return (.unknownStore, []) }
        guard let member = memberNumbers[report.member] else { return (.unknownMember, []) }
        let key = PhoneKey(store: store, member: member)
        var phone = phones[key] ?? PhoneTrack(session: report.session, lastSeq: 0)
        var follows = false
        if phone.session == report.session {
            if report.seq == phone.lastSeq {
                counters.duplicates += 1
                return (.duplicate, [])
            }
            if report.seq < phone.lastSeq {
                if missingReports.arrived(report.seq, from: key) { counters.gaps -= 1 }
                counters.late += 1
                return (.late, [])
            }
            if phone.lastSeq > 0 { counters.gaps += missingReports.skipped(by: key, after: phone.lastSeq, before: report.seq) }
            follows = phone.lastSeq > 0 && report.seq == phone.lastSeq + 1
        } else {
            missingReports.forget(key)
            phone.session = report.session
        }
        phone.lastSeq = report.seq
        let nowMilliseconds = now.milliseconds
        phone.clock.observe(sentAt: report.sentAt.milliseconds, receivedAt: nowMilliseconds, followsPrevious: follows)
        phones[key] = phone
        counters.rangingReports += 1
        counters.sightings += UInt64(report.beacons.count)

        let seen = phone.clock.local(report.sentAt.milliseconds, now: nowMilliseconds)
        let before = marks(of: member)
        var ranged: [Int32] = []
        for beacon in report.beacons where departments[store]?[beacon.department] != nil {
            let node = phoneNode(store: store, department: beacon.department)
            ranged.append(node)
            members[Int(member)].absorb(
                Reading(
                    node: node, store: store, department: beacon.department, rssi: beacon.signal,
                    latest: beacon.signal, proximity: beacon.proximity, lastSeen: seen),
                now: nowMilliseconds)
        }
        members[Int(member)].readings.removeAll { reading in
            reading.store == store && nodes[Int(reading.node)].isPhone && !ranged.contains(reading.node)
        }
        reindex(member, from: before)
        var outputs: [Output] = [.presenceChanged(store: store)]
        batchNumber += 1
        members[Int(member)].lastBatch = batchNumber
        evaluate(member: member, at: nowMilliseconds, into: &outputs)
        return (.applied, outputs)
    }

    private mutating func phoneNode(store: UInt16, department: UInt16) -> Int32 {
        let key = UInt32(store) << 16 | UInt32(department)
        if let number = phoneNodes[key] { return number }
        let number = Int32(nodes.count)
        var track = NodeTrack(
            address: NodeAddress(store: store, department: department, node: "phone")!, state: .online, boot: nil,
            lastSeq: 0, staleAfter: timing(store: store, department: department).staleAfter)
        track.isPhone = true
        nodes.append(track)
        guests.addNode(number, store: store, department: department, staleAfter: track.staleAfter)
        membersHeardBy.append([])
        phoneNodes[key] = number
        return number
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

    /// Applies a node's status change (its retained status or last will).
    public mutating func nodeStatusChanged(_ address: NodeAddress, state: LinkState, boot: String?, at now: Timestamp) -> [Output] {
        guard timings.serves(store: address.store) else { return [] }
        let known = nodeNumbers[address].map { nodes[Int($0)] }
        if let known, known.state == state, state == .offline || known.boot == boot { return [] }
        let node = nodeNumber(for: address)
        nodes[Int(node)].state = state
        if let boot { nodes[Int(node)].boot = boot }
        if known?.boot != boot { nodes[Int(node)].lastSeq = 0 }
        var outputs: [Output] = [.node(address, state, at: now), .presenceChanged(store: address.store)]
        if state == .offline {
            let heard = membersHeardBy[Int(node)].sorted()
            membersHeardBy[Int(node)] = []
            for number in heard where members[Int(number)].readings.contains(where: { $0.node == node }) {
                changeMember(number) { $0.readings.removeAll { $0.node == node } }
                evaluate(member: number, at: now.milliseconds, into: &outputs)
            }
            guests.dropReadings(of: node, at: now.milliseconds)
        }
        return outputs
    }

    /// Advances time: settles arrivals, completes switches whose dwell has passed, ends presences, drops old guests.
    public mutating func tick(at now: Timestamp) -> [Output] {
        var outputs: [Output] = []
        let nowMilliseconds = now.milliseconds
        // The members whose time has come, each once, in member order (those pushed again below wait for the next tick).
        var due: [Int32] = []
        while let entry = memberDeadlines.popDue(at: nowMilliseconds) {
            guard memberQueuedAt[Int(entry.id)] == entry.deadline else { continue }
            memberQueuedAt[Int(entry.id)] = .max
            due.append(entry.id)
        }
        if evaluatesEveryoneOnTick { due = members.indices.map { Int32($0) } }
        due.sort()
        for number in due {
            let person = members[Int(number)]
            guard person.firstHeard != nil || person.visit?.leftAt == nil && person.visit != nil else { continue }
            guard person.nextCheck <= nowMilliseconds || evaluatesEveryoneOnTick else {
                scheduleMember(number, at: person.nextCheck)
                continue
            }
            evaluate(member: number, at: nowMilliseconds, into: &outputs)
        }
        if outputs.count > 1 { outputs = PresenceEngine.inMemberOrder(outputs) }
        outputs += guests.expire(at: nowMilliseconds).sorted().map { .presenceChanged(store: $0) }
        return outputs
    }

    /// Orders one tick's outputs by member id, so that the same inputs always give the same sequence.
    private static func inMemberOrder(_ outputs: [Output]) -> [Output] {
        func member(_ output: Output) -> String {
            switch output {
            case .arrived(let member, _, _, _, _), .resumed(let member, _, _, _), .moved(let member, _, _, _, _, _),
                .left(let member, _, _, _, _):
                return member
            case .visitChanged(let visit):
                return visit.member
            case .node, .presenceChanged:
                return ""
            }
        }
        return outputs.enumerated().sorted { (member($0.element), $0.offset) < (member($1.element), $1.offset) }.map(\.element)
    }

    // MARK: Decisions

    /// The best fresh reading of a person (the first that no other outranks), the best fresh reading in
    /// `department` and the best of any other department (the rival), counting only readings in `store` when given;
    /// readings weaker than their department's `minRssi` do not count. `lastHeard` is the latest reading of all.
    private static func bestReadings(
        of person: Person, store: UInt16?, department: UInt16?, at now: Int64, nodes: [NodeTrack], timings: DepartmentTimings
    )
        -> (best: Reading?, current: Reading?, rival: Reading?, lastHeard: Int64?)
    {
        var best: Reading?
        var current: Reading?
        var rival: Reading?
        var lastHeard: Int64?
        for reading in person.readings {
            if lastHeard == nil || reading.lastSeen > lastHeard! { lastHeard = reading.lastSeen }
            if let store, reading.store != store { continue }
            guard now - reading.lastSeen < nodes[Int(reading.node)].staleAfter,
                !timings.hasMinRSSI || reading.rssi >= timings.timing(store: reading.store, department: reading.department).minRSSI
            else { continue }
            if best.map({ reading.outranks($0) }) ?? true { best = reading }
            if reading.department == department {
                if current.map({ reading.rssi > $0.rssi }) ?? true { current = reading }
            } else if rival.map({ reading.rssi > $0.rssi }) ?? true {
                rival = reading
            }
        }
        return (best, current, rival, lastHeard)
    }

    private mutating func evaluate(member number: Int32, at now: Int64, into outputs: inout [Output]) {
        // The helpers called below are static and take only the node table and the department timings: as methods
        // of the engine, most calls copied the whole engine value (552 bytes) first.
        let before = marks(of: number)
        // The person is moved out of the table while it is worked on, not copied: a copy shares the readings' buffer
        // with the table, so changing them would copy them, and writing the person back would release the old one.
        var person = Person()
        swap(&person, &members[Int(number)])
        let outputsBefore = outputs.count
        defer {
            person.nextCheck = Self.nextCheck(of: person, after: now, nodes: nodes, timings: timings, neighbours: neighbours)
            let nextCheck = person.nextCheck
            let visit = outputs[outputsBefore...].contains(where: \.changesVisit) ? person.visit : nil
            swap(&person, &members[Int(number)])
            reindex(number, from: before)
            scheduleMember(number, at: nextCheck)
            if let visit { outputs.append(.visitChanged(visit)) }
        }
        let id = memberIDs[Int(number)]
        let nowTime = Timestamp(milliseconds: now)

        if var visit = person.visit, visit.leftAt == nil,
            !Self.endedWhileUnheard(&person, visit: &visit, member: id, at: now, into: &outputs, timings: timings)
        {
            // In the store: leave, switch, or stay.
            let (best, current, rival, lastHeard) = Self.bestReadings(
                of: person, store: visit.store, department: visit.department, at: now, nodes: nodes, timings: timings)
            if let lastHeard, lastHeard > visit.lastSeen.milliseconds { visit.lastSeen = Timestamp(milliseconds: lastHeard) }
            let rules = self.timing(store: visit.store, department: visit.department)
            if now - visit.lastSeen.milliseconds >= rules.exitAfter && best == nil {
                // Gone since `exitAfter` after the last reading (a restart may announce it later than that).
                visit.leftAt = Timestamp(milliseconds: min(now, visit.lastSeen.milliseconds + rules.exitAfter))
                person.visit = visit
                person.readings.removeAll()
                person.challengerDepartment = nil
                person.decisiveDepartment = nil
                person.firstHeard = nil
                outputs.append(
                    .left(
                        member: id, store: visit.store, department: visit.department,
                        dwell: visit.lastSeen - visit.arrivedAt, at: nowTime))
                outputs.append(.presenceChanged(store: visit.store))
                return
            }
            guard let best else {
                person.visit = visit
                return
            }
            if let current { visit.proximity = current.proximity }
            if let decisive = Self.decisiveChallenger(
                of: &person, current: current, store: visit.store, at: now, nodes: nodes, timings: timings, neighbours: neighbours)
            {
                // The evidence outran the smoothing: take the latest readings as they are, so that the smoothed ones
                // do not pull the member straight back.
                for index in person.readings.indices where person.readings[index].store == visit.store {
                    person.readings[index].rssi = person.readings[index].latest
                }
                Self.switchDepartment(
                    &visit, of: person, to: decisive, member: id, since: person.decisiveSince, at: nowTime, nodes: nodes,
                    into: &outputs)
                person.challengerDepartment = nil
                person.decisiveDepartment = nil
                person.visit = visit
                return
            }
            if best.department == visit.department {
                person.challengerDepartment = nil
            } else if current == nil {
                Self.switchDepartment(
                    &visit, of: person, to: best, member: id, since: now, at: nowTime, nodes: nodes, into: &outputs)
                person.challengerDepartment = nil
            } else if let current,
                best.rssi >= current.rssi + self.timing(store: visit.store, department: best.department).switchMargin
            {
                if person.challengerDepartment != best.department {
                    person.challengerDepartment = best.department
                    person.challengerSince = now
                    person.challengerEvidence = 0
                } else {
                    person.challengerEvidence += person.challengerLead * Double(now - person.challengerCheckedAt)
                }
                let timing = self.timing(store: visit.store, department: best.department)
                person.challengerLead = min(best.rssi - current.rssi, 3 * timing.switchMargin)
                person.challengerCheckedAt = now
                if person.challengerEvidence
                    >= Self.evidenceNeeded(
                        from: visit.department, to: best.department, store: visit.store, timing: timing, neighbours: neighbours)
                {
                    Self.switchDepartment(
                        &visit, of: person, to: best, member: id, since: person.challengerSince, at: nowTime,
                        nodes: nodes, into: &outputs)
                    person.challengerDepartment = nil
                }
            } else {
                person.challengerDepartment = nil
            }
            // A challenger that has led for a sixth of the dwell: the member may be on the move, and "not sure yet"
            // beats a wrong department on the shop floor (the snapshot says `department: null`; no event).
            // The confidence shown is the placement's: set when it is decided, and when it turns unknown or back.
            let unknown =
                person.challengerDepartment.map {
                    now - person.challengerSince >= self.timing(store: visit.store, department: $0).switchDwell / 6
                } ?? false
            if unknown != visit.departmentUnknown {
                visit.departmentUnknown = unknown
                visit.confidence = unknown ? 0.5 : Self.confidence(current: current, rival: rival)
            }
            person.visit = visit
            return
        }

        // Not in any store: arrive (or resume) once the first readings have settled.
        let (best, _, _, lastHeard) = Self.bestReadings(
            of: person, store: nil, department: nil, at: now, nodes: nodes, timings: timings)
        guard let best, let firstHeard = person.firstHeard else {
            person.firstHeard = nil
            return
        }
        let rules = self.timing(store: best.store, department: best.department)
        guard now - firstHeard >= rules.arrivalSettle else { return }
        let lastSeen = Timestamp(milliseconds: lastHeard ?? now)
        if let previous = person.visit, previous.store == best.store, let leftAt = previous.leftAt,
            now - leftAt.milliseconds < rules.visitGap
        {
            var visit = previous
            visit.leftAt = nil
            visit.lastSeen = lastSeen
            visit.proximity = best.proximity
            if visit.department != best.department {
                visit.department = best.department
                visit.inDepartmentSince = nowTime
            }
            person.visit = visit
            outputs.append(.resumed(member: id, store: best.store, department: best.department, at: nowTime))
        } else {
            person.visit = Visit(
                member: id, store: best.store, arrivedAt: nowTime, department: best.department,
                inDepartmentSince: nowTime, lastSeen: lastSeen, leftAt: nil, proximity: best.proximity)
            let evidence = Self.evidence(
                of: person, department: best.department, store: best.store, held: now - firstHeard, at: now, nodes: nodes)
            person.visit?.confidence = evidence.confidence
            outputs.append(.arrived(member: id, store: best.store, department: best.department, at: nowTime, evidence: evidence))
        }
        person.challengerDepartment = nil
        person.decisiveDepartment = nil
        outputs.append(.presenceChanged(store: best.store))
    }

    /// Ends a visit whose member went unheard for `exitAfter` and has been heard again since — which only a restart
    /// allows (ticks end visits in time): the visit ended `exitAfter` after its last reading, and what was heard
    /// since may begin the next one (a new visit, or the same one resumed within `visitGap` of that end).
    /// Returns whether it ended the visit.
    private static func endedWhileUnheard(
        _ person: inout Person, visit: inout Visit, member: String, at now: Int64,
        into outputs: inout [Output], timings: DepartmentTimings
    ) -> Bool {
        let gone = visit.lastSeen.milliseconds + timings.timing(store: visit.store, department: visit.department).exitAfter
        guard gone <= now, let lastHeard = person.readings.map(\.lastSeen).max(), lastHeard >= gone else { return false }
        visit.leftAt = Timestamp(milliseconds: gone)
        person.visit = visit
        person.readings.removeAll { $0.lastSeen < gone }
        person.challengerDepartment = nil
        person.decisiveDepartment = nil
        person.firstHeard = now
        outputs.append(
            .left(
                member: member, store: visit.store, department: visit.department, dwell: visit.lastSeen - visit.arrivedAt,
                at: Timestamp(milliseconds: now)))
        outputs.append(.presenceChanged(store: visit.store))
        return true
    }

    /// The earliest time after `now` at which time alone could change what `evaluate` decides for `person`: a fresh
    /// reading going stale, the exit of a visit, the end of a switch dwell, the settling of an arrival.
    private static func nextCheck(
        of person: Person, after now: Int64, nodes: [NodeTrack], timings: DepartmentTimings, neighbours: [UInt32: Set<UInt16>]
    ) -> Int64 {
        var next = Int64.max
        for reading in person.readings {
            let stale = reading.lastSeen + nodes[Int(reading.node)].staleAfter
            if stale > now { next = min(next, stale) }
        }
        if let visit = person.visit, visit.leftAt == nil {
            next = min(
                next, visit.lastSeen.milliseconds + timings.timing(store: visit.store, department: visit.department).exitAfter)
            if let challenger = person.decisiveDepartment {
                next = min(next, person.decisiveSince + timings.timing(store: visit.store, department: challenger).switchDwell / 3)
            } else if decisiveLead(of: person, over: visit.department, store: visit.store, at: now, nodes: nodes, timings: timings) != nil {
                // A lead that began outside the in-store evaluation (at the arrival itself) is tracked from the next tick.
                next = min(next, now + 1)
            }
            if let challenger = person.challengerDepartment {
                // When the evidence will be enough if the lead holds, and when the member turns "unknown".
                let timing = timings.timing(store: visit.store, department: challenger)
                let needed = evidenceNeeded(
                    from: visit.department, to: challenger, store: visit.store, timing: timing, neighbours: neighbours)
                let gathered = person.challengerEvidence + person.challengerLead * Double(now - person.challengerCheckedAt)
                let missing = max(0, needed - gathered)
                next = min(next, now + max(1, Int64((missing / max(person.challengerLead, 0.001)).rounded(.up))))
                let unsure = person.challengerSince + timing.switchDwell / 6
                if unsure > now { next = min(next, unsure) }
            }
        } else if let firstHeard = person.firstHeard {
            var settle = person.readings.isEmpty ? 0 : Int64.max
            for reading in person.readings {
                settle = min(settle, timings.timing(store: reading.store, department: reading.department).arrivalSettle)
            }
            next = min(next, firstHeard + settle)
        }
        return next
    }

    /// The contract's decisive switch: another department's latest fresh reading has beaten the current
    /// department's by three times `switchMargin` at every evaluation for a third of `switchDwell`. Returns that
    /// department's reading once the third has passed; keeps track of the lead in `person` meanwhile.
    private static func decisiveChallenger(
        of person: inout Person, current: Reading?, store: UInt16, at now: Int64, nodes: [NodeTrack], timings: DepartmentTimings,
        neighbours: [UInt32: Set<UInt16>]
    ) -> Reading? {
        guard let current,
            let challenger = decisiveLead(of: person, over: current.department, store: store, at: now, nodes: nodes, timings: timings)
        else {
            person.decisiveDepartment = nil
            return nil
        }
        if person.decisiveDepartment != challenger.department {
            person.decisiveDepartment = challenger.department
            person.decisiveSince = now
        }
        var third = timings.timing(store: store, department: challenger.department).switchDwell / 3
        if !isNeighbour(challenger.department, of: current.department, store: store, neighbours: neighbours) { third *= 2 }
        return now - person.decisiveSince >= third ? challenger : nil
    }

    /// The strongest latest fresh reading of another department of `store` that beats `department`'s by three times
    /// `switchMargin` now, if there is one (and `department` has a fresh reading).
    private static func decisiveLead(
        of person: Person, over department: UInt16, store: UInt16, at now: Int64, nodes: [NodeTrack], timings: DepartmentTimings
    ) -> Reading? {
        var challenger: Reading?
        var currentLatest: Double?
        for reading in person.readings
        where reading.store == store && now - reading.lastSeen < nodes[Int(reading.node)].staleAfter
            && (!timings.hasMinRSSI || reading.latest >= timings.timing(store: store, department: reading.department).minRSSI)
        {
            if reading.department == department {
                currentLatest = max(currentLatest ?? reading.latest, reading.latest)
            } else if challenger.map({ reading.latest > $0.latest }) ?? true {
                challenger = reading
            }
        }
        guard let challenger, let currentLatest,
            challenger.latest >= currentLatest + 3 * timings.timing(store: store, department: challenger.department).switchMargin
        else { return nil }
        return challenger
    }

    /// Whether one can walk from `from` to `department` directly: `from` names no neighbours, or names it.
    static func isNeighbour(_ department: UInt16, of from: UInt16, store: UInt16, neighbours: [UInt32: Set<UInt16>]) -> Bool {
        neighbours[UInt32(store) << 16 | UInt32(from)]?.contains(department) ?? true
    }

    /// The evidence a challenger needs to take a member from `from` to `to`, in dB·ms: `switchMargin` held for
    /// `switchDwell` (12 dB·s by default), twice that to a department that is not a neighbour.
    ///
    /// The contract's two rules are the ends of one: a lead of `switchMargin` must hold for `switchDwell`, a lead of
    /// three times it for a third of `switchDwell`. Between them, a lead (counted up to three times the margin, and
    /// never less than the margin) gathers evidence at its size: 8 dB switches in 1.5 s, as 4 dB in 3 s.
    static func evidenceNeeded(
        from: UInt16, to: UInt16, store: UInt16, timing: DepartmentTimings.Timing, neighbours: [UInt32: Set<UInt16>]
    ) -> Double {
        let needed = timing.switchMargin * Double(timing.switchDwell)
        return isNeighbour(to, of: from, store: store, neighbours: neighbours) ? needed : 2 * needed
    }

    private static func switchDepartment(
        _ visit: inout Visit, of person: Person, to best: Reading, member: String, since: Int64, at now: Timestamp,
        nodes: [NodeTrack], into outputs: inout [Output]
    ) {
        let from = visit.department
        let evidence = evidence(
            of: person, department: best.department, store: visit.store, held: now.milliseconds - since, at: now.milliseconds,
            nodes: nodes)
        visit.department = best.department
        visit.inDepartmentSince = now
        visit.proximity = best.proximity
        visit.confidence = evidence.confidence
        visit.departmentUnknown = false
        outputs.append(.moved(member: member, store: visit.store, from: from, to: best.department, at: now, evidence: evidence))
        outputs.append(.presenceChanged(store: visit.store))
    }

    /// The rules of one department: its overrides, else the engine's.
    public func rules(store: UInt16, department: UInt16) -> PresenceRules {
        departments[store]?[department] ?? defaultRules
    }

    /// The rules of one department in milliseconds (as `rules(store:department:)`, without hashing).
    func timing(store: UInt16, department: UInt16) -> DepartmentTimings.Timing {
        timings.timing(store: store, department: department)
    }

    // MARK: Views for snapshots

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

    /// Hands out the guest stays that ended since the last call (a guest's last reading `exitAfter` old, or lost by
    /// every node): store, department, start and length, never the beacon.
    public mutating func takeGuestVisits() -> [GuestVisit] { guests.takeFinishedVisits() }

    /// Forgets visits that ended more than `visitGap` ago; returns the members whose visit ended for good.
    public mutating func expireVisits(at now: Timestamp) -> [String] {
        expireVisitsByStore(at: now).map(\.member).sorted()
    }

    /// Forgets visits that ended more than `visitGap` ago; returns the members whose visit ended for good, with the
    /// store of that visit, ordered by member.
    public mutating func expireVisitsByStore(at now: Timestamp) -> [(member: String, store: UInt16)] {
        var expired: [(member: String, store: UInt16)] = []
        while let entry = visitExpiries.popDue(at: now.milliseconds) {
            // An entry of a visit since resumed, or forgotten, or of a member number since reused, finds nothing due.
            guard let visit = members[Int(entry.id)].visit, let leftAt = visit.leftAt,
                now - leftAt >= rules(store: visit.store, department: visit.department).visitGap
            else { continue }
            changeMember(entry.id) { $0.visit = nil }
            expired.append((memberIDs[Int(entry.id)], visit.store))
        }
        return expired.sorted { $0.member < $1.member }
    }

    // MARK: Member indexes

    private func marks(of number: Int32) -> MemberMarks {
        // Field by field: copying the whole person (its readings, its visit's member id) twice per evaluation showed
        // in the engine's profile.
        let index = Int(number)
        guard let store = members[index].visit?.store else {
            return MemberMarks(tracked: !members[index].readings.isEmpty, presentIn: nil, left: nil)
        }
        guard let leftAt = members[index].visit?.leftAt else { return MemberMarks(tracked: true, presentIn: store, left: nil) }
        let department = members[index].visit?.department ?? 0
        return MemberMarks(tracked: true, presentIn: nil, left: .init(store: store, department: department, leftAt: leftAt.milliseconds))
    }

    /// Brings the member indexes (tracked count, members present, visit expiries) up to date with a change of
    /// member `number` from `before`.
    private mutating func reindex(_ number: Int32, from before: MemberMarks) {
        let after = marks(of: number)
        guard after != before else { return }
        if after.tracked != before.tracked { trackedMembers += after.tracked ? 1 : -1 }
        if after.presentIn != before.presentIn {
            if let store = before.presentIn { presentByStore[store]?.remove(number) }
            if let store = after.presentIn { presentByStore[store, default: []].insert(number) }
        }
        if let left = after.left, left != before.left {
            let gap = rules(store: left.store, department: left.department).visitGap
            // Rounded up to the millisecond, so the entry is never due before the visit is.
            let wholeGap = gap.wholeMilliseconds
            visitExpiries.push(left.leftAt &+ (Duration.milliseconds(wholeGap) < gap ? wholeGap + 1 : wholeGap), number)
        }
    }

    /// Changes member `number` with `change` and brings the member indexes up to date.
    private mutating func changeMember(_ number: Int32, _ change: (inout Person) -> Void) {
        let before = marks(of: number)
        change(&members[Int(number)])
        reindex(number, from: before)
    }

    /// Makes sure member `number` comes up in the first tick at or after `deadline` (`Int64.max`: never).
    private mutating func scheduleMember(_ number: Int32, at deadline: Int64) {
        guard deadline < memberQueuedAt[Int(number)] else { return }
        memberDeadlines.push(deadline, number)
        memberQueuedAt[Int(number)] = deadline
    }
}

extension PresenceEngine {
    /// `e^-x` for the smoothing weight, without a C math library.
    static func decay(_ x: Double) -> Double {
        guard x < 20 else { return 0 }
        // e^-x = (e^-(x/16))^16; the series is accurate for small arguments.
        let small = x / 16
        var value = 1 - small + small * small / 2 - small * small * small / 6 + small * small * small * small / 24
        for _ in 0..<4 { value *= value }
        return value
    }
}

extension PresenceEngine.Output {
    /// Whether this output changes a member's visit (an arrival, a resumption, a move or a departure).
    var changesVisit: Bool {
        switch self {
        case .arrived, .resumed, .moved, .left: true
        case .node, .presenceChanged, .visitChanged: false
        }
    }
}
