import BeaconMeshCore

/// The panels under the members table: recent promos, the store's nodes, and occupancy per department.
///
/// Wide terminals show the three side by side on one band; narrower ones give promos a band of their own and put
/// nodes and occupancy side by side below it; the narrowest give each panel its own band. Panels get up to five lines each: fewer on a low terminal when the
/// table needs the rows, more when the store is quiet; tiny terminals get none.
extension ScreenRenderer {
    /// Between two panels on one band.
    static let panelSeparator = " │ "

    /// All panel rows, starting with a rule that separates them from the table; empty when the terminal is too low.
    static func panelRows(_ model: MonitorModel, size: TerminalSize) -> [Screen.Row] {
        let width = size.columns
        let inner = width - 1  // the left margin
        let separator = TerminalWidth.of(panelSeparator)
        // Which panels share a band: all three; promos, then nodes beside occupancy; or each on its own band.
        let arrangement: [[Panel]]
        if width >= widePanelsFrom {
            arrangement = [[.promos, .nodes, .occupancy]]
        } else if (inner - separator) / 2 >= 24 {
            arrangement = [[.promos], [.nodes, .occupancy]]
        } else {
            arrangement = [[.promos], [.nodes], [.occupancy]]
        }
        // Rows left once the title, table header, status line and the members (at least the empty-store note) are
        // drawn. Panels may take them all, and always get their share of a tall enough terminal. Each band costs a
        // title row, and all of them one rule.
        let bands = arrangement.count
        let spare = size.rows - 3 - max(3, model.snapshot?.members.count ?? 0)
        let share = (size.rows - 12) / (3 * bands)
        let lines = min(5, max(share, (spare - 1 - bands) / bands))
        guard lines >= 1 else { return [] }

        var rows = [Screen.Row([Screen.Span(String(repeating: "─", count: width), .dim)])]
        if let till = model.till {
            rows += band(
                [
                    self.panel(
                        "NEAR THE TILL · press a number to check in", tillLines(model, till: till, width: inner, count: 3),
                        width: inner)
                ], width: width)
        }
        for panels in arrangement {
            let widths = panelWidths(panels, available: inner - separator * (panels.count - 1))
            rows += band(
                zip(panels, widths).map { panel, width in
                    switch panel {
                    case .promos: return self.panel("RECENT PROMOS", promoLines(model, width: width, count: lines), width: width)
                    case .nodes: return self.panel("NODES", nodeLines(model, width: width, count: lines), width: width)
                    case .occupancy: return occupancyPanel(model, width: width, count: lines)
                    }
                }, width: width)
        }
        return rows
    }

    /// The three panels.
    enum Panel {
        case promos, nodes, occupancy
    }

    /// Widths for panels sharing a band of `available` columns: promos take what nodes and occupancy leave.
    static func panelWidths(_ panels: [Panel], available: Int) -> [Int] {
        switch panels.count {
        case 3:
            let occupancy = min(30, max(20, available * 28 / 100))
            let nodes = min(26, max(18, available * 24 / 100))
            return [available - occupancy - nodes, nodes, occupancy]
        case 2:
            return [available / 2, available - available / 2]
        default:
            return [available]
        }
    }

    /// Panels placed side by side, each a list of rows of its own width, after a one-column margin.
    static func band(_ panels: [[Screen.Row]], width: Int) -> [Screen.Row] {
        let height = panels.map(\.count).max() ?? 0
        return (0..<height).map { line in
            var row = Screen.Row([Screen.Span(" ")])
            for (index, panel) in panels.enumerated() {
                if index > 0 { row.add(panelSeparator, .dim) }
                row.spans += panel[line].spans
            }
            return row.fitted(to: width)
        }
    }

    /// A panel: its title, then `lines` rows, each exactly `width` wide.
    static func panel(_ title: String, _ lines: [Screen.Row], width: Int) -> [Screen.Row] {
        [Screen.Row([Screen.Span(title, .header)]).fitted(to: width)] + lines.map { $0.fitted(to: width) }
    }

    /// Exactly `count` rows of `items`, or a hint when there are none, with `… n more` when they do not all fit.
    static func listLines(_ items: [Screen.Row], none: String, width: Int, count: Int) -> [Screen.Row] {
        var rows: [Screen.Row]
        if items.isEmpty {
            rows = [Screen.Row([Screen.Span(none, .dim)])]
        } else if items.count <= count {
            rows = items
        } else {
            rows = Array(items.prefix(count - 1)) + [Screen.Row([Screen.Span("… \(items.count - count + 1) more", .dim)])]
        }
        while rows.count < count { rows.append(Screen.Row()) }
        return rows.prefix(count).map { $0.fitted(to: width) }
    }

