import Foundation

/// The plain comma-separated tables of recordings: no quoting, a header line, one record per line.
///
/// The recordings' own files (numbers, MAC addresses) and the converted layout and truth tables never need quotes;
/// a field with a quote in it is refused rather than half-understood.
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
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let first = lines.first else { throw RecordingError(file: path, line: nil, message: "the file is empty") }
        let header = first.split(separator: ",", omittingEmptySubsequences: false).map { String($0) }
        if let expected, Array(header.prefix(expected.count)) != expected {
            throw RecordingError(file: path, line: 1, message: "the header must begin with \(expected.joined(separator: ","))")
        }
        var rows: [Row] = []
        rows.reserveCapacity(lines.count)
        for (index, line) in lines.enumerated().dropFirst() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { String($0) }
            guard fields.count == header.count else {
                throw RecordingError(file: path, line: index + 1, message: "\(fields.count) fields where the header has \(header.count)")
            }
            guard !line.contains("\"") else {
                throw RecordingError(file: path, line: index + 1, message: "quoted fields are not supported")
            }
            rows.append(Row(line: index + 1, fields: fields))
        }
        return Table(header: header, rows: rows)
    }

    static func write(_ text: String, to path: String) throws(RecordingError) {
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
            throw RecordingError(file: path, line: nil, message: "cannot write the file")
        }
    }
}
