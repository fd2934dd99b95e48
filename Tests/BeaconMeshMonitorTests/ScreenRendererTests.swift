import BeaconMeshCore
import Testing

@testable import BeaconMeshMonitor

@Suite("Screen renderer")
struct ScreenRendererTests {
    typealias F = StoreFixtures
    static let wide = TerminalSize(columns: 100, rows: 30)
    static let narrow = TerminalSize(columns: 60, rows: 30)

    func render(_ model: MonitorModel, _ size: TerminalSize = wide, seconds: Double = 130) -> Screen {
        ScreenRenderer.render(model, size: size, now: F.at(seconds: seconds))
    }

    /// The row whose text contains `text`, or a failed expectation.
    func row(containing text: String, in screen: Screen, sourceLocation: SourceLocation = #_sourceLocation) -> Screen.Row? {
        let found = screen.rows.first { $0.text.contains(text) }
        #expect(found != nil, "no row contains \(text):\n\(screen.text)", sourceLocation: sourceLocation)
        return found
    }

    /// The terminal column at which `text` starts in `row`.
    func column(of text: String, in row: Screen.Row) -> Int? {
        guard let range = row.text.firstRange(of: text) else { return nil }
        return TerminalWidth.of(String(row.text[..<range.lowerBound]))
    }

    @Test(
        "every frame has exactly the terminal's rows, each exactly its width, at any size",
        arguments: [(100, 30), (60, 30), (80, 24), (40, 12), (30, 8), (24, 6), (10, 3), (200, 60)])
    func exactSize(columns: Int, rows: Int) {
        var model = F.threeMembers()
        model.apply(event: F.promo(F.li, title: "李雷的促销活动标题很长很长很长很长", id: "p", at: F.at(seconds: 125)), at: F.at(seconds: 125))
        let screen = render(model, TerminalSize(columns: columns, rows: rows))
        #expect(screen.rows.count == rows)
        for line in screen.lines {
            #expect(TerminalWidth.of(line) == columns, "\(line)")
        }
    }

    @Test("the title names the store and counts members and guests; headers name every column at 100 columns")
    func titleAndHeaders() {
        let screen = render(F.threeMembers())
        #expect(screen.lines[0].hasPrefix(" BeaconMesh · San Francisco · store 1"))
        #expect(screen.lines[0].contains("3 members · 3 guests"))
        #expect(screen.lines[0].contains(EventLine.clockTime(F.at(seconds: 130))))
        #expect(screen.rows[0].style(atColumn: 0) == .title)
        for header in ["NAME", "FAVOURITE DRINK", "DEPARTMENT", "PROXIMITY", "IN STORE", "VISIT"] {
            #expect(screen.lines[1].contains(header), "\(header)")
        }
    }

    @Test("members are listed newest arrival first, with drink, department, proximity, time in store and visit")
    func memberRows() {
        let screen = render(F.threeMembers())
        #expect(screen.lines[2].contains("李雷"))
        #expect(screen.lines[3].contains("José Álvarez"))
        #expect(screen.lines[4].contains("Ana Souza"))
        let ana = screen.lines[4]
        for cell in ["Flat white", "Clothing", "near", "2m 10s", "12"] {
            #expect(ana.contains(cell), "\(cell) in \(ana)")
        }
    }

    @Test("each member's row shows how sure the coordinator is; a member whose department is unknown reads unknown")
    func confidenceAndUnknownDepartment() {
        var model = MonitorModel(store: 1, broker: "b")
        model.apply(
            snapshot: F.snapshot(
                [
                    F.present(F.ana, in: 10, arrivedAt: F.at(seconds: 0), confidence: 0.92),
                    F.present(F.zoe, in: nil, arrivedAt: F.at(seconds: 5), confidence: 0.4),
                    F.present(F.jose, in: 20, arrivedAt: F.at(seconds: 6)),
                ], at: F.at(seconds: 10)), at: F.at(seconds: 10))
        let screen = render(model)
        #expect(screen.lines[1].contains("SURE"))
        let ana = row(containing: "Ana Souza", in: screen)
        #expect(ana?.text.contains("Clothing") == true && ana?.text.contains("92%") == true, "\(ana?.text ?? "")")
        let zoe = row(containing: "Zoë Martin", in: screen)
        #expect(zoe?.text.contains("unknown") == true && zoe?.text.contains("40%") == true, "\(zoe?.text ?? "")")
        let jose = row(containing: "José Álvarez", in: screen)
        #expect(jose?.text.contains("%") == false, "a coordinator that does not say shows no percentage")
    }

