extension PresenceEngine {
    /// A sender of numbered messages: a node (its batches within a boot) or a member's phone (its reports within a
    /// session), with the order of its messages and its clock against ours.
    protocol NumberedSender {
        var sequence: SequenceTrack { get set }
        var clock: SenderClock { get set }
    }

    /// Admits message `seq` of `epoch` from `sender` and counts what became of it; one to be applied (not a duplicate
    /// or late) also sets the sender's clock by when it was sent (`sentAt`, received `now`). The one order rule of
    /// nodes' batches and phones' reports; what a caller does with a duplicate or a late one is its own.
    mutating func admit(
        _ seq: UInt64, epoch: String, sentAt: Timestamp, at now: Timestamp, from sender: inout some NumberedSender
    ) -> SequenceTrack.Verdict {
        let order = sender.sequence.admit(seq, epoch: epoch)
        counters.count(order)
        let follows: Bool
        switch order {
        case .duplicate, .late:
            return order
        case .next(_, let next):
            follows = next
        case .newEpoch:
            follows = false
        }
        // How old a reading is comes from our clock: the sender's times only space its own readings.
        sender.clock.observe(sentAt: sentAt.milliseconds, receivedAt: now.milliseconds, followsPrevious: follows)
        return order
    }
}

extension PresenceEngine.NodeTrack: PresenceEngine.NumberedSender {}
extension PresenceEngine.PhoneTrack: PresenceEngine.NumberedSender {}
