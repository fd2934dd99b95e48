/// Who is where in one store right now: the contract's retained presence snapshot.
public struct PresenceSnapshot: Hashable, Sendable {
    public var store: UInt16
    public var name: String
    public var updatedAt: Timestamp
    /// Members in the store, newest arrival first.
    public var members: [PresentMember]
    /// Per department: members and guests in it (a member whose department is unknown counts in none).
    public var occupancy: [UInt16: Occupancy]
    public var nodes: [NodeState]
    /// For a surveyed store: its fit and how well live readings fit the survey lately.
    public var survey: SurveyStatus?

    public init(
        store: UInt16, name: String, updatedAt: Timestamp, members: [PresentMember], occupancy: [UInt16: Occupancy],
        nodes: [NodeState]
    ) {
        self.store = store
        self.name = name
        self.updatedAt = updatedAt
        self.members = members
        self.occupancy = occupancy
        self.nodes = nodes
    }

    /// One member in the store.
    public struct PresentMember: Hashable, Sendable {
        public var member: MemberProfile
        /// The department the member is in; `nil` when they are surely in the store but in no department surely
        /// ("unknown beats wrong": the contract's `department: null`).
        public var department: UInt16?
        /// The department's name; `nil` exactly when `department` is.
        public var departmentName: String?
        public var proximity: Proximity
        public var arrivedAt: Timestamp
        public var inDepartmentSince: Timestamp
        public var lastSeen: Timestamp
        /// How sure the coordinator is of `department` (0–1, as on events); `nil` from a coordinator older than the
        /// field.
        public var confidence: Double?

        public init(
            member: MemberProfile, department: UInt16?, departmentName: String?, proximity: Proximity,
            arrivedAt: Timestamp, inDepartmentSince: Timestamp, lastSeen: Timestamp, confidence: Double? = nil
        ) {
            self.member = member
            self.department = department
            self.departmentName = departmentName
            self.proximity = proximity
            self.arrivedAt = arrivedAt
            self.inDepartmentSince = inDepartmentSince
            self.lastSeen = lastSeen
            self.confidence = confidence
        }
    }

    /// How many members and guests a department holds, and the department's name (a field the contract allows
    /// adding, so a view can label departments nobody is in).
    public struct Occupancy: Hashable, Sendable {
        public var members: Int
        public var guests: Int
        public var name: String?

        public init(members: Int, guests: Int, name: String? = nil) {
            self.members = members
            self.guests = guests
            self.name = name
        }
    }

    /// One node of the store and whether it is online.
    public struct NodeState: Hashable, Sendable {
        public var department: UInt16
        public var node: String
        public var state: LinkState

        public init(department: UInt16, node: String, state: LinkState) {
            self.department = department
            self.node = node
            self.state = state
        }
    }
}
