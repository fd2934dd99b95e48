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
///
/// The engine is one type spread over files by concern: its stored state here; the inputs (`+Inputs`), the decisions
/// (`+Evaluation`, `+Switching`, `+NextCheck`, `+Evidence`), the directory (`+Directory`), restarts and take-overs
/// (`+Restart`, `+Nodes`), the member indexes (`+MemberIndexes`), the views for snapshots (`+Views`, `+Expiry`) and
/// its nested types, each in a file named after it.
public struct PresenceEngine: Sendable {
    private let defaultRules: PresenceRules
    let departments: [UInt16: [UInt16: PresenceRules]]
    /// The same rules in milliseconds, for the lookups of every sighting.
    let timings: DepartmentTimings
    /// The departments one can walk to from each department that names them (`store << 16 | department`).
    let neighbours: [UInt32: Set<UInt16>]
    /// Member id → number, and back; numbers of forgotten members are reused.
    var memberNumbers: [String: Int32] = [:]
    var memberIDs: [String] = []
    var members: [Person] = []
    var freeMemberNumbers: [Int32] = []
    var owners = BeaconTable<Int32>()
    /// How many beacons each member owns in `owners`, by member number.
    var beaconCounts: [Int32] = []
    var guests: GuestTracker
    var nodeNumbers: [NodeAddress: Int32] = [:]
    var nodes: [NodeTrack] = []
    /// Members by the time they next need a tick (`Person.nextCheck`), and the earliest time queued for each.
    var memberDeadlines = DeadlineQueue()
    var memberQueuedAt: [Int64] = []
    /// Members whose visit ended, by the time it is forgotten (`visitGap` after it ended).
    var visitExpiries = DeadlineQueue()
    /// The members in each store now (an open visit there).
    var presentByStore: [UInt16: Set<Int32>] = [:]
    /// How many members are tracked (`Person.isTracked`).
    var trackedMembers = 0
    /// The members each node has had a reading of since it last went offline (some may have lost it since), by
    /// node number.
    var membersHeardBy: [Set<Int32>] = []
    var nodesByStore: [UInt16: [Int32]] = [:]
    /// The phone-ranging node of each store and department (`store << 16 | department`).
    var phoneNodes: [UInt32: Int32] = [:]
    var phones: [PhoneKey: PhoneTrack] = [:]
    /// Ticks evaluate every person instead of only those whose `nextCheck` has come (tests compare the two).
    var evaluatesEveryoneOnTick = false
    var batchNumber: UInt64 = 0
    /// The fits of surveyed stores (`setSurvey`): their members are decided from what each department sounds like.
    var surveys: [UInt16: SurveyState] = [:]
    /// The readings of the stores' references (`setReferences`): fixed beacons, never members or guests.
    var references: [BeaconKey: [Reading]] = [:]
    /// How many fits have been set: each new one starts its members' beliefs afresh (`SurveyBelief.generation`).
    var surveyGenerations: UInt32 = 0
    /// The storage a surveyed decision's readings are made in (lent to the person decided, then taken back).
    var surveyBuffer: [Reading] = []
    public internal(set) var counters = Counters()

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

    /// The rules of one department: its overrides, else the engine's.
    public func rules(store: UInt16, department: UInt16) -> PresenceRules {
        departments[store]?[department] ?? defaultRules
    }

    /// The rules of one department in milliseconds (as `rules(store:department:)`, without hashing).
    func timing(store: UInt16, department: UInt16) -> DepartmentTimings.Timing {
        timings.timing(store: store, department: department)
    }
}
