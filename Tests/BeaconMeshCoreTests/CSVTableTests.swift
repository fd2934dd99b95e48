import BeaconMeshCore
import Testing

@Suite("CSV tables")
struct CSVTableTests {
    static let hostile = [
        "=HYPERLINK(\"http://evil.example\",\"x\")", "+1+2", "-3", "@SUM(A1)", "'=already", "''+twice", "O'Brien", "a,b",
        "say \"hi\"", "line\nbreak", "crlf\r\nbreak", "", " spaced ", "Zoë ☕", "\t=tab first",
    ]

    @Test("every hostile cell survives a write and a read, and none is written as a formula")
    func roundTrip() throws {
        let rows = [["name", "value"]] + Self.hostile.map { [$0, "1"] }
        let text = CSVTable.text(rows)
        #expect(try CSVTable.read(text).map(\.fields) == rows)
        #expect(try CSVTable.read(CSVTable.text(rows, lineEnding: .lf)).map(\.fields) == rows)
        #expect(CSVTable.text([["a", "b"], ["c", "d"]], lineEnding: .lf) == "a,b\nc,d\n")
        // No cell begins with a trigger in the file (a quoted cell's text begins after its quote).
        for record in try CSVTable.read(text, formulas: .keep) {
            for cell in record.fields { #expect(!(cell.first.map { "=+-@".contains($0) } ?? false), "\(cell)") }
        }
        #expect(text.hasPrefix("name,value\r\n\"'=HYPERLINK(\"\"http"), "guarded, then quoted: \(text.prefix(60))")
    }

    @Test("records know the line they start on, across quoted line breaks; CRLF and LF both end a record; a BOM is skipped")
    func lines() throws {
        let records = try CSVTable.read("\u{FEFF}a,b\r\n\"x\ny\",2\n\nlast,3")
        #expect(records.map(\.line) == [1, 2, 4, 5])
        #expect(records.map(\.fields) == [["a", "b"], ["x\ny", "2"], [""], ["last", "3"]])
        #expect(try CSVTable.read("a,b\n").count == 1, "a last line break starts no record")
        #expect(try CSVTable.read("a,\"\"\n").map(\.fields) == [["a", ""]])
    }

    @Test(
        "malformed text is one error naming its line",
        arguments: [
            ("a,b\n\"open,2\n", 2, "a quoted field is not closed before the end of the file"),
            ("a,b\nx\"y,2\n", 2, "a quote inside a field that does not begin with one"),
            ("a,b\n\"x\"y,2\n", 2, "text after a quoted field's closing quote"),
        ])
    func malformed(text: String, line: Int, message: String) {
        #expect(throws: CSVTable.Malformed(line: line, message: message)) { try CSVTable.read(text) }
    }
}
