/// One guest's stay in a store as history counts it: never the beacon, only where and when. The guest is counted in
/// the department where it was first placed, from first heard to its last reading there.
public struct GuestVisit: Hashable, Sendable {
    public var store: UInt16
    public var department: UInt16
    public var arrivedAt: Timestamp
    public var dwell: Duration

    public init(store: UInt16, department: UInt16, arrivedAt: Timestamp, dwell: Duration) {
        self.store = store
        self.department = department
        self.arrivedAt = arrivedAt
        self.dwell = dwell
    }

    /// The start of the hour (UTC, epoch milliseconds) the visit began in: guests are kept per store, hour and
    /// department.
    public var hour: Timestamp { Timestamp(milliseconds: arrivedAt.milliseconds - arrivedAt.milliseconds % 3_600_000) }
}
