import BeaconMeshTesting
import Foundation
import Testing

/// The real `beacon-monitor` in a real terminal (tmux) against a real broker. The store's state is driven the way a
/// coordinator would drive it: retained presence snapshots and events, hand-written in the contract's JSON and
/// published with `mosquitto_pub`.
@Suite("beacon-monitor full screen", .serialized)
struct MonitorScreenTests {
    @Test("a member who arrives shows highlighted, then moves and leaves; q quits with exit 0 and the terminal restored")
    func arriveMoveLeave() async throws {
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let monitor = try await MonitorUnderTest.launch("arrive", broker: broker)
        defer { Task { await monitor.tmux.kill() } }

        try await monitor.tmux.waitForScreen("the waiting message, connected") {
            $0.contains("Waiting for the store's presence") && $0.contains("Connected to \(broker.url)")
        }
        try await MosquittoClients.publish(port: broker.port, topic: StoreState.eventsTopic, string: "not json", qos: 1)
        try await monitor.tmux.waitForScreen("the unreadable message counted, the screen intact") {
            $0.contains("1 unreadable message") && $0.hasPrefix(" BeaconMesh · store 1")
        }
        try await StoreState.publish(snapshot: [], on: broker)
        try await monitor.tmux.waitForScreen("the empty store") {
            $0.contains("No one is in the store right now.") && $0.contains("San Francisco · store 1")
        }

        let ana = Shopper(id: "ana", name: "Ana Souza", drink: "Flat white", department: 10, arrivedAt: Mesh.nowMilliseconds, visits: 12)
        // The highlight lasts 1.5 s and "Presence change" 1 s: on a loaded machine a look at the screen (a tmux
        // process) can take longer than that, so an arrival that was not seen in time is announced again (each
        // arrival event highlights anew), up to three times.
        var attempts = 0
        while true {
            attempts += 1
            try await StoreState.publish(event: StoreState.arrived(ana), on: broker)
            try await StoreState.publish(snapshot: [ana], on: broker)
            do {
                try await monitor.tmux.waitForScreen(
                    "Ana highlighted white on red, and Presence change", colours: true, timeout: .seconds(4)
                ) {
                    StoreState.isHighlighted("Ana Souza", in: $0) && $0.contains("Presence change")
                }
                break
            } catch {
                if attempts == 3 { throw error }
            }
        }
        let settled = try await monitor.tmux.waitForScreen("Ana's highlight gone", colours: true, timeout: .seconds(5)) {
            ScreenText.line(containing: "Ana Souza", in: $0) != nil && !StoreState.isHighlighted("Ana Souza", in: $0)
        }
        #expect(ScreenText.line(containing: "Ana Souza", in: settled)?.contains("Clothing") == true)

        var moved = ana
        moved.department = 20
        try await StoreState.publish(event: StoreState.moved(moved), on: broker)
        try await StoreState.publish(snapshot: [moved], on: broker)
        try await monitor.tmux.waitForScreen("Ana in Housewares") {
            ScreenText.line(containing: "Ana Souza", in: $0)?.contains("Housewares") == true
        }

        try await StoreState.publish(event: StoreState.left(moved), on: broker)
        try await StoreState.publish(snapshot: [], on: broker)
        try await monitor.tmux.waitForScreen("the empty store again") {
            $0.contains("No one is in the store right now.") && !$0.contains("Ana Souza")
        }

        try await monitor.tmux.sendKeys("q")
        try await monitor.waitForCleanExit()
    }

