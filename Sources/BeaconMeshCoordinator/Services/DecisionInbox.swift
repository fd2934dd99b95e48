import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshThreads

/// What the coordinator's decision loop takes next: decoded messages in arrival order, ticks, registry changes, lease
/// renewals and take-overs, in a `Mailbox`.
///
/// Message chunks are bounded (`push` waits while `capacity` chunks wait, so a backlog stays in the MQTT inbox and
/// the broker, not here); ticks, member changes and lease renewals are coalesced (a tick requested twice before it
/// is taken is one tick, a member's newer read or a newer renewal replaces an older one), and take-overs are one per
/// store at most (the decisions ask once), so they need no bound. One consumer, one chunk producer.
typealias DecisionInbox = Mailbox<DecisionQueue>

extension Mailbox where Contents == DecisionQueue {
    /// An empty inbox where at most `capacity` chunks of messages wait.
    convenience init(capacity: Int) {
        self.init(DecisionQueue(capacity: capacity))
    }

    /// Adds a chunk of decoded messages, waiting while `capacity` chunks wait; does nothing once closed.
    func push(_ inputs: [CoordinatorInput]) async {
        _ = await putWhenRoom { $0.chunks.append(inputs) }
    }

    /// Asks for a tick (one tick however often asked before it is taken).
    func requestTick() {
        put { $0.tickDue = true }
    }

    /// Hands over a lease renewal's answer (replacing an older one not yet taken), with the stores nobody decides if
    /// the keeper looked.
    func leasesRenewed(_ held: [UInt16: LeaseGrant], sentAt: ContinuousClock.Instant, undecided: [UInt16: Timestamp]? = nil) {
        put { $0.renewal = (held, sentAt, undecided) }
    }

    /// Hands over what a take-over of `stores` loaded.
    func tookOver(_ stores: Set<UInt16>, _ loaded: CoordinatorState.TakeOver?) {
        put { $0.takeOvers.append((stores, loaded)) }
    }

    /// Hands over members as last read (merged over changes not yet taken).
    func membersChanged(_ changes: MemberChanges) {
        guard !changes.isEmpty else { return }
        put { $0.memberChanges.merge(changes) }
    }

    /// Hands over stores' new survey fits (`nil`: cleared) and their references' baselines, merged over those not
    /// yet taken.
    func surveysChanged(_ fits: [UInt16: SurveyFit?], baselines: [UInt16: ReferenceDrift.Baseline] = [:]) {
        guard !fits.isEmpty else { return }
        put { queue in
            queue.surveys.merge(fits) { _, newer in newer }
            for store in fits.keys { queue.baselines[store] = baselines[store] }
        }
    }

    /// The next item by priority; `nil` once closed, or when the waiting task is cancelled.
    func next() async -> DecisionQueue.Item? {
        await take { $0.next() }
    }
}

/// The decision loop's waiting work, by priority: lease renewals and take-overs (fencing and hand-over wait for
/// nothing), registry changes (members, then survey fits), then a tick, then the oldest chunk of messages. Full while `capacity` chunks wait.
struct DecisionQueue: MailboxContents {
    /// One thing to decide.
    enum Item: Sendable {
        /// Decoded messages, in arrival order.
        case inputs([CoordinatorInput])
        /// Time to tick.
        case tick
        /// Members as others (the `members` command, other coordinators) left them.
        case membersChanged(MemberChanges)
        /// Stores' new survey fits (`nil`: the survey was cleared).
        case surveysChanged([UInt16: SurveyFit?], baselines: [UInt16: ReferenceDrift.Baseline])
        /// A lease renewal's answer: the stores held, with since when, and when (monotonic) it was sent; the stores
        /// nobody decides, with since when, when the keeper looked (`nil`: it did not).
        case leasesRenewed([UInt16: LeaseGrant], sentAt: ContinuousClock.Instant, undecided: [UInt16: Timestamp]?)
        /// What the registry holds of stores being taken over (`nil`: it could not be read).
        case tookOver(Set<UInt16>, CoordinatorState.TakeOver?)
    }

    /// Chunks of messages, oldest first; `capacity` of them may wait.
    var chunks: BoundedQueue<[CoordinatorInput]>
    var tickDue = false
    /// Member changes, merged while they wait.
    var memberChanges = MemberChanges()
    var renewal: (held: [UInt16: LeaseGrant], sentAt: ContinuousClock.Instant, undecided: [UInt16: Timestamp]?)?
    var takeOvers: [(stores: Set<UInt16>, loaded: CoordinatorState.TakeOver?)] = []
    var surveys: [UInt16: SurveyFit?] = [:]
    var baselines: [UInt16: ReferenceDrift.Baseline] = [:]

    init(capacity: Int) {
        chunks = BoundedQueue(capacity: capacity)
    }

    var isFull: Bool { chunks.isFull }

    var hasRoomForWaitingProducers: Bool { !chunks.isFull }

    /// The next item by priority, removed; `nil` if nothing waits.
    mutating func next() -> Item? {
        if let renewal {
            self.renewal = nil
            return .leasesRenewed(renewal.held, sentAt: renewal.sentAt, undecided: renewal.undecided)
        }
        if !takeOvers.isEmpty {
            let first = takeOvers.removeFirst()
            return .tookOver(first.stores, first.loaded)
        }
        if !memberChanges.isEmpty {
            defer { memberChanges = MemberChanges() }
            return .membersChanged(memberChanges)
        }
        if !surveys.isEmpty {
            defer {
                surveys = [:]
                baselines = [:]
            }
            return .surveysChanged(surveys, baselines: baselines)
        }
        if tickDue {
            tickDue = false
            return .tick
        }
        return chunks.popFirst().map(Item.inputs)
    }
}
