import BeaconMeshCore

/// Draws the monitor's model as a `Screen` for a terminal size at a moment: pure, no terminal, no clock.
///
/// Top to bottom: the title bar (store, counts, clock, a STALE marker when the broker is lost), the members table
/// (newest arrival first; columns dropped to fit the width), the panels (recent promos, nodes, occupancy) and the
/// status line (broker connection, "Presence change", `q quit`). Terminals too small for any of it get one line
/// saying so.
public enum ScreenRenderer {
    /// Narrower terminals stack the panels: promos on one band, nodes and occupancy side by side on the next.
    public static let widePanelsFrom = 96
    /// The smallest terminal the monitor draws in.
    public static let minimumSize = TerminalSize(columns: 24, rows: 6)

    public static func render(_ model: MonitorModel, size: TerminalSize, now: Timestamp) -> Screen {
        let width = size.columns
        guard width >= minimumSize.columns, size.rows >= minimumSize.rows else {
            return tooSmall(size)
        }
        // The latest alert takes a row of its own, above the status line; the panels share what is left.
        let alert = model.latestAlert.map { alertRow($0, width: width) }
        let panels = panelRows(model, size: TerminalSize(columns: width, rows: size.rows - (alert == nil ? 0 : 1)))
        let bodyHeight = size.rows - 3 - panels.count - (alert == nil ? 0 : 1)
        let layout = MemberTableLayout(width: width)
        var rows = [titleRow(model, width: width, now: now), headerRow(layout, width: width)]
        rows += bodyRows(model, layout: layout, width: width, height: bodyHeight, now: now)
        rows += panels
        if let alert { rows.append(alert) }
        rows.append(statusRow(model, width: width, now: now))
        return Screen(size: size, rows: rows)
    }

    /// The latest alert, highlighted: ` ALERT 14:03  Ana Souza (tier vip) arrived in Womenswear`.
    static func alertRow(_ alert: Alert, width: Int) -> Screen.Row {
        var row = Screen.Row()
        row.add(" ALERT \(EventLine.clockTime(alert.at).prefix(5))  \(alert.text)", columns: width, .arrival)
        return row
    }

    // MARK: Title

    static func titleRow(_ model: MonitorModel, width: Int, now: Timestamp) -> Screen.Row {
        let storeName = model.snapshot.map { "\($0.name) · store \(model.store)" } ?? "store \(model.store)"
        var left = " BeaconMesh · \(storeName)"
        var counts: String?
        if let snapshot = model.snapshot {
            let guests = snapshot.occupancy.values.reduce(0) { $0 + $1.guests }
            let members = snapshot.members.count
            counts = "\(members) \(members == 1 ? "member" : "members") · \(guests) \(guests == 1 ? "guest" : "guests")   "
        }
        var stale: String?
        if model.isStale {
            stale = " STALE" + (model.lastUpdate.map { " · last update \(EventLine.clockTime($0))" } ?? "") + " "
        }
        var showsClock = true
        // Right-hand side: [STALE · last update …]  [n members · n guests]  clock.
        func rightSide() -> Screen.Row {
            var right = Screen.Row()
            if let stale {
                right.add(stale, .stale)
                right.add(showsClock ? "  " : " ", .title)
            }
            if let counts { right.add(counts, .title) }
            if showsClock { right.add("\(EventLine.clockTime(now)) ", .title) }
            return right
        }
        // When it does not fit, give up in this order: the product name, the counts, the clock, the time of the
        // last update. The STALE marker stays.
        func fits() -> Bool { TerminalWidth.of(left) + 2 + rightSide().width <= width }
        if !fits() { left = " \(storeName)" }
        if !fits() { counts = nil }
        if !fits(), stale != nil { showsClock = false }
        if !fits(), stale != nil { stale = " STALE " }
        let right = rightSide()
        var row = Screen.Row()
        row.add(left, columns: max(0, width - right.width), .title)
        row.spans += right.spans
        return row.fitted(to: width, fill: .title)
    }

    // MARK: Members table

    static func headerRow(_ layout: MemberTableLayout, width: Int) -> Screen.Row {
        var row = Screen.Row([Screen.Span(String(repeating: " ", count: MemberTableLayout.margin), .header)])
        for (index, placement) in layout.columns.enumerated() {
            if index > 0 { row.add(String(repeating: " ", count: MemberTableLayout.gap), .header) }
            row.add(
                placement.column.title(width: placement.width), columns: placement.width, .header,
                alignRight: placement.column.alignsRight)
        }
        return row.fitted(to: width, fill: .header)
    }

