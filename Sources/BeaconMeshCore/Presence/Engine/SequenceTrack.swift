/// Applies one sender's numbered messages (a node's batches, a phone's ranging reports) at most once and in order
/// within an epoch (a node's boot, a phone's session), and counts the numbers it skipped as missing until they arrive.
///
/// The rule, for a message numbered `seq` in `epoch`:
/// - another epoch than the one followed begins afresh: the message is applied whatever its number and nothing before
///   it counts as missing (the numbers missing in the epoch before are forgotten, unless no epoch was followed);
/// - the number last applied is a duplicate (a QoS 1 redelivery), dropped;
/// - an older number is late, dropped; if it was counted missing it was only reordered on the way (MQTT keeps order
///   only within one connection), and it is missing no more;
/// - a newer number is applied, and the numbers between the last one applied and it are missing. After a status
///   restarted the numbering (`lastSeq` 0), the epoch's numbers are taken to begin at 1.
///
/// Remembers at most `missingLimit` missing numbers, the newest; older ones stay counted as lost.
struct SequenceTrack: Hashable, Sendable {
    /// What to do with a message, and what it changed in the count of missing numbers.
    enum Verdict: Hashable, Sendable {
        /// Apply it: the first message of an epoch not followed until now.
        case newEpoch
        /// Apply it: a number newer than the last one applied; `skipped` numbers between them are now missing, and
        /// `follows` says it is the very next number after it.
        case next(skipped: UInt64, follows: Bool)
        /// Drop it: the number last applied, again.
        case duplicate
        /// Drop it: older than the number last applied; `filledGap` when it was counted missing.
        case late(filledGap: Bool)
    }

    /// How many missing numbers a track remembers.
    static let missingLimit = 256

    /// The epoch followed (`nil`: none yet, or a status that did not say).
    private(set) var epoch: String?
    /// The number last applied in `epoch`; 0 when none has been since the numbering restarted.
    private(set) var lastSeq: UInt64 = 0
    /// The numbers skipped and not arrived since, oldest first.
    private(set) var missing: [UInt64] = []

    init() {}

    /// Takes message `seq` of `epoch`: says whether to apply or drop it, and records it.
    mutating func admit(_ seq: UInt64, epoch: String) -> Verdict {
        guard epoch == self.epoch else {
            if self.epoch != nil { missing.removeAll() }
            self.epoch = epoch
            lastSeq = seq
            return .newEpoch
        }
        if seq == lastSeq { return .duplicate }
        if seq < lastSeq { return .late(filledGap: drop(seq)) }
        let skipped = skip(after: lastSeq, before: seq)
        let follows = lastSeq > 0 && seq == lastSeq + 1
        lastSeq = seq
        return .next(skipped: skipped, follows: follows)
    }

    /// Whether `seq` is newer than the number last applied (within the epoch followed).
    func isNewer(_ seq: UInt64) -> Bool { seq > lastSeq }

    /// Drops message `seq` of the epoch followed without applying it; returns whether it was counted missing (from now
    /// on it is not).
    mutating func drop(_ seq: UInt64) -> Bool {
        guard let index = missing.firstIndex(of: seq) else { return false }
        missing.remove(at: index)
        return true
    }

    /// Takes up the epoch a retained status names, without a message: the order of the epoch already followed is
    /// kept (the same status comes again at every re-subscription); another epoch, or none, restarts the numbering.
    /// The missing numbers are kept.
    mutating func restore(epoch: String?) {
        if epoch == nil || epoch != self.epoch { lastSeq = 0 }
        self.epoch = epoch
    }

    /// Takes a live status change: another epoch than the one followed restarts the numbering and is followed from
    /// now on; a status that names no epoch restarts the numbering of the one followed. The missing numbers are kept.
    mutating func statusChanged(epoch: String?) {
        if epoch != self.epoch { lastSeq = 0 }
        if let epoch { self.epoch = epoch }
    }

    /// Records that the numbers between `lastSeq` and `seq` are missing; returns how many there are (all of them
    /// count, even those beyond `missingLimit`).
    private mutating func skip(after lastSeq: UInt64, before seq: UInt64) -> UInt64 {
        guard seq > lastSeq + 1 else { return 0 }
        let count = seq - lastSeq - 1
        let limit = UInt64(Self.missingLimit)
        missing.append(contentsOf: (count > limit ? seq - limit : lastSeq + 1)..<seq)
        if missing.count > Self.missingLimit { missing.removeFirst(missing.count - Self.missingLimit) }
        return count
    }
}