    @Test("names with accents and CJK line up, the panels fill in, and at 60 columns columns are dropped, never wrapped")
    func layoutAndResize() async throws {
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let now = Mesh.nowMilliseconds
        let shoppers = [
            Shopper(id: "ana", name: "Ana Souza", drink: "Flat white", department: 10, arrivedAt: now - 200_000, visits: 12),
            Shopper(
                id: "jose", name: "José Álvarez", drink: "Cortado", department: 20, proximity: "immediate",
                arrivedAt: now - 60_000, visits: 3),
            Shopper(id: "li", name: "李雷", drink: "茉莉花茶", department: 30, proximity: "far", arrivedAt: now - 30_000, visits: 25),
            Shopper(id: "zoe", name: "Zoë Martin", drink: nil, department: 10, arrivedAt: now - 10_000, visits: 1),
        ]
        try await StoreState.publish(
            snapshot: shoppers, guests: [10: 3, 30: 5],
            nodes: [(10, "a", "online"), (20, "a", "online"), (30, "a", "offline")], on: broker)
        let monitor = try await MonitorUnderTest.launch("layout", broker: broker)
        defer { Task { await monitor.tmux.kill() } }

        try await monitor.tmux.waitForScreen("four members") { $0.contains("4 members · 8 guests") }
        try await StoreState.publish(event: StoreState.promo(shoppers[0], title: "Promoção de blusas!"), on: broker)
        let wide = try await monitor.tmux.waitForScreen("the promo") { $0.contains("Promoção de blusas!") }
        try wide.write(toFile: monitor.directory + "/screen-100x30.txt", atomically: true, encoding: .utf8)

        let rows = wide.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(rows.count == 30)
        #expect(rows[1].contains("PROXIMITY") && rows[1].contains("FAVOURITE DRINK") && rows[1].contains("VISIT"))
        #expect(rows[2].contains("Zoë Martin") && rows[5].contains("Ana Souza"), "newest arrival first:\n\(wide)")
        Self.expectDrinksAligned(in: wide)
        #expect(ScreenText.line(containing: "Promoção de blusas!", in: wide)?.contains("Ana Souza") == true)
        #expect(ScreenText.line(containing: "OFFLINE", in: wide)?.contains("Automotive") == true)
        #expect(ScreenText.line(containing: "OCCUPANCY", in: wide)?.contains("guests") == true)

        try await monitor.tmux.resize(columns: 60, rows: 30)
        let narrow = try await monitor.tmux.waitForScreen("the 60-column layout") {
            !$0.contains("PROXIMITY") && $0.contains(" NAME ") && $0.hasSuffix("q quit")  // a whole frame drawn
        }
        try narrow.write(toFile: monitor.directory + "/screen-60x30.txt", atomically: true, encoding: .utf8)
        let narrowRows = narrow.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(narrowRows.count == 30)
        #expect(narrowRows[0].contains("San Francisco"))
        #expect(narrowRows[1].hasPrefix(" NAME") && narrowRows[1].contains("DRINK") && narrowRows[1].contains("DEPARTMENT"))
        for (name, department) in [("Ana Souza", "Clothing"), ("José Álvarez", "Housewares"), ("李雷", "Automotive")] {
            #expect(ScreenText.line(containing: name, in: narrow)?.contains(department) == true, "\(name) on one line:\n\(narrow)")
        }
        Self.expectDrinksAligned(in: narrow)
        #expect(narrowRows[29].contains("q quit"), "the status line is the last row:\n\(narrow)")

        try await monitor.tmux.sendKeys("q")
        try await monitor.waitForCleanExit()
    }

    @Test(
        "a lost broker leaves the view in place, marked stale with the last update's time; it recovers on reconnect; Ctrl-C quits cleanly")
    func staleAndRecover() async throws {
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let ana = Shopper(
            id: "ana", name: "Ana Souza", drink: "Flat white", department: 10,
            arrivedAt: Mesh.nowMilliseconds - 60_000, visits: 12)
        try await StoreState.publish(snapshot: [ana], on: broker)
        let monitor = try await MonitorUnderTest.launch("stale", broker: broker)
        defer { Task { await monitor.tmux.kill() } }
        try await monitor.tmux.waitForScreen("Ana") { $0.contains("Ana Souza") && $0.contains("Connected to") }

        await broker.stop()
        let stale = try await monitor.tmux.waitForScreen("the stale marker") {
            $0.contains("STALE · last update") && $0.contains("Broker lost")
        }
        #expect(stale.contains("Ana Souza"), "the view stays:\n\(stale)")

        try await broker.start()
        try await monitor.tmux.waitForScreen("the connection back", timeout: .seconds(20)) {
            $0.contains("Connected to") && !$0.contains("STALE")
        }
        let zoe = Shopper(id: "zoe", name: "Zoë Martin", drink: nil, department: 20, arrivedAt: Mesh.nowMilliseconds, visits: 1)
        try await StoreState.publish(snapshot: [ana, zoe], on: broker)
        try await monitor.tmux.waitForScreen("updates flowing again") { $0.contains("Zoë Martin") }

        try await monitor.tmux.sendKeys("C-c")
        try await monitor.waitForCleanExit()
    }

