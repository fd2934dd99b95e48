import BeaconMeshCore
import Foundation

/// The recordings' tables (`layout.csv`, `truth.csv`, the public datasets' own files) as files: read and written by
/// `CSVTable`, the one CSV reader and writer, with a header line and one record per row checked here.
enum SimpleCSV {
    struct Row {
        /// The line number in the file (1 is the header).
        var line: Int
        var fields: [String]
    }

    struct Table {
        var header: [String]
        var rows: [Row]
    }

    /// Reads `path`, checking that its header starts with `header`; every row must have as many fields as the header.
    static func read(path: String, header expected: [String]? = nil) throws(RecordingError) -> Table {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RecordingError(file: path, line: nil, message: "cannot read the file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw RecordingError(file: path, line: nil, message: "the file is not UTF-8 text")
        }
        var records: [CSVTable.Record]
        do {
            records = try CSVTable.read(text)
        } catch {
            throw RecordingError(file: path, line: error.line, message: error.message)
        }
        while records.last?.fields == [""] { records.removeLast() }
        guard let header = records.first?.fields else { throw RecordingError(file: path, line: nil, message: "the file is empty") }
        if let expected, Array(header.prefix(expected.count)) != expected {
            throw RecordingError(file: path, line: 1, message: "the header must begin with \(expected.joined(separator: ","))")
        }
        var rows: [Row] = []
        rows.reserveCapacity(records.count)
        for record in records.dropFirst() {
            guard record.fields.count == header.count else {
                throw RecordingError(
                    file: path, line: record.line, message: "\(record.fields.count) fields where the header has \(header.count)")
            }
            rows.append(Row(line: record.line, fields: record.fields))
        }
        return Table(header: header, rows: rows)
    }

    /// Writes `rows` (the header first) to `path`.
    static func write(_ rows: [[String]], to path: String) throws(RecordingError) {
        guard FileManager.default.createFile(atPath: path, contents: Data(CSVTable.text(rows, lineEnding: .lf).utf8)) else {
            throw RecordingError(file: path, line: nil, message: "cannot write the file")
        }
    }
}
