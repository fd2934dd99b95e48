import BeaconMeshService

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a scanner's YAML config: a flat mapping of the command line's long flags in camelCase
/// (`store: 1`, `department: 10`, `passwordFile: /etc/beaconmesh/node.pass`, `uuid: [a, b]`).
///
/// The scanner runs on a Raspberry Pi and must not load Foundation's internationalisation data (ICU), which every
/// full YAML library here pulls in; its config has no nesting, so this reader takes exactly that subset:
/// `key: value` lines, `#` comments, single- or double-quoted strings, lists inline (`[a, b]`) or as `- item`
/// lines under the key. Anything else is an error naming the line.
public struct ScannerConfigFile: Sendable {
    /// One setting: its values (one, or several for lists) and where it was written.
    public struct Entry: Sendable, Equatable {
        public var values: [String]
        public var line: Int
    }

    public let path: String
    public private(set) var entries: [String: Entry] = [:]

    /// A problem in the file: `file:line: message`.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Reads and parses `path`, accepting only `allowedKeys`.
    public init(path: String, allowedKeys: Set<String>) throws(Failure) {
        self.path = path
        guard let text = WholeFile.read(path) else { throw Failure(description: "\(path): cannot read the file") }
        try parse(text, allowedKeys: allowedKeys)
    }

    /// Parses `text` as if read from `path`.
    public init(text: String, path: String, allowedKeys: Set<String>) throws(Failure) {
        self.path = path
        try parse(text, allowedKeys: allowedKeys)
    }

    private mutating func parse(_ text: String, allowedKeys: Set<String>) throws(Failure) {
        var openList: String?
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = ScannerConfigFile.stripComment(String(rawLine))
            let trimmed = line.trimmed
            if trimmed.isEmpty || trimmed == "---" { continue }
            if trimmed.hasPrefix("- ") || trimmed == "-" {
                guard let key = openList, line.first == " " || line.first == "\t" else {
                    throw fail(number, "a list item must be indented under a key such as 'uuid:'")
                }
                entries[key]?.values.append(try ScannerConfigFile.scalar(String(trimmed.dropFirst()).trimmed, line: number, path: path))
                continue
            }
            guard line.first != " " && line.first != "\t" else {
                throw fail(number, "unexpected indentation (the config is a flat list of 'key: value')")
            }
            guard let colon = line.firstIndex(of: ":") else { throw fail(number, "expected 'key: value'") }
            let key = String(line[..<colon]).trimmed
            let rest = String(line[line.index(after: colon)...]).trimmed
            guard allowedKeys.contains(key) else {
                throw fail(number, "unknown key '\(key)' (known: \(allowedKeys.sorted().joined(separator: ", ")))")
            }
            guard entries[key] == nil else { throw fail(number, "'\(key)' is set twice") }
            if rest.isEmpty {
                entries[key] = Entry(values: [], line: number)
                openList = key
            } else if rest.hasPrefix("[") {
                guard rest.hasSuffix("]") else { throw fail(number, "a list must end with ']'") }
                let inner = rest.dropFirst().dropLast()
                let items = inner.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmed }
                var values: [String] = []
                for item in items where !(items.count == 1 && item.isEmpty) {
                    values.append(try ScannerConfigFile.scalar(item, line: number, path: path))
                }
                entries[key] = Entry(values: values, line: number)
                openList = nil
            } else {
                entries[key] = Entry(values: [try ScannerConfigFile.scalar(rest, line: number, path: path)], line: number)
                openList = nil
            }
        }
    }

    private func fail(_ line: Int, _ message: String) -> Failure { Failure(description: "\(path):\(line): \(message)") }

    /// A scalar: quotes removed, `~`/`null` as empty.
    private static func scalar(_ text: String, line: Int, path: String) throws(Failure) -> String {
        if text.count >= 2, let first = text.first, first == "\"" || first == "'" {
            guard text.last == first else { throw Failure(description: "\(path):\(line): the quoted value is not closed") }
            return String(text.dropFirst().dropLast())
        }
        if text.hasPrefix("{") || text.hasPrefix("&") || text.hasPrefix("*") || text.hasPrefix("|") || text.hasPrefix(">") {
            throw Failure(description: "\(path):\(line): nested or multi-line values are not used in a scanner config")
        }
        return text == "~" || text == "null" ? "" : text
    }

    /// Removes a `#` comment that is not inside quotes.
    private static func stripComment(_ line: String) -> String {
        var quote: Character?
        var previous: Character = " "
        for index in line.indices {
            let character = line[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "#" && (previous == " " || previous == "\t" || index == line.startIndex) {
                return String(line[..<index])
            }
            previous = character
        }
        return line
    }
}

extension String {
    fileprivate var trimmed: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" || first == "\r" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" || last == "\r" { text = text.dropLast() }
        return String(text)
    }
}
