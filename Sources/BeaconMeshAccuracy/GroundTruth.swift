import BeaconMeshCore

/// Where each person of a recording truly was: per beacon, time spans in departments.
public struct GroundTruth: Sendable {
    /// One stay: the person carrying `beacon` was in `department` during `[from, to)` (epoch milliseconds).
    public struct Span: Hashable, Sendable {
        public var beacon: BeaconKey
        public var from: Int64
        public var to: Int64
        public var department: UInt16

        public init(beacon: BeaconKey, from: Int64, to: Int64, department: UInt16) {
            self.beacon = beacon
            self.from = from
            self.to = to
            self.department = department
        }
    }

    /// Per beacon, its spans in time order.
    public private(set) var spans: [BeaconKey: [Span]]

    /// Truth from spans (in any order); adjacent spans of one beacon in the same department are merged.
    public init(_ all: [Span]) {
        var byBeacon: [BeaconKey: [Span]] = [:]
        for span in all.sorted(by: { ($0.from, $0.to) < ($1.from, $1.to) }) {
            if var last = byBeacon[span.beacon]?.last, last.department == span.department, last.to == span.from {
                last.to = span.to
                byBeacon[span.beacon]![byBeacon[span.beacon]!.count - 1] = last
            } else {
                byBeacon[span.beacon, default: []].append(span)
            }
        }
        spans = byBeacon
    }

    /// The beacons of the people in the recording, in a fixed order.
    public var beacons: [BeaconKey] { spans.keys.sorted { $0.description < $1.description } }

    /// Where the person with `beacon` was at `time` (`nil` outside every span).
    public func department(of beacon: BeaconKey, at time: Int64) -> UInt16? {
        guard let spans = spans[beacon] else { return nil }
        var low = 0
        var high = spans.count
        while low < high {
            let middle = (low + high) / 2
            if spans[middle].to <= time { low = middle + 1 } else { high = middle }
        }
        return low < spans.count && spans[low].from <= time ? spans[low].department : nil
    }

    /// The times the person with `beacon` went from one department into another, with the department entered: the
    /// start of the next span, also across an unscored gap between the two (a walk's truth leaves the crossing out).
    public func changes(of beacon: BeaconKey) -> [(at: Int64, to: UInt16)] {
        let spans = spans[beacon] ?? []
        return zip(spans, spans.dropFirst()).compactMap { previous, next in
            previous.department != next.department ? (next.from, next.department) : nil
        }
    }

    /// The first and last time of any span.
    public var period: (from: Int64, to: Int64)? {
        let all = spans.values.joined()
        guard let from = all.map(\.from).min(), let to = all.map(\.to).max() else { return nil }
        return (from, to)
    }

    /// The `truth.csv` rows, the header first.
    var csv: [[String]] {
        var rows = [["beacon", "from", "to", "department"]]
        for beacon in beacons {
            for span in spans[beacon] ?? [] { rows.append(["\(beacon)", "\(span.from)", "\(span.to)", "\(span.department)"]) }
        }
        return rows
    }

    /// Reads a `truth.csv`; throws one line naming the line and what is wrong (overlapping spans included).
    static func read(path: String) throws(RecordingError) -> GroundTruth {
        let table = try SimpleCSV.read(path: path, header: ["beacon", "from", "to", "department"])
        var all: [Span] = []
        for row in table.rows {
            guard let beacon = BeaconKey(row.fields[0]) else {
                throw RecordingError(file: path, line: row.line, message: "'\(row.fields[0])' is not a beacon key")
            }
            guard let from = Int64(row.fields[1]), let to = Int64(row.fields[2]), from < to else {
                throw RecordingError(file: path, line: row.line, message: "from and to must be epoch milliseconds with from < to")
            }
            guard let department = UInt16(row.fields[3]) else {
                throw RecordingError(file: path, line: row.line, message: "department '\(row.fields[3])' is not 0–65535")
            }
            if let previous = all.last(where: { $0.beacon == beacon }), previous.to > from {
                throw RecordingError(file: path, line: row.line, message: "this span overlaps or precedes the one before it")
            }
            all.append(Span(beacon: beacon, from: from, to: to, department: department))
        }
        guard !all.isEmpty else { throw RecordingError(file: path, line: nil, message: "no span is listed") }
        return GroundTruth(all)
    }
}