    // MARK: Till

    /// `1  Zoë Martin      immediate` for each member near the till, then the last check-in decided.
    static func tillLines(_ model: MonitorModel, till: TillPanel, width: Int, count: Int) -> [Screen.Row] {
        var items = till.entries.map { entry in
            var row = Screen.Row()
            row.add("\(entry.number)  ", .header)
            row.add(entry.member.name, columns: max(1, min(24, width - 14)))
            row.add("  ")
            row.add(entry.proximity.rawValue, .dim)
            return row
        }
        if let last = model.recentCheckins.first {
            var row = Screen.Row()
            row.add(last.accepted ? "✓ " : "✗ ", last.accepted ? .good : .bad)
            row.add("\(last.member): \(last.accepted ? "checked in" : "refused") (\(last.detail))", columns: max(1, width - 2))
            items.append(row)
        }
        return listLines(items, none: "Nobody near the till", width: width, count: max(count, min(10, items.count)))
    }

    // MARK: Promos

    /// `14:03  Ana Souza     Clothing    Promoção de blusas!`, newest first; the time goes when space is short.
    static func promoLines(_ model: MonitorModel, width: Int, count: Int) -> [Screen.Row] {
        let nameWidth = 12
        let departmentWidth = 10
        let withoutTime = nameWidth + 1 + departmentWidth + 1
        let showsTime = width - withoutTime - 7 >= 24
        let titleWidth = width - withoutTime - (showsTime ? 7 : 0)
        let items = model.recentPromos.map { promo in
            var row = Screen.Row()
            if showsTime { row.add(String(EventLine.clockTime(promo.at).prefix(5)) + "  ", .dim) }
            row.add(promo.memberName, columns: nameWidth)
            row.add(" ")
            row.add(promo.departmentName, columns: departmentWidth, .dim)
            row.add(" ")
            row.add(promo.title, columns: max(1, titleWidth))
            return row
        }
        return listLines(items, none: "No promos offered yet", width: width, count: count)
    }

    // MARK: Nodes

    /// `● Clothing a       online`: offline nodes first, then by department and node id.
    static func nodeLines(_ model: MonitorModel, width: Int, count: Int) -> [Screen.Row] {
        let nodes = (model.snapshot?.nodes ?? []).sorted {
            if ($0.state == .offline) != ($1.state == .offline) { return $0.state == .offline }
            return ($0.department, $0.node) < ($1.department, $1.node)
        }
        let stateWidth = 8
        let items = nodes.map { node in
            let online = node.state == .online
            let labelWidth = width - 2 - stateWidth
            let nodeWidth = min(TerminalWidth.of(node.node), max(1, labelWidth / 2))
            var row = Screen.Row()
            row.add(online ? "● " : "○ ", online ? .good : .bad)
            row.add(model.departmentName(node.department), columns: max(1, labelWidth - nodeWidth - 1))
            row.add(" ")
            row.add(node.node, columns: nodeWidth, .dim)
            row.add(online ? "online" : "OFFLINE", columns: stateWidth, online ? .good : .bad, alignRight: true)
            return row
        }
        return listLines(items, none: "No nodes reported", width: width, count: count)
    }

    // MARK: Occupancy

    /// `OCCUPANCY  members guests` over `Clothing  1  3`, by department number.
    static func occupancyPanel(_ model: MonitorModel, width: Int, count: Int) -> [Screen.Row] {
        let membersWidth = 8
        let guestsWidth = 7
        let nameWidth = max(1, width - membersWidth - guestsWidth)
        var title = Screen.Row()
        title.add("OCCUPANCY", columns: nameWidth, .header)
        title.add("members", columns: membersWidth, .header, alignRight: true)
        title.add("guests", columns: guestsWidth, .header, alignRight: true)
        let departments = (model.snapshot?.occupancy ?? [:]).sorted { $0.key < $1.key }
        let items = departments.map { department, occupancy in
            var row = Screen.Row()
            row.add(model.departmentName(department), columns: nameWidth)
            row.add("\(occupancy.members)", columns: membersWidth, alignRight: true)
            row.add("\(occupancy.guests)", columns: guestsWidth, alignRight: true)
            return row
        }
        return [title.fitted(to: width)] + listLines(items, none: "Nobody counted yet", width: width, count: count)
    }
}
