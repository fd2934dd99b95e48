import BeaconMeshCore

/// One frame of the full-screen monitor as plain values: exactly `size.rows` rows, each exactly `size.columns`
/// terminal columns wide, made of styled text spans. The renderer makes it; the terminal adapter only copies it out.
public struct Screen: Hashable, Sendable {
    public var size: TerminalSize
    public var rows: [Row]

    public init(size: TerminalSize, rows: [Row]) {
        self.size = size
        self.rows = rows
    }

    /// The text of every row, without styles: what a person would read off the screen.
    public var lines: [String] { rows.map(\.text) }

    /// The text of the whole screen, one row per line (for tests and failure messages).
    public var text: String { lines.joined(separator: "\n") }

    /// How a span looks; the terminal adapter maps each to colours and attributes.
    public enum Style: Hashable, Sendable, CaseIterable {
        /// Default colours.
        case normal
        /// The title bar: the store's name, counts and clock.
        case title
        /// Column headers and panel titles.
        case header
        /// Secondary text: hints, rules, separators, ellipses.
        case dim
        /// A member who just arrived: white on red.
        case arrival
        /// Data that may be out of date because the broker link is lost.
        case stale
        /// Something working: a connected broker, an online node.
        case good
        /// Something broken: an offline node.
        case bad
        /// The brief "Presence change" notice.
        case flash
        /// An empty store's message.
        case notice
    }

    /// A run of text in one style.
    public struct Span: Hashable, Sendable {
        public var text: String
        public var style: Style

        public init(_ text: String, _ style: Style = .normal) {
            self.text = text
            self.style = style
        }
    }

    /// One screen row: spans left to right.
    public struct Row: Hashable, Sendable {
        public var spans: [Span]

        public init(_ spans: [Span] = []) {
            self.spans = spans
        }

        /// The row's text without styles.
        public var text: String { spans.map(\.text).joined() }

        /// The row's width in terminal columns.
        public var width: Int { spans.reduce(0) { $0 + TerminalWidth.of($1.text) } }

        /// The style of the span covering terminal column `column` (0-based), or `nil` past the end.
        public func style(atColumn column: Int) -> Style? {
            var start = 0
            for span in spans {
                let end = start + TerminalWidth.of(span.text)
                if column < end { return span.style }
                start = end
            }
            return nil
        }

        /// Appends `text` as it is.
        public mutating func add(_ text: String, _ style: Style = .normal) {
            spans.append(Span(text, style))
        }

        /// Appends `text` fitted to exactly `columns` columns (cut with `…`, or padded), on the left or the right.
        public mutating func add(_ text: String, columns: Int, _ style: Style = .normal, alignRight: Bool = false) {
            guard columns > 0 else { return }
            if alignRight, TerminalWidth.of(text) <= columns {
                spans.append(Span(String(repeating: " ", count: columns - TerminalWidth.of(text)) + text, style))
            } else {
                spans.append(Span(TerminalWidth.fit(text, columns: columns), style))
            }
        }

        /// This row cut or padded (with spaces in `fill`) to exactly `columns` columns.
        ///
        /// A wide character that would straddle the edge is replaced by a space, so the row never spills over.
        public func fitted(to columns: Int, fill: Style = .normal) -> Row {
            var result = Row()
            var used = 0
            for span in spans {
                if used >= columns { break }
                let width = TerminalWidth.of(span.text)
                if used + width <= columns {
                    result.spans.append(span)
                    used += width
                    continue
                }
                var cut = ""
                for scalar in span.text.unicodeScalars {
                    let scalarWidth = TerminalWidth.width(of: scalar)
                    if used + scalarWidth > columns { break }
                    cut.unicodeScalars.append(scalar)
                    used += scalarWidth
                }
                result.spans.append(Span(cut, span.style))
                break
            }
            if used < columns {
                result.spans.append(Span(String(repeating: " ", count: columns - used), fill))
            }
            return result
        }
    }
}
