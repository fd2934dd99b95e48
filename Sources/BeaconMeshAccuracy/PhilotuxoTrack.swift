import BeaconMeshCore
import Foundation

/// Converts a track of the Position-Annotated BLE RSSI Dataset (Daniş, Cemgil, Ersoy, IEEE Access 9, 2021; CC0) into
/// a labelled recording: its 12 receivers in 4 groups become department nodes (group N = department N), the true
/// department at each reading is the group whose centroid is nearest the beacon's annotated x, y.
///
/// A track row: `timestamp (unix s), sensor MAC, beacon MAC, RSSI, x, y, z, 9 orientation values`.
public enum PhilotuxoTrack {
    /// Which receivers become nodes.
    public enum Radios: String, Sendable, CaseIterable {
        /// All 12: three per department.
        case all
        /// Only each group's Raspberry Pi: one radio per department.
        case pi
    }

    /// The receivers (`cnf/tetam.dev`): MAC → (node id, group).
    static let receivers: [String: (id: String, group: UInt16)] = [
        "b827eb4521b4": ("sensor10", 1), "000000000101": ("sensor11", 1), "000000000102": ("sensor12", 1),
        "b827eb917e19": ("sensor20", 2), "000000000201": ("sensor21", 2), "000000000202": ("sensor22", 2),
        "b827ebf7d096": ("sensor30", 3), "000000000301": ("sensor31", 3), "000000000302": ("sensor32", 3),
        "b827ebfd7811": ("sensor40", 4), "000000000401": ("sensor41", 4), "000000000402": ("sensor42", 4),
    ]

    /// The groups' centroids in metres (`SOURCES.md`), by group.
    static let centroids: [(group: UInt16, x: Double, y: Double)] = [
        (1, 4.96, 4.64), (2, 5.06, 13.71), (3, 14.69, 13.70), (4, 14.51, 4.04),
    ]

    /// The group whose centroid is nearest `(x, y)`.
    static func group(x: Double, y: Double) -> UInt16 {
        centroids.min { ($0.x - x) * ($0.x - x) + ($0.y - y) * ($0.y - y) < ($1.x - x) * ($1.x - x) + ($1.y - y) * ($1.y - y) }!
            .group
    }

    /// Converts the track file at `path` (`*_all_sensors.mbd`); the recording is named `philotuxo-<track>` (with
    /// `-pi` for `.pi`). Throws one line naming the line and what is wrong.
    public static func convert(path: String, radios: Radios = .all) throws(RecordingError) -> ConvertedRecording {
        var track = (path as NSString).lastPathComponent
        for suffix in [".mbd", "_all_sensors"] where track.hasSuffix(suffix) { track = String(track.dropLast(suffix.count)) }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw RecordingError(file: path, line: nil, message: "cannot read the file as text")
        }
        let beacon = ConvertedRecording.personBeacon
        let key = BeaconKey.iBeacon(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor)
        var adverts: [String: [ConvertedRecording.Advert]] = [:]
        var labels: [(time: Int64, group: UInt16)] = []
        var address: UInt64?
        for (index, line) in text.split(separator: "\n").enumerated() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count >= 7, let seconds = Double(fields[0]), seconds.isFinite, let rssi = Int8(fields[3]),
                let x = Double(fields[4]), let y = Double(fields[5]), x.isFinite, y.isFinite
            else {
                throw RecordingError(file: path, line: index + 1, message: "expected timestamp,sensor,beacon,rssi,x,y,z,…")
            }
            guard let receiver = receivers[String(fields[1])] else {
                throw RecordingError(file: path, line: index + 1, message: "unknown receiver \(fields[1])")
            }
            address = address ?? UInt64(fields[2], radix: 16)
            let time = Int64((seconds * 1_000_000).rounded())
            labels.append((time / 1000, group(x: x, y: y)))
            if radios == .pi && !receiver.id.hasSuffix("0") { continue }
            adverts[receiver.id, default: []].append(.init(time: time, rssi: rssi))
        }
        guard !labels.isEmpty else { throw RecordingError(file: path, line: nil, message: "the track has no reading") }
        labels.sort { $0.time < $1.time }
        // Between two readings the beacon is where the earlier one put it; the last reading counts for half a second.
        var spans: [GroundTruth.Span] = []
        for (index, label) in labels.enumerated() {
            let end = index + 1 < labels.count ? labels[index + 1].time : label.time + 500
            guard end > label.time else { continue }
            spans.append(.init(beacon: key, from: label.time, to: end, department: label.group))
        }
        let nodes = receivers.values.sorted { $0.id < $1.id }.compactMap { receiver -> ConvertedRecording.Node? in
            guard let heard = adverts[receiver.id] else { return nil }
            return .init(id: receiver.id, department: receiver.group, adverts: heard.sorted { $0.time < $1.time })
        }
        return ConvertedRecording(
            name: "philotuxo-\(track)\(radios == .pi ? "-pi" : "")", nodes: nodes, truth: GroundTruth(spans), beacon: beacon,
            address: BluetoothAddress(value: address ?? 0xE7_8F_13_56_24_CE))
    }
}
