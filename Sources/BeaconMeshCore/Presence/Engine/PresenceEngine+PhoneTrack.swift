extension PresenceEngine {
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
}