    @Test("SIGTERM ends the view with exit 0 and the terminal restored")
    func sigterm() async throws {
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let monitor = try await MonitorUnderTest.launch("sigterm", broker: broker)
        defer { Task { await monitor.tmux.kill() } }
        try await monitor.tmux.waitForScreen("the view") { $0.contains("Connected to") }
        let pid = try #require(
            pid_t(
                try String(contentsOfFile: monitor.pidFile, encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(kill(pid, SIGTERM) == 0)
        try await monitor.waitForCleanExit()
    }

    @Test("when standard output is not a terminal the monitor prints one line per event")
    func plainWhenPiped() async throws {
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let monitor = try Mesh.program("beacon-monitor", ["--store", "1", "--broker", broker.url])
        let ana = Shopper(id: "ana", name: "Ana Souza", drink: "Flat white", department: 10, arrivedAt: Mesh.nowMilliseconds, visits: 12)
        // Events are not retained: publish until the monitor, subscribing meanwhile, prints one.
        var line: String?
        for attempt in 0..<20 where line == nil {
            try await StoreState.publish(event: StoreState.arrived(ana, id: "a\(attempt)"), on: broker)
            line = await monitor.waitForLine(in: .stdout, timeout: .milliseconds(500)) { $0.contains("arrived") }
        }
        #expect(line?.contains("Ana Souza") == true, "\(monitor.transcript)")
        #expect(await monitor.stop(with: SIGTERM) == .exited(0))
    }

    /// The favourite drinks (the column after the name) start at the same terminal column on every member's row.
    static func expectDrinksAligned(in screen: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let columns = [("Ana Souza", "Flat white"), ("José Álvarez", "Cortado"), ("李雷", "茉莉花茶"), ("Zoë Martin", "—")]
            .map { name, drink in ScreenText.line(containing: name, in: screen).flatMap { ScreenText.column(of: drink, in: $0) } }
        #expect(
            columns.allSatisfy { $0 != nil } && Set(columns).count == 1, "drink columns \(columns):\n\(screen)",
            sourceLocation: sourceLocation)
    }
}

/// `beacon-monitor --store 1` running in its own tmux session (100×30, `TERM=xterm-256color`, UTF-8), followed by a
/// shell that reports how it exited and whether the terminal was left in canonical mode with echo.
struct MonitorUnderTest {
    let tmux: TmuxSession
    let directory: String
    /// Holds the monitor's process id (the shell that writes it then `exec`s the monitor).
    let pidFile: String

    static func launch(
        _ name: String, broker: MosquittoBroker, columns: Int = 100, rows: Int = 30, store: Int = 1,
        arguments: [String] = []
    ) async throws -> MonitorUnderTest {
        let directory = try Mesh.temporaryDirectory()
        let pidFile = directory + "/monitor.pid"
        let q = ScreenText.shellQuoted
        let monitor =
            "exec env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 \(q(try BuiltProducts.path(of: "beacon-monitor"))) "
            + "--store \(store) --broker \(q(broker.url))" + arguments.map { " " + q($0) }.joined()
        let afterwards =
            #"echo "[exit $?]"; echo "terminal: $(stty -a | tr ' ;' '\n\n' | grep -x -- '-\?icanon\|-\?echo' | tr '\n' ' ')"; exec sleep 3600"#
        let command = "sh -c \(q("echo $$ > \(q(pidFile)); \(monitor)")); \(afterwards)"
        let tmux = try await TmuxSession(socket: "beaconmesh-monitor-\(name)", columns: columns, rows: rows, command: command)
        return MonitorUnderTest(tmux: tmux, directory: directory, pidFile: pidFile)
    }

    /// Waits until the monitor has exited 0 and the shell found the terminal back in canonical mode with echo.
    func waitForCleanExit() async throws {
        let screen = try await tmux.waitForScreen("the monitor's exit") { $0.contains("terminal: ") }
        #expect(screen.contains("[exit 0]"), "\(screen)")
        #expect(ScreenText.line(containing: "terminal: ", in: screen)?.contains("terminal: icanon echo") == true, "\(screen)")
    }
}

/// A member in the store, as the test's hand-written snapshots and events describe them.
struct Shopper {
    var id: String
    var name: String
    var drink: String?
    var department: Int
    var proximity = "near"
    var arrivedAt: Int64
    var visits: Int

