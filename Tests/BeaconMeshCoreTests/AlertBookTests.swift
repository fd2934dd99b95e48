import Testing

@testable import BeaconMeshCore

/// The alert rules decided with time passed in: each kind fires once when it should and not otherwise, caps and
/// quiet hours (across midnight) included.
@Suite("Alert rules")
struct AlertBookTests {
    static let ana = MemberProfile(id: "ana", name: "Ana Souza", customFields: ["tier": "vip"])
    static let ben = MemberProfile(id: "ben", name: "Ben Okafor", customFields: ["tier": "silver"])
    static let start = Timestamp(milliseconds: 1_800_000_000_000)
    static let noon = 12 * 60

    static func at(_ seconds: Int) -> Timestamp { start + .seconds(seconds) }

    static func vip(department: UInt16? = nil, cap: AlertRule.Cap = .oncePerVisit, quiet: String? = nil) -> AlertBook {
        AlertBook(rules: [
            AlertRule(
                id: "vip-arrived", stores: .one(1), when: .memberArrived(fields: ["tier": "vip"], department: department), cap: cap,
                quiet: quiet.flatMap(PromoWindow.Hours.init))
        ])
    }

    @Test("a VIP arriving fires once per visit, with a line for a person; another member or another store does not")
    func vipArrives() {
        var book = Self.vip()
        let first = book.arrived(Self.ana, store: 1, department: 10, departmentName: "Womenswear", at: Self.at(0), localMinute: Self.noon)
        #expect(first.map(\.text) == ["Ana Souza (tier vip) arrived in Womenswear"])
        #expect(first.first?.kind == .memberArrived && first.first?.rule == "vip-arrived" && first.first?.member == Self.ana)
        #expect(book.moved(Self.ana, store: 1, to: 20, departmentName: "Shoes", at: Self.at(60), localMinute: Self.noon).isEmpty)
        #expect(
            book.arrived(Self.ben, store: 1, department: 10, departmentName: "Womenswear", at: Self.at(70), localMinute: Self.noon).isEmpty)
        #expect(
            book.arrived(Self.ana, store: 2, department: 10, departmentName: "Womenswear", at: Self.at(80), localMinute: Self.noon).isEmpty)
        // Her next visit fires again.
        book.left(member: "ana", store: 1)
        #expect(
            book.arrived(Self.ana, store: 1, department: 10, departmentName: "Womenswear", at: Self.at(90), localMinute: Self.noon).count
                == 1)
    }

    @Test("a rule about a department fires when she walks into it, not when she arrives elsewhere")
    func vipInDepartment() {
        var book = Self.vip(department: 20)
        #expect(
            book.arrived(Self.ana, store: 1, department: 10, departmentName: "Womenswear", at: Self.at(0), localMinute: Self.noon).isEmpty)
        let moved = book.moved(Self.ana, store: 1, to: 20, departmentName: "Shoes", at: Self.at(30), localMinute: Self.noon)
        #expect(moved.map(\.text) == ["Ana Souza (tier vip) arrived in Shoes"] && moved.first?.department == 20)
        #expect(book.moved(Self.ana, store: 1, to: 10, departmentName: "Womenswear", at: Self.at(40), localMinute: Self.noon).isEmpty)
        #expect(
            book.moved(Self.ana, store: 1, to: 20, departmentName: "Shoes", at: Self.at(50), localMinute: Self.noon).isEmpty,
            "once per visit")
    }

    @Test("a cap of one per 30 minutes holds across visits, and lets the next one through after")
    func capPerPeriod() {
        var book = Self.vip(cap: .oncePer(.seconds(1800)))
        #expect(book.arrived(Self.ana, store: 1, department: 10, departmentName: "W", at: Self.at(0), localMinute: Self.noon).count == 1)
        book.left(member: "ana", store: 1)
        #expect(book.arrived(Self.ana, store: 1, department: 10, departmentName: "W", at: Self.at(600), localMinute: Self.noon).isEmpty)
        book.left(member: "ana", store: 1)
        #expect(book.arrived(Self.ana, store: 1, department: 10, departmentName: "W", at: Self.at(1800), localMinute: Self.noon).count == 1)
    }

    @Test(
        "quiet hours across midnight: nothing inside them, and nothing sent later; the edges are exact",
        arguments: [
            (23 * 60 + 30, false), (2 * 60, false), (22 * 60, false), (6 * 60 + 59, false), (7 * 60, true), (21 * 60 + 59, true),
        ])
    func quietHours(localMinute: Int, sent: Bool) {
        var book = Self.vip(quiet: "22:00-07:00")
        let alerts = book.arrived(Self.ana, store: 1, department: 10, departmentName: "W", at: Self.at(0), localMinute: localMinute)
        #expect(alerts.isEmpty != sent)
        #expect(book.tick(at: Self.at(3600), localMinute: { _ in Self.noon }).isEmpty, "not sent later")
    }

    @Test("a stay in the fitting rooms past 10 minutes fires once for that stay; a new visit's stay fires again")
    func dwell() {
        var book = AlertBook(rules: [AlertRule(id: "long-try-on", stores: .all, when: .dwell(department: 30, over: .seconds(600)))])
        _ = book.arrived(Self.ben, store: 4, department: 10, departmentName: "Menswear", at: Self.at(0), localMinute: Self.noon)
        _ = book.moved(Self.ben, store: 4, to: 30, departmentName: "Fitting rooms", at: Self.at(100), localMinute: Self.noon)
        #expect(book.tick(at: Self.at(699), localMinute: { _ in Self.noon }).isEmpty)
        let due = book.tick(at: Self.at(700), localMinute: { _ in Self.noon })
        #expect(
            due.map(\.text) == ["Ben Okafor has been in Fitting rooms for 10 min"] && due.first?.store == 4 && due.first?.kind == .dwell)
        #expect(book.tick(at: Self.at(760), localMinute: { _ in Self.noon }).isEmpty)
        // Out and back in the same visit: a new stay, but once per visit.
        _ = book.moved(Self.ben, store: 4, to: 10, departmentName: "Menswear", at: Self.at(800), localMinute: Self.noon)
        _ = book.moved(Self.ben, store: 4, to: 30, departmentName: "Fitting rooms", at: Self.at(810), localMinute: Self.noon)
        #expect(book.tick(at: Self.at(1500), localMinute: { _ in Self.noon }).isEmpty)
        book.left(member: "ben", store: 4)
        _ = book.arrived(Self.ben, store: 4, department: 30, departmentName: "Fitting rooms", at: Self.at(2000), localMinute: Self.noon)
        #expect(book.tick(at: Self.at(2600), localMinute: { _ in Self.noon }).count == 1)
    }

    @Test("a node offline past 2 minutes fires once per spell offline; back online before, nothing")
    func nodeOffline() throws {
        var book = AlertBook(rules: [AlertRule(id: "node-down", stores: .one(12), when: .nodeOffline(over: .seconds(120)))])
        let node = try #require(NodeAddress(store: 12, department: 10, node: "a"))
        let elsewhere = try #require(NodeAddress(store: 7, department: 10, node: "a"))
        book.node(node, online: false, departmentName: "Clothing", at: Self.at(0))
        book.node(elsewhere, online: false, departmentName: "Clothing", at: Self.at(0))
        #expect(book.tick(at: Self.at(119), localMinute: { _ in Self.noon }).isEmpty)
        let due = book.tick(at: Self.at(120), localMinute: { _ in Self.noon })
        #expect(due.map(\.text) == ["Node a of Clothing has been offline for 2 min"] && due.first?.node == "a" && due.first?.store == 12)
        #expect(book.tick(at: Self.at(300), localMinute: { _ in Self.noon }).isEmpty)
        book.node(node, online: true, departmentName: "Clothing", at: Self.at(400))
        book.node(node, online: false, departmentName: "Clothing", at: Self.at(500))
        book.node(node, online: true, departmentName: "Clothing", at: Self.at(560))
        #expect(book.tick(at: Self.at(700), localMinute: { _ in Self.noon }).isEmpty, "back within the 2 minutes")
        book.node(node, online: false, departmentName: "Clothing", at: Self.at(800))
        #expect(book.tick(at: Self.at(920), localMinute: { _ in Self.noon }).count == 1, "a new spell")
    }

    @Test("a store undecided past 30 s fires once; decided again and undecided again, once more")
    func storeUndecided() {
        var book = AlertBook(rules: [AlertRule(id: "nobody-decides", stores: .all, when: .storeUndecided(over: .seconds(30)))])
        book.store(7, decided: true, at: Self.at(0))
        #expect(book.tick(at: Self.at(100), localMinute: { _ in Self.noon }).isEmpty)
        book.store(7, decided: false, at: Self.at(100))
        book.store(7, decided: false, at: Self.at(120))  // still the same spell
        #expect(book.tick(at: Self.at(129), localMinute: { _ in Self.noon }).isEmpty)
        let due = book.tick(at: Self.at(130), localMinute: { _ in Self.noon })
        #expect(due.map(\.text) == ["Nobody has decided store 7 for 30 s"])
        #expect(due.first?.id == "nobody-decides/store-7/\(Self.at(100).milliseconds)", "the spell's id, the same for every teller")
        #expect(book.tick(at: Self.at(200), localMinute: { _ in Self.noon }).isEmpty)
        book.store(7, decided: true, at: Self.at(210))
        book.store(7, decided: false, at: Self.at(220))
        #expect(book.tick(at: Self.at(250), localMinute: { _ in Self.noon }).count == 1)
    }

    @Test("alerts due in one tick come out by the spell that began first, then member id, node or store: the same order every run")
    func oneTickInAStableOrder() throws {
        var book = AlertBook(rules: [
            AlertRule(id: "long-try-on", stores: .all, when: .dwell(department: 30, over: .seconds(60))),
            AlertRule(id: "node-down", stores: .all, when: .nodeOffline(over: .seconds(60))),
            AlertRule(id: "nobody-decides", stores: .all, when: .storeUndecided(over: .seconds(60))),
        ])
        // Twelve members, entered in an order that is neither their ids' nor their stays'.
        let members = (0..<12).map { MemberProfile(id: "m\(($0 * 7) % 12)", name: "Member \(($0 * 7) % 12)") }
        for (index, member) in members.enumerated() {
            _ = book.arrived(
                member, store: 4, department: 30, departmentName: "Fitting rooms", at: Self.at(index % 3), localMinute: Self.noon)
        }
        for department: UInt16 in [50, 10, 40, 20] {
            book.node(
                try #require(NodeAddress(store: 4, department: department, node: "a")), online: false, departmentName: "D", at: Self.at(0))
        }
        for store: UInt16 in [9, 3, 6] { book.store(store, decided: false, at: Self.at(0)) }
        let due = book.tick(at: Self.at(100), localMinute: { _ in Self.noon })
        let stays = due.filter { $0.kind == .dwell }.compactMap { $0.member?.id }
        let expected = members.enumerated().sorted { ($0.offset % 3, $0.element.id) < ($1.offset % 3, $1.element.id) }.map(\.element.id)
        #expect(stays == expected)
        #expect(due.filter { $0.kind == .nodeOffline }.compactMap(\.department) == [10, 20, 40, 50])
        #expect(due.filter { $0.kind == .storeUndecided }.map(\.store) == [3, 6, 9])
        #expect(
            due.map(\.kind) == Array(repeating: .dwell, count: 12) + Array(repeating: .nodeOffline, count: 4)
                + Array(repeating: .storeUndecided, count: 3))
    }

    @Test("the book looks at its spells once a second, whatever the tick rate")
    func scansOncePerSecond() {
        var book = AlertBook(rules: [AlertRule(id: "nobody-decides", stores: .all, when: .storeUndecided(over: .seconds(1)))])
        book.store(7, decided: false, at: Self.at(0))
        #expect(book.tick(at: Self.at(0), localMinute: { _ in Self.noon }).isEmpty)
        // Due at 1 s, but the next look is 1 s after the last one.
        #expect(book.tick(at: Self.at(0) + .milliseconds(999), localMinute: { _ in Self.noon }).isEmpty)
        #expect(book.tick(at: Self.at(1), localMinute: { _ in Self.noon }).count == 1)
    }
}
