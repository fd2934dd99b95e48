/// Someone carrying `beacon` through a store says where they are now, published on `stores/{store}/survey`: the
/// contract's survey mark.
///
/// From a mark on, the store's coordinators keep the beacon's readings as samples of the marked department, until the
/// next mark of the same beacon; a mark with `department == nil` (between departments) keeps none, and `stop` ends the
/// survey of that beacon (its `department` then means nothing and is `nil` as marks are made).
public struct SurveyMark: Hashable, Sendable {
    /// The beacon the surveyor carries.
    public var beacon: BeaconKey
    /// The department the surveyor is in now; `nil`: between departments (not a sample).
    public var department: UInt16?
    /// Whether this mark ends the survey of `beacon`.
    public var stop: Bool
    /// When the surveyor marked (the sender's clock: it orders one surveyor's marks, nothing else).
    public var at: Timestamp

    public init(beacon: BeaconKey, department: UInt16?, stop: Bool = false, at: Timestamp) {
        self.beacon = beacon
        self.department = department
        self.stop = stop
        self.at = at
    }

    /// A mark that ends the survey of `beacon`.
    public static func stop(_ beacon: BeaconKey, at: Timestamp) -> SurveyMark {
        SurveyMark(beacon: beacon, department: nil, stop: true, at: at)
    }
}