    var departmentName: String { StoreState.departments[department] ?? "Dept \(department)" }

    var memberJSON: String {
        #"{"id":"\#(id)","name":"\#(name)","favoriteDrink":\#(drink.map { "\"\($0)\"" } ?? "null"),"visits":\#(visits),"lastVisitAt":null}"#
    }
}

/// Store 1 ("San Francisco") as a coordinator would publish it: contract JSON on the contract's topics.
enum StoreState {
    static let departments = [10: "Clothing", 20: "Housewares", 30: "Automotive"]
    static let presenceTopic = "beaconmesh/v1/stores/1/presence"
    static let eventsTopic = "beaconmesh/v1/stores/1/events"

    static func publish(
        snapshot shoppers: [Shopper], guests: [Int: Int] = [:], nodes: [(Int, String, String)] = [(10, "a", "online")],
        on broker: MosquittoBroker
    ) async throws {
        let now = Mesh.nowMilliseconds
        let members = shoppers.map {
            #"{"member":\#($0.memberJSON),"department":\#($0.department),"departmentName":"\#($0.departmentName)","proximity":"\#($0.proximity)","arrivedAt":\#($0.arrivedAt),"inDepartmentSince":\#($0.arrivedAt),"lastSeen":\#(now)}"#
        }
        var counts: [Int: (members: Int, guests: Int)] = [:]
        for shopper in shoppers { counts[shopper.department, default: (0, 0)].members += 1 }
        for (department, number) in guests { counts[department, default: (0, 0)].guests += number }
        let occupancy = counts.sorted { $0.key < $1.key }.map {
            #""\#($0.key)":{"members":\#($0.value.members),"guests":\#($0.value.guests)}"#
        }
        let nodeList = nodes.map { #"{"department":\#($0.0),"node":"\#($0.1)","state":"\#($0.2)"}"# }
        let json =
            #"{"v":1,"store":1,"name":"San Francisco","updatedAt":\#(now),"members":[\#(members.joined(separator: ","))],"#
            + #""occupancy":{\#(occupancy.joined(separator: ","))},"nodes":[\#(nodeList.joined(separator: ","))]}"#
        try await MosquittoClients.publish(port: broker.port, topic: presenceTopic, string: json, qos: 1, retain: true)
    }

    static func publish(event json: String, on broker: MosquittoBroker) async throws {
        try await MosquittoClients.publish(port: broker.port, topic: eventsTopic, string: json, qos: 1)
    }

    static func envelope(_ type: String, id: String) -> String {
        #"{"v":1,"id":"\#(id)","type":"\#(type)","store":1,"at":\#(Mesh.nowMilliseconds)"#
    }

    static func arrived(_ shopper: Shopper, id: String = UUID().uuidString) -> String {
        envelope("arrived", id: id) + #","member":\#(shopper.memberJSON),"department":\#(shopper.department),"#
            + #""departmentName":"\#(shopper.departmentName)","visit":{"number":\#(shopper.visits),"previousAt":null},"#
            + #""greeting":"Welcome back, \#(shopper.name)!"}"#
    }

    static func moved(_ shopper: Shopper, from: Int = 10) -> String {
        envelope("moved", id: UUID().uuidString) + #","member":\#(shopper.memberJSON),"from":\#(from),"to":\#(shopper.department),"#
            + #""fromName":"\#(departments[from] ?? "")","toName":"\#(shopper.departmentName)"}"#
    }

    static func left(_ shopper: Shopper) -> String {
        envelope("left", id: UUID().uuidString)
            + #","member":\#(shopper.memberJSON),"department":\#(shopper.department),"dwellSeconds":42}"#
    }

    static func promo(_ shopper: Shopper, title: String) -> String {
        envelope("promo", id: UUID().uuidString) + #","member":\#(shopper.memberJSON),"department":\#(shopper.department),"#
            + #""departmentName":"\#(shopper.departmentName)","promo":{"id":"shirts","title":"\#(title)","message":"Ganhe R$10!"}}"#
    }

    /// Whether the row naming `name` is drawn with a red background (SGR 41) in a `capture-pane -e` screen.
    static func isHighlighted(_ name: String, in screen: String) -> Bool {
        guard let line = ScreenText.line(containing: name, in: screen) else { return false }
        return line.contains("\u{1B}[41m") || line.contains(";41m")
    }
}
