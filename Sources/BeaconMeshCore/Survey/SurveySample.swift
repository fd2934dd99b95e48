/// A node of a store as a survey knows it: its department and id (a node id is unique within its department).
public struct SurveyNode: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var department: UInt16
    public var node: String

    public init(department: UInt16, node: String) {
        self.department = department
        self.node = node
    }

    public static func < (lhs: SurveyNode, rhs: SurveyNode) -> Bool { (lhs.department, lhs.node) < (rhs.department, rhs.node) }

    /// `10/a`: how samples store it.
    public var description: String { "\(department)/\(node)" }

    /// Reads `10/a`; `nil` unless a department number, a slash and a valid node id.
    public init?(_ text: Substring) {
        guard let slash = text.firstIndex(of: "/"), let department = UInt16(text[..<slash]) else { return nil }
        let node = String(text[text.index(after: slash)...])
        guard NodeAddress.isValidNodeID(node) else { return nil }
        self.init(department: department, node: node)
    }
}

/// One second of a survey: what the store's nodes heard of the surveyor's beacon (each node's smoothed RSSI as the
/// decisions see it; a node that does not hear it is absent) while the surveyor said they were in `department`.
public struct SurveySample: Hashable, Sendable {
    public var store: UInt16
    public var beacon: BeaconKey
    /// The department the surveyor marked.
    public var department: UInt16
    public var at: Timestamp
    /// Smoothed RSSI (dBm) by node; nodes that do not hear the beacon now are not listed.
    public var readings: [SurveyNode: Double]
    /// Who said where the beacon was: the contract's trusted truth.
    public var source: Source

    /// Where a sample's department comes from (never the coordinator's own decisions).
    public enum Source: String, Hashable, Sendable, CaseIterable {
        /// A surveyor's mark (a walk, live or imported).
        case walk
        /// A reference: a fixed beacon placed in the department (`references:`).
        case reference
        /// A verified check-in at a till department.
        case checkin
    }

    public init(
        store: UInt16, beacon: BeaconKey, department: UInt16, at: Timestamp, readings: [SurveyNode: Double], source: Source = .walk
    ) {
        self.source = source
        self.store = store
        self.beacon = beacon
        self.department = department
        self.at = at
        self.readings = readings
    }

    /// The readings as one line of text, `10/a=-63.5;20/b=-80.0` (nodes in order, RSSI to a tenth of a dB): how the
    /// registry keeps them.
    public var readingsText: String {
        readings.sorted { $0.key < $1.key }.map { "\($0.key)=\(PresenceEngine.oneDecimal($0.value))" }.joined(separator: ";")
    }

    /// Readings from `readingsText`; `nil` when the text is malformed.
    public static func readings(fromText text: String) -> [SurveyNode: Double]? {
        var readings: [SurveyNode: Double] = [:]
        for item in text.split(separator: ";", omittingEmptySubsequences: true) {
            guard let equals = item.firstIndex(of: "="), let node = SurveyNode(item[..<equals]),
                let rssi = Double(item[item.index(after: equals)...]), rssi.isFinite, rssi > -200, rssi < 50
            else { return nil }
            readings[node] = rssi
        }
        return readings
    }
}
