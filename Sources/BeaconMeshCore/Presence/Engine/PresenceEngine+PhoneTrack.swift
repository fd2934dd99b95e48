extension PresenceEngine {
    /// A member's phone app in one store: its session, order and clock.
    struct PhoneTrack: Sendable {
        /// The order of its reports within its session (the track's epoch).
        var sequence = SequenceTrack()
        var clock = SenderClock()
    }

    /// Which member's phone in which store.
    struct PhoneKey: Hashable, Sendable {
        var store: UInt16
        var member: Int32
    }
}
