/// The beacons of no member the engine hears ("guests"): their readings, and how many of them count in each
/// department now — kept up to date as readings come, go and age, so that neither a tick nor a count walks every guest.
///
/// A guest counts in each store where it has a fresh reading (younger than its node's `staleAfter`), in the department
/// of its best fresh reading there (`Reading.outranks`). That reading is marked `counted` and adds one to its
/// department's tally. Only two things change a guest's count: an input about it (a sighting, a `lost`, its node
/// going offline, becoming a member), which recounts it at once, and a counted reading going stale, which the
/// guest's entry in a `DeadlineQueue` brings to the next tick. The same queue brings guests to the tick that drops
/// readings `exitAfter` old (and the guest with its last one).
///
/// A count asked for a time after the last recount adds the guests whose deadline falls in between, recounted on
/// the spot; asked for an earlier time (a clock set back), it walks every guest.
///
/// A guest's stay (first heard until its last reading is `exitAfter` old) ends as a `GuestVisit` — store,
/// department first placed in, start and length, never the beacon — which `takeFinishedVisits` hands out.
struct GuestTracker: Sendable {
    /// One guest: its beacon, its readings, and the earliest deadline it has queued.
    struct Guest: Sendable {
        var beacon: BeaconKey
        var readings: [PresenceEngine.Reading]
        /// `Int64.max` when it has none queued; a queued entry with another deadline is outdated.
        var queuedAt: Int64
        /// When the stay began (our clock) and the latest reading of it.
        var firstHeard: Int64 = 0
        var lastHeard: Int64 = 0
        /// Where the guest was first counted: the stay's store and department.
        var placedIn: (store: UInt16, department: UInt16)?
    }

    /// What the tracker knows of a node: its `staleAfter` and the tally its counted readings add to.
    private struct NodeFacts: Sendable {
        var staleAfter: Int64
        var tally: Int32
    }

    /// Readings this old (milliseconds) are dropped by `expire`.
    private let exitAfter: Int64
    private var slotsByBeacon = BeaconTable<Int32>()
    /// Guests by slot; a free slot has no readings and waits in `freeSlots`.
    private(set) var guests: [Guest] = []
    private var freeSlots: [Int32] = []
    private var deadlines = DeadlineQueue()
    private var nodes: [NodeFacts] = []
    /// The slots of the guests each node has a reading of, by node number.
    private var heardBy: [Set<Int32>] = []
    /// Guests counted per department, by tally number; `tallies` says which department a number is.
    private var counts: [Int] = []
    private(set) var tallies: [(store: UInt16, department: UInt16)] = []
    private var tallyNumbers: [UInt32: Int32] = [:]
    private var talliesByStore: [UInt16: [Int32]] = [:]
    /// The latest time guests were counted at; counts for an earlier time are walked.
    private var countedUpTo = Int64.min
    /// Stays that ended since the last `takeFinishedVisits`.
    private var finished: [GuestVisit] = []

    init(exitAfter: Int64) {
        self.exitAfter = exitAfter
    }

    /// How many guests are tracked (with at least one reading).
    var count: Int { slotsByBeacon.count }

    /// The earliest deadline queued (possibly outdated: a tick then may find nothing to do).
    var nextDeadline: Int64? { deadlines.first?.deadline }

    /// Registers node `number` (the engine's numbering, which must grow one by one) of `store`'s `department`.
    mutating func addNode(_ number: Int32, store: UInt16, department: UInt16, staleAfter: Int64) {
        precondition(Int(number) == nodes.count, "nodes are registered in the engine's order")
        let key = UInt32(store) << 16 | UInt32(department)
        let tally: Int32
        if let known = tallyNumbers[key] {
            tally = known
        } else {
            tally = Int32(tallies.count)
            tallies.append((store, department))
            counts.append(0)
            tallyNumbers[key] = tally
            talliesByStore[store, default: []].append(tally)
        }
        nodes.append(NodeFacts(staleAfter: staleAfter, tally: tally))
        heardBy.append([])
    }

    /// The readings of every guest, for tests that recount them.
    func forEachGuest(_ body: (BeaconKey, [PresenceEngine.Reading]) -> Void) {
        for slot in slotsByBeacon.values { body(guests[Int(slot)].beacon, guests[Int(slot)].readings) }
    }

    /// The readings of guest `beacon`, if it is one.
    func readings(of beacon: BeaconKey) -> [PresenceEngine.Reading]? {
        slotsByBeacon.position(of: beacon).map { guests[Int(slotsByBeacon.values[$0])].readings }
    }

    // MARK: Inputs

