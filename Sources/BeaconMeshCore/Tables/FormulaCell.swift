/// The members CSV's guard against formulas (CSV injection): a cell a spreadsheet would run — one that begins with
/// `=`, `+`, `-` or `@` — is written with a leading `'`, and reading takes exactly that one `'` away.
///
/// So that every text survives the round trip, a cell that already begins with one or more `'` followed by one of
/// those characters gets one more `'` too: `written` adds a `'` to any cell of the form `'*[=+-@]…`, and `read` drops
/// the first `'` of any cell of the form `''*[=+-@]…`. Other cells pass unchanged both ways.
public enum FormulaCell {
    /// The characters that make a spreadsheet take a cell as a formula.
    public static let triggers: Set<Character> = ["=", "+", "-", "@"]

    /// The cell as written to the file.
    public static func written(_ text: String) -> String {
        needsGuard(text[...]) ? "'" + text : text
    }

    /// The text of a cell read from the file.
    public static func read(_ cell: String) -> String {
        guard cell.first == "'", needsGuard(cell.dropFirst()) else { return cell }
        return String(cell.dropFirst())
    }

    /// Whether `text` is `'*` followed by a trigger.
    private static func needsGuard(_ text: Substring) -> Bool {
        guard let first = text.first(where: { $0 != "'" }) else { return false }
        return triggers.contains(first)
    }
}
