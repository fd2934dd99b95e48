import BeaconMeshCore
import Foundation

/// A labelled recording as the scoreboard reads it: one btsnoop capture per node and where each person truly was.
///
/// On disk it is a folder with two CSV files beside the captures:
/// - `layout.csv`, header `node,department,capture`: each node's id, its department and its capture's file name
///   (relative to the folder);
/// - `truth.csv`, header `beacon,from,to,department`: the person carrying `beacon` (a beacon key) was in
///   `department` from `from` to `to` (epoch milliseconds, `from` < `to`); spans of one beacon do not overlap.
/// Every node is in store `store` (1 unless `layout.csv` says otherwise with a `store` column).
public struct LabelledRecording: Sendable {
    /// A node of the recording and its capture.
    public struct Node: Hashable, Sendable {
        public var id: String
        public var department: UInt16
        /// The capture's path (as found: the folder's path joined with the file name).
        public var capture: String

        public init(id: String, department: UInt16, capture: String) {
            self.id = id
            self.department = department
            self.capture = capture
        }
    }

    /// The recording's name: its folder's last component.
    public var name: String
    public var store: UInt16 = 1
    public var nodes: [Node]
    public var truth: GroundTruth

    public init(name: String, store: UInt16 = 1, nodes: [Node], truth: GroundTruth) {
        self.name = name
        self.store = store
        self.nodes = nodes
        self.truth = truth
    }

    /// The departments the recording's nodes sit in, ascending.
    public var departments: [UInt16] { Array(Set(nodes.map(\.department))).sorted() }

    /// Reads the recording in `folder`; throws one line naming the file, the line and what is wrong.
    public static func load(folder: String) throws(RecordingError) -> LabelledRecording {
        let name = (folder as NSString).lastPathComponent
        let layoutPath = (folder as NSString).appendingPathComponent("layout.csv")
        let layout = try SimpleCSV.read(path: layoutPath, header: ["node", "department", "capture"])
        var nodes: [Node] = []
        for row in layout.rows {
            guard NodeAddress.isValidNodeID(row.fields[0]) else {
                throw RecordingError(file: layoutPath, line: row.line, message: "node id '\(row.fields[0])' is not [a-z0-9-]{1,32}")
            }
            guard let department = UInt16(row.fields[1]) else {
                throw RecordingError(file: layoutPath, line: row.line, message: "department '\(row.fields[1])' is not 0–65535")
            }
            guard !nodes.contains(where: { $0.id == row.fields[0] }) else {
                throw RecordingError(file: layoutPath, line: row.line, message: "node '\(row.fields[0])' is listed twice")
            }
            let capture = (folder as NSString).appendingPathComponent(row.fields[2])
            guard FileManager.default.fileExists(atPath: capture) else {
                throw RecordingError(file: layoutPath, line: row.line, message: "capture '\(row.fields[2])' does not exist")
            }
            nodes.append(Node(id: row.fields[0], department: department, capture: capture))
        }
        guard !nodes.isEmpty else { throw RecordingError(file: layoutPath, line: nil, message: "no node is listed") }
        let truthPath = (folder as NSString).appendingPathComponent("truth.csv")
        let truth = try GroundTruth.read(path: truthPath)
        return LabelledRecording(name: name, nodes: nodes, truth: truth)
    }

    /// Writes `layout.csv` and `truth.csv` into `folder` (the captures are written by `RecordingWriter`).
    func writeTables(to folder: String) throws(RecordingError) {
        let layout =
            [["node", "department", "capture"]]
            + nodes.map { ["\($0.id)", "\($0.department)", ($0.capture as NSString).lastPathComponent] }
        try SimpleCSV.write(layout, to: (folder as NSString).appendingPathComponent("layout.csv"))
        try SimpleCSV.write(truth.csv, to: (folder as NSString).appendingPathComponent("truth.csv"))
    }
}

/// A recording that cannot be read or written: the file, the line if any, what is wrong.
public struct RecordingError: Error, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var message: String

    public init(file: String, line: Int?, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String { line.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)" }
}
