extension PresenceEngine {
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
}
