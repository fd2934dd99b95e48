/// The letters shown in place of a member's photo: the first letter of the first and last words of the name,
/// upper-cased, whole characters of any script ("Ana Souza" → "AS", "Zoë" → "Z", "李小龍" → "李").
public enum MemberInitials {
    public static func of(_ name: String) -> String {
        let words = name.split(whereSeparator: { $0.isWhitespace || $0 == "-" })
        guard let first = words.first?.first else { return "?" }
        guard words.count > 1, let last = words.last?.first else { return String(first).uppercased() }
        return (String(first) + String(last)).uppercased()
    }
}