    @Test("a member without a favourite drink shows a dash")
    func noDrink() {
        var model = MonitorModel(store: 1, broker: "b")
        model.apply(snapshot: F.snapshot([F.present(F.zoe, arrivedAt: F.at(seconds: 0))], at: F.at(seconds: 10)), at: F.at(seconds: 10))
        let zoe = row(containing: "Zoë Martin", in: render(model))
        #expect(zoe?.text.contains("—") == true)
    }

    @Test("CJK and accented names line up: the next column starts at the same terminal column", arguments: [wide, narrow])
    func cjkAlignment(size: TerminalSize) {
        let screen = render(F.threeMembers(), size)
        guard let li = row(containing: "李雷", in: screen), let jose = row(containing: "José", in: screen),
            let ana = row(containing: "Ana Souza", in: screen)
        else { return }
        let drinks = [column(of: "茉莉花茶", in: li), column(of: "Cortado", in: jose), column(of: "Flat white", in: ana)]
        #expect(Set(drinks).count == 1, "\(drinks)\n\(screen.text)")
        #expect(column(of: size.columns >= 100 ? "FAVOURITE DRINK" : "DRINK", in: screen.rows[1]) == drinks[0])
    }

    @Test("at 60 columns proximity is dropped and the rest still fit; at 40 only name, department and time in store")
    func narrowDropsColumns() {
        let at60 = render(F.threeMembers(), Self.narrow)
        #expect(!at60.lines[1].contains("PROXIMITY"))
        for header in ["NAME", "DRINK", "DEPARTMENT", "IN STORE", "VISIT"] {
            #expect(at60.lines[1].contains(header), "\(header)\n\(at60.text)")
        }
        #expect(MemberTableLayout(width: 40).shownColumns == [.name, .department, .inStore])
        #expect(MemberTableLayout(width: 100).shownColumns == MemberTableLayout.Column.allCases)
    }

    @Test("an empty store says so: customers currently in the store will appear here")
    func emptyStore() {
        var model = MonitorModel(store: 1, broker: "b")
        model.apply(snapshot: F.snapshot([], at: F.at(seconds: 0)), at: F.at(seconds: 0))
        let screen = render(model)
        #expect(screen.text.contains("No one is in the store right now."))
        #expect(screen.text.contains("Customers currently in the store will appear here."))
        #expect(screen.lines[0].contains("0 members · 0 guests"))
    }

    @Test("before the first snapshot the view says it is waiting for the coordinator")
    func waiting() {
        let screen = render(MonitorModel(store: 7, broker: "b"))
        #expect(screen.lines[0].hasPrefix(" BeaconMesh · store 7"))
        #expect(screen.text.contains("Waiting for the store's presence from the coordinator…"))
    }

    @Test("a lost broker marks the view stale with the time of the last update, and dims the table")
    func staleMarker() {
        var model = F.threeMembers()
        model.connection(changed: false, at: F.at(seconds: 140))
        for size in [Self.wide, Self.narrow] {
            let screen = render(model, size, seconds: 150)
            #expect(screen.lines[0].contains("STALE · last update \(EventLine.clockTime(F.at(seconds: 130)))"), "\(screen.text)")
            #expect(screen.lines.last!.contains("Broker lost at \(EventLine.clockTime(F.at(seconds: 140))), reconnecting"))
            #expect(row(containing: "Ana Souza", in: screen)?.style(atColumn: 1) == .dim)
        }
        model.connection(changed: true, at: F.at(seconds: 160))
        let recovered = render(model, seconds: 160)
        #expect(!recovered.lines[0].contains("STALE"))
        #expect(recovered.lines.last!.contains("Connected to"))
    }

    @Test("a new arrival's row is highlighted across the whole width, and only for about 1.5 s")
    func highlightedRow() {
        var model = F.threeMembers()
        let arrival = F.at(seconds: 200)
        model.apply(snapshot: F.snapshot([F.present(F.zoe, arrivedAt: arrival)] + model.snapshot!.members, at: arrival), at: arrival)
        let during = render(model, seconds: 200.5)
        #expect(during.lines[2].contains("Zoë Martin"), "newest first")
        #expect((0..<100).allSatisfy { during.rows[2].style(atColumn: $0) == .arrival })
        #expect(during.rows[3].style(atColumn: 1) == .normal)
        #expect(render(model, seconds: 201.6).rows[2].style(atColumn: 1) == .normal)
    }