    /// Folds a node's reading of `beacon` in, making it a guest if it was not one; `now` is our clock.
    mutating func hear(_ beacon: BeaconKey, _ reading: PresenceEngine.Reading, at now: Int64) {
        let slot: Int32
        if let position = slotsByBeacon.position(of: beacon) {
            slot = slotsByBeacon.values[position]
        } else {
            slot = allocate(beacon)
        }
        uncount(slot)
        if guests[Int(slot)].readings.isEmpty { guests[Int(slot)].firstHeard = now }
        guests[Int(slot)].lastHeard = max(guests[Int(slot)].lastHeard, reading.lastSeen)
        if guests[Int(slot)].readings.absorb(reading) { heardBy[Int(reading.node)].insert(slot) }
        count(slot, at: now)
    }

    /// Drops `node`'s reading of `beacon` (the node's `lost` list).
    mutating func lose(_ beacon: BeaconKey, node: Int32, at now: Int64) {
        guard let position = slotsByBeacon.position(of: beacon) else { return }
        let slot = slotsByBeacon.values[position]
        guard guests[Int(slot)].readings.contains(where: { $0.node == node }) else { return }
        uncount(slot)
        guests[Int(slot)].readings.removeAll { $0.node == node }
        heardBy[Int(node)].remove(slot)
        count(slot, at: now)
    }

    /// Drops every reading of `node` (it went offline).
    mutating func dropReadings(of node: Int32, at now: Int64) {
        let slots = heardBy[Int(node)]
        heardBy[Int(node)] = []
        for slot in slots {
            uncount(slot)
            guests[Int(slot)].readings.removeAll { $0.node == node }
            count(slot, at: now)
        }
    }

    /// Forgets `beacon` as a guest (it now belongs to a member).
    mutating func remove(_ beacon: BeaconKey) {
        guard let position = slotsByBeacon.position(of: beacon) else { return }
        let slot = slotsByBeacon.values[position]
        uncount(slot)
        for reading in guests[Int(slot)].readings { heardBy[Int(reading.node)].remove(slot) }
        guests[Int(slot)].readings.removeAll()
        release(slot, finished: false)
    }

    /// Drops readings `exitAfter` old and recounts the guests whose counted reading went stale, up to `now`.
    /// Returns the stores of the guests that lost a reading (their snapshot changed).
    mutating func expire(at now: Int64) -> Set<UInt16> {
        var changed: Set<UInt16> = []
        let exitAfter = exitAfter  // not `self` in the closures below: that would copy the tracker
        while let entry = deadlines.popDue(at: now) {
            let slot = entry.id
            guard guests[Int(slot)].queuedAt == entry.deadline else { continue }
            guests[Int(slot)].queuedAt = .max
            uncount(slot)
            if guests[Int(slot)].readings.contains(where: { now - $0.lastSeen >= exitAfter }) {
                for reading in guests[Int(slot)].readings { changed.insert(reading.store) }
                for reading in guests[Int(slot)].readings where now - reading.lastSeen >= exitAfter {
                    heardBy[Int(reading.node)].remove(slot)
                }
                guests[Int(slot)].readings.removeAll { now - $0.lastSeen >= exitAfter }
            }
            count(slot, at: now)
        }
        return changed
    }

    // MARK: Counts

    /// Guests per department of every store at `now` (only departments with at least one).
    func countsByStore(at now: Int64) -> [UInt16: [UInt16: Int]] {
        guard now >= countedUpTo else { return walkedCounts(at: now) }
        let counts = countsAdjusted(to: now)
        var byStore: [UInt16: [UInt16: Int]] = [:]
        for (tally, count) in counts.enumerated() where count > 0 {
            byStore[tallies[tally].store, default: [:]][tallies[tally].department] = count
        }
        return byStore
    }

    /// Guests per department of `store` at `now` (only departments with at least one).
    func counts(store: UInt16, at now: Int64) -> [UInt16: Int] {
        guard now >= countedUpTo else { return walkedCounts(at: now)[store] ?? [:] }
        let counts = countsAdjusted(to: now)
        var byDepartment: [UInt16: Int] = [:]
        for tally in talliesByStore[store] ?? [] where counts[Int(tally)] > 0 {
            byDepartment[tallies[Int(tally)].department] = counts[Int(tally)]
        }
        return byDepartment
    }

    /// The tallies as they stand, corrected for the guests whose counted reading goes stale by `now`.
    private func countsAdjusted(to now: Int64) -> [Int] {
        var counts = self.counts
        var seen: Set<Int32> = []
        deadlines.forEachDue(at: now) { entry in
            let slot = entry.id
            guard guests[Int(slot)].queuedAt == entry.deadline, seen.insert(slot).inserted else { return }
            let readings = guests[Int(slot)].readings
            for reading in readings where reading.counted { counts[Int(nodes[Int(reading.node)].tally)] -= 1 }
            for index in readings.indices where Self.isCounted(index, of: readings, at: now, nodes: nodes) {
                counts[Int(nodes[Int(readings[index].node)].tally)] += 1
            }
        }
        return counts
    }

