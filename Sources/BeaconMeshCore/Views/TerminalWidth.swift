/// How many terminal columns text takes: East Asian wide characters take two, combining marks none.
public enum TerminalWidth {
    /// The column width of `text`.
    public static func of(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + width(of: $1) }
    }

    /// The column width of one scalar (0, 1 or 2).
    public static func width(of scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value == 0 { return 0 }
        if scalar.properties.generalCategory == .nonspacingMark || scalar.properties.generalCategory == .enclosingMark
            || value == 0x200B
        {
            return 0
        }
        if (0x1100...0x115F).contains(value) || (0x2E80...0xA4CF).contains(value) || (0xAC00...0xD7A3).contains(value)
            || (0xF900...0xFAFF).contains(value) || (0xFE30...0xFE4F).contains(value) || (0xFF00...0xFF60).contains(value)
            || (0xFFE0...0xFFE6).contains(value) || (0x1F300...0x1F64F).contains(value) || (0x1F900...0x1F9FF).contains(value)
            || (0x20000...0x3FFFD).contains(value)
        {
            return 2
        }
        return 1
    }

    /// `text` cut to at most `columns` columns (with `…` when cut), then padded with spaces to exactly `columns`.
    public static func fit(_ text: String, columns: Int) -> String {
        guard columns > 0 else { return "" }
        var result = ""
        var used = 0
        let total = of(text)
        let limit = total > columns ? columns - 1 : columns
        for scalar in text.unicodeScalars {
            let width = width(of: scalar)
            if used + width > limit { break }
            result.unicodeScalars.append(scalar)
            used += width
        }
        if total > columns {
            result += "…"
            used += 1
        }
        return result + String(repeating: " ", count: max(0, columns - used))
    }
}
