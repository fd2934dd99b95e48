/// Which columns of the members table fit a terminal width, and how wide each is.
///
/// Every column has a minimum and a maximum width. Columns are dropped, least useful first, until the minimums fit;
/// the width left over then widens name, drink and department up to their maximums. A column is never wrapped.
public struct MemberTableLayout: Hashable, Sendable {
    /// A column of the members table.
    public enum Column: String, Hashable, Sendable, CaseIterable {
        case name, drink, department, confidence, proximity, inStore, visit

        /// The header text, given the column's width.
        func title(width: Int) -> String {
            switch self {
            case .name: return "NAME"
            case .drink: return width >= 15 ? "FAVOURITE DRINK" : "DRINK"
            case .department: return "DEPARTMENT"
            case .confidence: return "SURE"
            case .proximity: return "PROXIMITY"
            case .inStore: return "IN STORE"
            case .visit: return "VISIT"
            }
        }

        var minimumWidth: Int {
            switch self {
            case .name: return 12
            case .drink: return 10
            case .department: return 10
            case .confidence: return 4
            case .proximity: return 9
            case .inStore: return 8
            case .visit: return 5
            }
        }

        var maximumWidth: Int {
            switch self {
            case .name: return 26
            case .drink: return 18
            case .department: return 16
            case .confidence, .proximity, .inStore, .visit: return minimumWidth
            }
        }

        /// Numbers line up on the right.
        var alignsRight: Bool { self == .confidence || self == .inStore || self == .visit }
    }

    /// Columns dropped first when the terminal is narrow; the name is never dropped.
    static let dropOrder: [Column] = [.proximity, .confidence, .visit, .drink, .department, .inStore]
    /// Columns that take spare width, in this order.
    static let growOrder: [Column] = [.name, .drink, .department]
    /// Blank columns before the table.
    public static let margin = 1
    /// Blank columns between two columns.
    public static let gap = 2

    /// A column shown, with its width in terminal columns.
    public struct Placement: Hashable, Sendable {
        public var column: Column
        public var width: Int
    }

    /// The columns shown, left to right, with their widths.
    public private(set) var columns: [Placement]

    /// The layout for a terminal `width` columns wide.
    public init(width: Int) {
        var shown = Column.allCases
        func needed(_ columns: [Column]) -> Int {
            Self.margin + columns.reduce(0) { $0 + $1.minimumWidth } + Self.gap * (columns.count - 1)
        }
        for column in Self.dropOrder where needed(shown) > width {
            shown.removeAll { $0 == column }
        }
        var widths = Dictionary(uniqueKeysWithValues: shown.map { ($0, $0.minimumWidth) })
        var spare = width - needed(shown)
        for column in Self.growOrder where shown.contains(column) && spare > 0 {
            let grow = min(spare, column.maximumWidth - column.minimumWidth)
            widths[column]! += grow
            spare -= grow
        }
        if spare < 0 { widths[.name]! += spare }  // narrower than the name's minimum: cut the name
        columns = shown.map { Placement(column: $0, width: max(1, widths[$0]!)) }
    }

    /// The columns shown, without widths.
    public var shownColumns: [Column] { columns.map(\.column) }
}