    @Test("the status line shows the connection and, for about a second after a change, Presence change")
    func statusLine() {
        var model = F.threeMembers()
        #expect(render(model).lines.last!.contains("Connected to mqtt://127.0.0.1:1883"))
        #expect(!render(model).lines.last!.contains("Presence change"))
        model.apply(event: F.arrived(F.zoe, id: "a", at: F.at(seconds: 140)), at: F.at(seconds: 140))
        #expect(render(model, seconds: 140.5).lines.last!.contains("Presence change"))
        #expect(render(model, Self.narrow, seconds: 140.5).lines.last!.contains("Presence change"))
        #expect(!render(model, seconds: 141.2).lines.last!.contains("Presence change"))
        #expect(render(model).lines.last!.hasSuffix("q quit "))
    }

    @Test("the panels list recent promos, each node online or offline, and occupancy per department")
    func panels() {
        var model = F.threeMembers()
        model.apply(event: F.promo(F.ana, title: "Promoção de blusas!", id: "p", at: F.at(seconds: 125)), at: F.at(seconds: 125))
        for size in [Self.wide, Self.narrow] {
            let screen = render(model, size)
            let promo = row(containing: "Promoção de blusas!", in: screen)
            #expect(promo?.text.contains("Ana Souza") == true && promo?.text.contains("Clothing") == true)
            #expect(row(containing: "OFFLINE", in: screen)?.text.contains("Automotive") == true, "offline nodes first")
            #expect(row(containing: "online", in: screen)?.text.contains("Clothing") == true)
            let occupancy = screen.lines.first { $0.contains("OCCUPANCY") }
            #expect(occupancy?.contains("members") == true && occupancy?.contains("guests") == true)
        }
    }

    @Test("unreadable messages are counted on the status line")
    func unreadable() {
        var model = F.threeMembers()
        model.noteDroppedMessage()
        model.noteDroppedMessage()
        #expect(render(model).lines.last!.contains("2 unreadable messages"))
    }

    @Test("more members than rows end with how many more there are")
    func overflow() {
        var model = MonitorModel(store: 1, broker: "b")
        let members = (0..<40).map { index in
            F.present(MemberProfile(id: "m\(index)", name: "Member \(index)"), arrivedAt: F.at(seconds: Double(index)))
        }
        model.apply(snapshot: F.snapshot(members, at: F.at(seconds: 100)), at: F.at(seconds: 100))
        let screen = render(model)
        #expect(screen.lines[2].contains("Member 39"))
        #expect(screen.text.contains("… and 21 more"), "\(screen.text)")
    }

    @Test("a terminal too small for the view says so instead of drawing garbage")
    func tooSmall() {
        let screen = render(F.threeMembers(), TerminalSize(columns: 20, rows: 4))
        #expect(screen.lines[0].hasPrefix("Terminal too small"))
    }
}

@Suite("Screen renderer: alerts")
struct ScreenRendererAlertTests {
    typealias F = StoreFixtures

    @Test("the store's latest alert is one highlighted line above the status line, the frame still the terminal's size")
    func alertLine() {
        var model = F.threeMembers()
        let alert = Alert(
            rule: "vip-arrived", kind: .memberArrived, store: 1, at: F.at(seconds: 120), department: 10, departmentName: "Clothing",
            member: F.ana, text: "Ana Souza (tier vip) arrived in Clothing")
        for size in [TerminalSize(columns: 100, rows: 30), TerminalSize(columns: 40, rows: 12), TerminalSize(columns: 24, rows: 6)] {
            #expect(!ScreenRenderer.render(model, size: size, now: F.at(seconds: 130)).text.contains("ALERT"))
        }
        model.apply(alert: alert, at: F.at(seconds: 121))
        for size in [TerminalSize(columns: 100, rows: 30), TerminalSize(columns: 40, rows: 12), TerminalSize(columns: 24, rows: 6)] {
            let screen = ScreenRenderer.render(model, size: size, now: F.at(seconds: 130))
            #expect(screen.rows.count == size.rows && screen.lines.allSatisfy { TerminalWidth.of($0) == size.columns })
            let index = screen.lines.firstIndex { $0.hasPrefix(" ALERT \(EventLine.clockTime(alert.at).prefix(5))") }
            #expect(index == size.rows - 2, "\(screen.text)")
            #expect(index.map { screen.rows[$0].style(atColumn: 1) } == .arrival)
        }
        let wide = ScreenRenderer.render(model, size: TerminalSize(columns: 100, rows: 30), now: F.at(seconds: 130))
        #expect(wide.lines[28].contains("Ana Souza (tier vip) arrived in Clothing"))
    }
}
