/// How far a sender's clock (a scanner node, a phone) is from ours, estimated from when its messages say they were
/// sent and when they reached us; turns the sender's times into ours.
///
/// The contract does not trust other machines' clocks: a Pi that booted without network time may be hours behind.
/// Each message gives one sample `received − sentAt`: our clock minus theirs, plus the time in transit. The
/// estimate is the smallest recent sample (the one least delayed in transit):
/// - it starts at 0 (clocks in step until a message shows otherwise), so a backlog delivered at once after an
///   outage is still seen as old;
/// - a sample below the estimate is taken at once (a sender ahead of us, or a message quicker than the ones before);
/// - samples above it by more than `tolerance` are taken only when every sample for `confirmation` has been above
///   (a sender behind us, or a clock set back). A burst of queued messages is followed by fresh ones and never
///   lasts that long at the same lateness, so it does not move the estimate.
public struct SenderClock: Sendable {
    /// Our clock minus the sender's, in milliseconds (positive: the sender is behind).
    public private(set) var offset: Int64 = 0
    /// The smallest sample since samples began to stay above the estimate, and when that began (our clock).
    private var raised: (smallest: Int64, since: Int64)?

    /// Lateness within which a sample is taken as transit delay, not as a clock difference.
    public static let tolerance: Int64 = 2_000
    /// How long samples must stay above the estimate before it moves up.
    public static let confirmation: Int64 = 5_000

    public init() {}

    /// The sender's clock ahead of ours, in milliseconds (negative: behind) — what health reports.
    public var skew: Int64 { -offset }

    /// Takes one message sent at `sentAt` (their clock) and received at `receivedAt` (ours).
    public mutating func observe(sentAt: Int64, receivedAt: Int64) {
        let sample = receivedAt - sentAt
        if sample <= offset + SenderClock.tolerance {
            if sample < offset { offset = sample }
            raised = nil
            return
        }
        guard let pending = raised else {
            raised = (sample, receivedAt)
            return
        }
        let smallest = min(pending.smallest, sample)
        if receivedAt - pending.since >= SenderClock.confirmation {
            offset = smallest
            raised = nil
        } else {
            raised = (smallest, pending.since)
        }
    }

    /// A time on the sender's clock as ours, never later than `now`.
    public func local(_ senderTime: Int64, now: Int64) -> Int64 {
        min(senderTime &+ offset, now)
    }

}
