/// The one CSV reader and writer of BeaconMesh (RFC 4180: comma-separated, `"` quotes, `""` inside quotes, line
/// breaks inside quotes), for every table it reads or writes: the members CSV, the analytics exports, the
/// recordings' layout and truth tables. Text in, rows out and back; no I/O.
///
/// Every cell written goes through `FormulaCell` (a cell a spreadsheet would run as a formula gets a leading `'`), and
/// reading with `formulas: .unguard` takes exactly that `'` away again, so an export imports unchanged.
public enum CSVTable {
    /// One record of a file: where it starts, and its fields.
    public struct Record: Equatable, Sendable {
        /// The line of the file it starts on (1 is the first).
        public var line: Int
        public var fields: [String]
    }

    /// Text that is not CSV: where, and what is wrong.
    public struct Malformed: Error, Equatable, Sendable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }

        public init(line: Int, message: String) {
            self.line = line
            self.message = message
        }
    }

    /// What reading does with the formula guard: take it away (tables BeaconMesh wrote), or keep cells as they are.
    public enum Formulas: Sendable {
        case unguard, keep
    }

    /// The records of `text` (a byte-order mark first is skipped; a last line break ends the last record, it does not
    /// start an empty one; an empty line is a record of one empty field).
    public static func read(_ text: String, formulas: Formulas = .unguard) throws(Malformed) -> [Record] {
        var records: [Record] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var line = 1
        var recordLine = 1
        var quoted = false
        // Whether the field being read was quoted and has been closed (only a separator may follow).
        var closed = false
        var bytes = Array(text.utf8)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        func endField() {
            let value = String(decoding: field, as: UTF8.self)
            fields.append(formulas == .unguard ? FormulaCell.read(value) : value)
            field.removeAll(keepingCapacity: true)
            closed = false
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                        field.append(byte)
                        index += 1
                    } else {
                        quoted = false
                        closed = true
                    }
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: ","):
                endField()
            case UInt8(ascii: "\r") where index < bytes.count && bytes[index] == UInt8(ascii: "\n"):
                continue
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                endField()
                records.append(Record(line: recordLine, fields: fields))
                fields.removeAll()
                line += 1
                recordLine = line
            case UInt8(ascii: "\""):
                guard field.isEmpty, !closed else {
                    throw Malformed(line: line, message: "a quote inside a field that does not begin with one")
                }
                quoted = true
            default:
                guard !closed else { throw Malformed(line: line, message: "text after a quoted field's closing quote") }
                field.append(byte)
            }
        }
        if quoted { throw Malformed(line: recordLine, message: "a quoted field is not closed before the end of the file") }
        if !field.isEmpty || !fields.isEmpty || closed {
            endField()
            records.append(Record(line: recordLine, fields: fields))
        }
        return records
    }

    /// How rows end in a file.
    public enum LineEnding: String, Sendable {
        /// CRLF, as RFC 4180 has it (what spreadsheets expect of a download).
        case crlf = "\r\n"
        /// LF, as the members CSV and the recordings' tables have always been written (line-based tools read them).
        case lf = "\n"
    }

    /// `rows` as CSV text: each cell guarded against formulas, quoted when it holds a comma, a quote or a line break;
    /// every row ends with `lineEnding`.
    public static func text(_ rows: [[String]], lineEnding: LineEnding = .crlf) -> String {
        var text = ""
        for row in rows {
            text += row.map(cell).joined(separator: ",")
            text += lineEnding.rawValue
        }
        return text
    }

    /// One cell as written.
    static func cell(_ value: String) -> String {
        let guarded = FormulaCell.written(value)
        guard guarded.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return guarded }
        var quoted = "\""
        for character in guarded {
            if character == "\"" { quoted += "\"" }
            quoted.append(character)
        }
        return quoted + "\""
    }
}
