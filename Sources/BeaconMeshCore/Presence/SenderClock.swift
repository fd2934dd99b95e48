/// How far a sender's clock (a scanner node, a phone) is from ours, estimated from when its messages say they were
/// sent and when they reached us; turns the sender's times into ours.
///
/// The contract does not trust other machines' clocks: a Pi that booted without network time may be hours behind.
/// Each message gives one sample `received − sentAt`: our clock minus theirs, plus the time in transit. The
/// estimate is the smallest recent sample (the one least delayed in transit):
/// - it starts at 0 (clocks in step until messages show otherwise), so a backlog delivered at once after an outage
///   is still seen as old;
/// - a sample below the estimate is taken at once (a sender ahead of us, or a message quicker than the ones before);
/// - a message that directly follows the previous one but says it was sent earlier shows a clock set back: its
///   sample is taken at once;
/// - otherwise samples above the estimate by more than `tolerance` are taken when they have stayed within
///   `tolerance` of each other for `confirmation` (a sender behind us). A backlog delivered in a burst is not
///   steady — each message is fresher than the one before — and is followed by fresh messages, so it does not move
///   the estimate.
public struct SenderClock: Sendable {
    /// Our clock minus the sender's, in milliseconds (positive: the sender is behind).
    public private(set) var offset: Int64 = 0
    /// Samples that stay above the estimate: the smallest and largest, and since when (our clock).
    private var raised: (smallest: Int64, largest: Int64, since: Int64)?
    private var lastSentAt: Int64?

    /// Lateness within which a sample is taken as transit delay, not as a clock difference.
    public static let tolerance: Int64 = 2_000
    /// How long samples must stay steady above the estimate before it moves up.
    public static let confirmation: Int64 = 1_500

    public init() {}

    /// The sender's clock ahead of ours, in milliseconds (negative: behind) — what health reports.
    public var skew: Int64 { -offset }

    /// Takes one message sent at `sentAt` (their clock) and received at `receivedAt` (ours); `followsPrevious` when
    /// it is the very next message after the previous one observed (the next `seq` of the same boot or session).
    public mutating func observe(sentAt: Int64, receivedAt: Int64, followsPrevious: Bool) {
        let sample = receivedAt &- sentAt
        let previous = lastSentAt
        lastSentAt = sentAt
        if sample <= offset &+ SenderClock.tolerance {
            if sample < offset { offset = sample }
            raised = nil
            return
        }
        if followsPrevious, let previous, sentAt < previous {
            offset = sample
            raised = nil
            return
        }
        guard let pending = raised,
            max(pending.largest, sample) - min(pending.smallest, sample) <= SenderClock.tolerance
        else {
            raised = (sample, sample, receivedAt)
            return
        }
        let smallest = min(pending.smallest, sample)
        if receivedAt - pending.since >= SenderClock.confirmation {
            offset = smallest
            raised = nil
        } else {
            raised = (smallest, max(pending.largest, sample), pending.since)
        }
    }

    /// A time on the sender's clock as ours, never later than `now`.
    public func local(_ senderTime: Int64, now: Int64) -> Int64 {
        min(senderTime &+ offset, now)
    }
}
