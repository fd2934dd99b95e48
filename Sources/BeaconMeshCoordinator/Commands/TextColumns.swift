/// Rows of text in columns, as the command-line tables print them: each column padded to its widest cell, two spaces
/// apart, no trailing spaces; `(none)` under the header when there are no rows.
public enum TextColumns {
    public static func render(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + (rows.isEmpty ? [header.indices.map { $0 == 0 ? "(none)" : "" }] : rows)
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            var line = zip(row, widths).map { $0 + String(repeating: " ", count: max(0, $1 - $0.count)) }.joined(separator: "  ")
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }
}
