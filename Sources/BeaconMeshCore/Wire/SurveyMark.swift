/// Someone carrying `beacon` through a store says where they are now, published on `stores/{store}/survey`: the
/// contract's survey mark.
///
/// From a mark on, the store's coordinators keep the beacon's readings as samples of the marked department, until the
/// next mark of the same beacon; a mark with `department == nil` (between departments) keeps none, and `stop` ends the
/// survey of that beacon (its `department` then means nothing and is `nil` as marks are made).
public struct SurveyMark: Hashable, Sendable {
    /// What the surveyor carries: one beacon, or a member's beacons (whatever the registry says they are, EID fobs
    /// included), which the coordinator resolves.
    public enum Carried: Hashable, Sendable {
        case beacon(BeaconKey)
        case member(String)
    }

    /// What the surveyor carries.
    public var carried: Carried
    /// The department the surveyor is in now; `nil`: between departments (not a sample).
    public var department: UInt16?
    /// Whether this mark ends the survey of `beacon`.
    public var stop: Bool
    /// When the surveyor marked (the sender's clock: it orders one surveyor's marks, nothing else).
    public var at: Timestamp

    public init(_ carried: Carried, department: UInt16?, stop: Bool = false, at: Timestamp) {
        self.carried = carried
        self.department = department
        self.stop = stop
        self.at = at
    }

    public init(beacon: BeaconKey, department: UInt16?, stop: Bool = false, at: Timestamp) {
        self.init(.beacon(beacon), department: department, stop: stop, at: at)
    }

    /// The beacon carried, when the mark names one (not a member).
    public var beacon: BeaconKey? {
        if case .beacon(let beacon) = carried { beacon } else { nil }
    }

    /// A mark that ends the survey of `beacon`.
    public static func stop(_ beacon: BeaconKey, at: Timestamp) -> SurveyMark {
        SurveyMark(beacon: beacon, department: nil, stop: true, at: at)
    }

    /// A mark that ends the survey of what `carried` names.
    public static func stop(_ carried: Carried, at: Timestamp) -> SurveyMark {
        SurveyMark(carried, department: nil, stop: true, at: at)
    }
}
