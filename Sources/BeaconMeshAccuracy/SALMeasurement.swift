import BeaconMeshCore
import Foundation

/// Converts a measurement of the SAL Autarkic Localization RSSI BLE Dataset (Karoliny et al., Silicon Austria Labs;
/// CC BY 4.0) into a labelled recording: the inside sniffers (`I-*`) are nodes of department 1 ("inside"), the
/// outside ones (`O-*`) of department 2 ("outside"); label 1 or 2 (light barriers) is inside, 0 outside.
///
/// A row: `superframe` (100 ms), the RSSI at each sniffer (−100: not heard; a reading of 0 dBm or more, which no
/// receiver reports, counts as not heard too), `Label`, photosensor columns.
public enum SALMeasurement {
    /// The department of the inside sniffers, and of the outside ones.
    public static let inside: UInt16 = 1
    public static let outside: UInt16 = 2
    /// Superframe 0 of every measurement, in epoch milliseconds (the recordings carry no date; 2020-10-08, their
    /// publication, keeps the captures' times plausible).
    static let start: Int64 = 1_602_115_200_000
    static let superframe: Int64 = 100

    /// Converts the CSV at `path`; the recording is named `sal-<file name without .csv>`. Throws one line naming the
    /// line and what is wrong.
    public static func convert(path: String) throws(RecordingError) -> ConvertedRecording {
        let table = try SimpleCSV.read(path: path)
        guard table.header.first == "superframe", let labelColumn = table.header.firstIndex(of: "Label") else {
            throw RecordingError(file: path, line: 1, message: "the header must begin with superframe and have a Label column")
        }
        let sniffers = Array(table.header[1..<labelColumn])
        guard !sniffers.isEmpty, sniffers.allSatisfy({ $0.hasPrefix("I-") || $0.hasPrefix("O-") }) else {
            throw RecordingError(file: path, line: 1, message: "the sniffer columns must be named I-… or O-…")
        }
        let beacon = ConvertedRecording.personBeacon
        let key = BeaconKey.iBeacon(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor)
        var adverts = [[ConvertedRecording.Advert]](repeating: [], count: sniffers.count)
        var labels: [(time: Int64, department: UInt16)] = []
        for row in table.rows {
            guard let frame = Int64(row.fields[0]), frame >= 0, let label = Int(row.fields[labelColumn]), (0...2).contains(label) else {
                throw RecordingError(file: path, line: row.line, message: "superframe must be a whole number and Label 0, 1 or 2")
            }
            let time = start + frame * superframe
            if let last = labels.last, last.time >= time {
                throw RecordingError(file: path, line: row.line, message: "superframes must grow")
            }
            labels.append((time, label == 0 ? outside : inside))
            for (index, field) in row.fields[1..<labelColumn].enumerated() {
                guard let rssi = Int(field) else {
                    throw RecordingError(file: path, line: row.line, message: "RSSI '\(field)' of \(sniffers[index]) is not a whole number")
                }
                // −100 is the dataset's "not heard"; a value of 0 dBm or more no receiver reports (car_sensor_1_measurement_1
                // has one `1`): both are no advert.
                if rssi > -100 && rssi < 0 { adverts[index].append(.init(time: time * 1000, rssi: Int8(clamping: rssi))) }
            }
        }
        guard !labels.isEmpty else { throw RecordingError(file: path, line: nil, message: "the file has no superframe") }
        // A skipped superframe belongs to the one before it.
        var spans: [GroundTruth.Span] = []
        for (index, label) in labels.enumerated() {
            let end = index + 1 < labels.count ? labels[index + 1].time : label.time + superframe
            spans.append(.init(beacon: key, from: label.time, to: end, department: label.department))
        }
        let nodes = sniffers.enumerated().map { index, name in
            ConvertedRecording.Node(
                id: name.lowercased(), department: name.hasPrefix("I-") ? inside : outside, adverts: adverts[index])
        }
        var name = (path as NSString).lastPathComponent
        if name.hasSuffix(".csv") { name = String(name.dropLast(4)) }
        return ConvertedRecording(
            name: "sal-\(name)", nodes: nodes, truth: GroundTruth(spans), beacon: beacon,
            address: BluetoothAddress(value: 0xF0_5A_1A_00_00_01))
    }
}
