import BeaconMeshCore

/// A survey mark a coordinator holds, as the registry keeps it: `beacon` (a surveyor's, or one of a member's) is in
/// `department` of `store` (`nil`: between departments) since `since`. Kept so that a coordinator restarted, or one
/// taking the store over, mid-survey goes on sampling the beacon without the surveyor marking again.
public struct SurveyMarkRecord: Sendable, Hashable {
    /// What a mark is kept under: one per beacon and store.
    public struct Key: Sendable, Hashable {
        public var store: UInt16
        public var beacon: BeaconKey

        public init(store: UInt16, beacon: BeaconKey) {
            self.store = store
            self.beacon = beacon
        }
    }

    public var store: UInt16
    public var beacon: BeaconKey
    public var department: UInt16?
    public var since: Timestamp

    public init(store: UInt16, beacon: BeaconKey, department: UInt16?, since: Timestamp) {
        self.store = store
        self.beacon = beacon
        self.department = department
        self.since = since
    }

    public var key: Key { Key(store: store, beacon: beacon) }
}