    /// Every guest's best fresh reading per store at `now`, found by walking them all.
    private func walkedCounts(at now: Int64) -> [UInt16: [UInt16: Int]] {
        var byStore: [UInt16: [UInt16: Int]] = [:]
        for slot in slotsByBeacon.values {
            let readings = guests[Int(slot)].readings
            for index in readings.indices where Self.isCounted(index, of: readings, at: now, nodes: nodes) {
                byStore[readings[index].store, default: [:]][readings[index].department, default: 0] += 1
            }
        }
        return byStore
    }

    /// Whether `readings[index]` is the one that counts its guest in its store at `now`: fresh, and the first of the
    /// best fresh readings of that store.
    private static func isCounted(_ index: Int, of readings: [PresenceEngine.Reading], at now: Int64, nodes: [NodeFacts]) -> Bool {
        func isFresh(_ reading: PresenceEngine.Reading) -> Bool { now - reading.lastSeen < nodes[Int(reading.node)].staleAfter }
        let reading = readings[index]
        guard isFresh(reading) else { return false }
        for other in readings.indices where other != index && readings[other].store == reading.store && isFresh(readings[other]) {
            if other < index ? !reading.outranks(readings[other]) : readings[other].outranks(reading) { return false }
        }
        return true
    }

    // MARK: Bookkeeping

    /// Takes the guest in `slot` out of the tallies.
    private mutating func uncount(_ slot: Int32) {
        for index in guests[Int(slot)].readings.indices where guests[Int(slot)].readings[index].counted {
            counts[Int(nodes[Int(guests[Int(slot)].readings[index].node)].tally)] -= 1
            guests[Int(slot)].readings[index].counted = false
        }
    }

    /// Puts the guest in `slot` (just uncounted) into the tallies as it stands at `now`, and queues its next
    /// deadline; a guest without readings is forgotten.
    private mutating func count(_ slot: Int32, at now: Int64) {
        guard !guests[Int(slot)].readings.isEmpty else {
            release(slot)
            return
        }
        countedUpTo = max(countedUpTo, now)
        var deadline = Int64.max
        // The readings are read in place (no copy is held while one is marked, which would copy them all).
        for index in guests[Int(slot)].readings.indices {
            let reading = guests[Int(slot)].readings[index]
            deadline = min(deadline, reading.lastSeen &+ exitAfter)
            guard Self.isCounted(index, of: guests[Int(slot)].readings, at: now, nodes: nodes) else { continue }
            let node = nodes[Int(reading.node)]
            counts[Int(node.tally)] += 1
            guests[Int(slot)].readings[index].counted = true
            if guests[Int(slot)].placedIn == nil { guests[Int(slot)].placedIn = (reading.store, reading.department) }
            deadline = min(deadline, reading.lastSeen &+ node.staleAfter)
        }
        if deadline < guests[Int(slot)].queuedAt {
            deadlines.push(deadline, slot)
            guests[Int(slot)].queuedAt = deadline
        }
    }

    private mutating func allocate(_ beacon: BeaconKey) -> Int32 {
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            guests[Int(slot)] = Guest(beacon: beacon, readings: [], queuedAt: .max)
        } else {
            slot = Int32(guests.count)
            guests.append(Guest(beacon: beacon, readings: [], queuedAt: .max))
        }
        slotsByBeacon.insert(beacon, slot)
        return slot
    }

    /// Hands out the guest stays that ended since the last call, oldest end first.
    mutating func takeFinishedVisits() -> [GuestVisit] {
        defer { finished = [] }
        return finished
    }

    /// Frees the slot of a guest that has no readings left; its stay, if it was ever placed, is `finished` (not when
    /// the beacon turned out to be a member's, nor for an Eddystone-EID id of no member's fob: it rotates, so one
    /// person would be many stays; it counts in occupancy only).
    private mutating func release(_ slot: Int32, finished isStay: Bool = true) {
        if isStay, !guests[Int(slot)].beacon.rotates, let place = guests[Int(slot)].placedIn {
            let guest = guests[Int(slot)]
            finished.append(
                GuestVisit(
                    store: place.store, department: place.department, arrivedAt: Timestamp(milliseconds: guest.firstHeard),
                    dwell: .milliseconds(max(0, guest.lastHeard - guest.firstHeard))))
        }
        guests[Int(slot)].placedIn = nil
        guests[Int(slot)].lastHeard = 0
        slotsByBeacon.remove(guests[Int(slot)].beacon)
        guests[Int(slot)].readings = []
        guests[Int(slot)].queuedAt = .max
        freeSlots.append(slot)
    }
}
