/// Renders a store's greeting (`"Welcome back, {name}! The usual {favoriteDrink}?"`) for one member.
///
/// Placeholders: `{name}`, `{favoriteDrink}`, `{visits}`, and any custom field by its column name. A sentence whose
/// placeholder has no value is dropped, so a member without a favourite drink reads "Welcome back, Ana!" rather
/// than "The usual ?".
public struct GreetingTemplate: Hashable, Sendable {
    public var text: String

    /// The greeting used when a store configures none.
    public static let standard = GreetingTemplate("Welcome back, {name}! The usual {favoriteDrink}?")

    public init(_ text: String) {
        self.text = text
    }

    /// The greeting for `member` on their visit number `visit`.
    public func render(for member: MemberProfile, visit: Int) -> String {
        var values = member.customFields
        values["name"] = member.name
        values["favoriteDrink"] = member.favoriteDrink.flatMap { $0.isEmpty ? nil : $0 }
        values["visits"] = String(visit)
        return GreetingTemplate.sentences(of: text).compactMap { sentence in
            GreetingTemplate.fill(sentence, with: values)
        }.joined(separator: " ")
    }

    /// Splits after `.`, `!` or `?` followed by a space, keeping the punctuation.
    private static func sentences(of text: String) -> [String] {
        var result: [String] = []
        var current = ""
        var previous: Character?
        for character in text {
            if character == " ", let previous, ".!?".contains(previous), !current.isEmpty {
                result.append(current)
                current = ""
            } else {
                current.append(character)
            }
            previous = character
        }
        if !current.isEmpty { result.append(current) }
        return result
    }

    /// Replaces `{key}` placeholders; `nil` if one of them has no value.
    private static func fill(_ sentence: String, with values: [String: String]) -> String? {
        var output = ""
        var rest = Substring(sentence)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            output += rest[..<open]
            let key = String(rest[rest.index(after: open)..<close])
            guard let value = values[key] else { return nil }
            output += value
            rest = rest[rest.index(after: close)...]
        }
        output += rest
        return output
    }
}