    static func bodyRows(
        _ model: MonitorModel, layout: MemberTableLayout, width: Int, height: Int, now: Timestamp
    ) -> [Screen.Row] {
        guard height > 0 else { return [] }
        let members = model.membersByArrival
        if members.isEmpty {
            return emptyStoreRows(model, width: width, height: height)
        }
        var rows: [Screen.Row] = []
        let shown = members.count <= height ? members : Array(members.prefix(height - 1))
        for present in shown {
            let style: Screen.Style =
                model.isHighlighted(present.member.id, at: now)
                ? .arrival : (model.isStale ? .dim : .normal)
            rows.append(memberRow(present, layout: layout, width: width, style: style, now: now))
        }
        if shown.count < members.count {
            rows.append(Screen.Row([Screen.Span(" … and \(members.count - shown.count) more", .dim)]).fitted(to: width))
        }
        while rows.count < height { rows.append(Screen.Row().fitted(to: width)) }
        return rows
    }

    static func memberRow(
        _ present: PresenceSnapshot.PresentMember, layout: MemberTableLayout, width: Int, style: Screen.Style,
        now: Timestamp
    ) -> Screen.Row {
        var row = Screen.Row([Screen.Span(String(repeating: " ", count: MemberTableLayout.margin), style)])
        for (index, placement) in layout.columns.enumerated() {
            if index > 0 { row.add(String(repeating: " ", count: MemberTableLayout.gap), style) }
            row.add(
                cell(placement.column, of: present, now: now), columns: placement.width, style,
                alignRight: placement.column.alignsRight)
        }
        return row.fitted(to: width, fill: style)
    }

    /// The text of one table cell.
    static func cell(_ column: MemberTableLayout.Column, of present: PresenceSnapshot.PresentMember, now: Timestamp) -> String {
        switch column {
        case .name: return present.member.name
        case .drink: return present.member.favoriteDrink ?? "—"
        case .department:
            // Surely in the store, in no department surely: the snapshot says so rather than guess.
            guard let department = present.department else { return "unknown" }
            return present.departmentName ?? "Dept \(department)"
        case .confidence: return present.confidence.map(DecisionEvidence.percent) ?? "—"
        case .proximity: return present.proximity.rawValue
        case .inStore:
            let seconds = max(0, Int((now - present.arrivedAt).wholeMilliseconds / 1000))
            return EventLine.duration(seconds: seconds)
        case .visit: return "\(present.member.visits)"
        }
    }

    /// What the table says when nobody is there, or before the first snapshot.
    static func emptyStoreRows(_ model: MonitorModel, width: Int, height: Int) -> [Screen.Row] {
        let message: (String, String)
        if model.snapshot == nil {
            message = (
                "Waiting for the store's presence from the coordinator…",
                "Customers currently in the store will appear here."
            )
        } else {
            message = ("No one is in the store right now.", "Customers currently in the store will appear here.")
        }
        var rows = Array(repeating: Screen.Row().fitted(to: width), count: height)
        let top = min(max(0, height / 2 - 1), 3)
        rows[top] = centered(message.0, .notice, width: width)
        if top + 1 < height { rows[top + 1] = centered(message.1, .dim, width: width) }
        return rows
    }

    static func centered(_ text: String, _ style: Screen.Style, width: Int) -> Screen.Row {
        let textWidth = min(TerminalWidth.of(text), width)
        let left = (width - textWidth) / 2
        var row = Screen.Row([Screen.Span(String(repeating: " ", count: left))])
        row.add(text, columns: textWidth, style)
        return row.fitted(to: width)
    }

    // MARK: Status line

    static func statusRow(_ model: MonitorModel, width: Int, now: Timestamp) -> Screen.Row {
        var right = Screen.Row()
        if model.showsPresenceChange(at: now) {
            right.add(" Presence change ", .flash)
            right.add("  ")
        }
        if model.droppedMessages > 0 {
            right.add("\(model.droppedMessages) unreadable \(model.droppedMessages == 1 ? "message" : "messages")  ", .dim)
        }
        right.add("q quit ", .dim)

        // The connection, long (naming the broker) when there is room, short otherwise.
        func connection(long: Bool) -> Screen.Row {
            var left = Screen.Row([Screen.Span(" ")])
            switch model.connection {
            case .connecting:
                left.add(long ? "◌ Connecting to \(model.broker)…" : "◌ Connecting…", .dim)
            case .connected:
                left.add("●", .good)
                left.add(long ? " Connected to \(model.broker)" : " Connected")
            case .lost(let since):
                left.add(long ? "✕ Broker lost at \(EventLine.clockTime(since)), reconnecting… " : "✕ Broker lost ", .stale)
            }
            return left
        }
        var left = connection(long: true)
        if left.width + 2 + right.width > width { left = connection(long: false) }
        if left.width + 2 + right.width > width {
            right = Screen.Row(right.spans.suffix(1))  // keep `q quit` before anything else on the right
        }
        var row = left.fitted(to: max(0, width - right.width))
        row.spans += right.spans
        return row.fitted(to: width)
    }

    // MARK: Too small

    static func tooSmall(_ size: TerminalSize) -> Screen {
        var rows = Array(repeating: Screen.Row().fitted(to: size.columns), count: size.rows)
        if size.rows > 0 {
            rows[0] = Screen.Row([Screen.Span("Terminal too small", .notice)]).fitted(to: size.columns)
        }
        return Screen(size: size, rows: rows)
    }
}
