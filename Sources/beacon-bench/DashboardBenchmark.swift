import ArgumentParser
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshTesting
import BeaconMeshWire
import Dispatch
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The dashboard with a chain's worth of presence, everything real: mosquitto on loopback, the coordinator (100
/// stores × 10 departments, 5,000 members heard every 4 s, some moving department every second) and
/// `beacon-dashboard` with live pages connected (plain server-sent-event readers and one headless Chromium).
/// Prints (1) the dashboard's CPU and memory while the chain is present and churning, and (2) the time from a
/// newcomer's first sighting to their row appearing in Chromium, split at the coordinator's `arrived` event.
struct DashboardBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract: "Dashboard with 100 stores and 5,000 members present: CPU, memory, and first sighting → row in Chromium.",
        discussion: """
            Needs mosquitto, chromium and chromium-driver (deploy/install-deps.sh), ImageMagick for the members' photos, \
            and beacon-coordinator and beacon-dashboard built next to beacon-bench.
            """)

    @Option(help: "Stores in the chain (10 departments each).")
    var stores: Int = 100

    @Option(help: "Members present per store.")
    var membersPerStore: Int = 50

    @Option(help: "Seconds the dashboard's CPU is measured over, once everybody is present.")
    var seconds: Int = 30

    @Option(help: "Newcomers timed from first sighting to their row in Chromium (spread over the measured seconds).")
    var arrivals: Int = 10

    @Option(help: "Members who change department each second, chain-wide (presence changes: snapshots and events).")
    var movesPerSecond: Int = 20

    @Option(help: "Store pages followed by plain server-sent-event readers (stores 1…N), besides one overview reader and Chromium.")
    var pages: Int = 10

    @Flag(help: "Members without photos (the snapshots are then about 15 times smaller).")
    var noPhotos = false

    func run() throws {
        let benchmark = self
        try BenchRun.inWorkFolder { work in try await benchmark.measure(in: work) }
    }

    private func measure(in work: String) async throws {
        let broker = try await BenchBroker.start(in: work, settings: BenchBroker.unlimited)
        defer { broker.process.stop() }
        let brokerPort = broker.port

        // Members m1… (store s has m((s-1)·perStore+1)…), newcomers n0… for the timed arrivals, all with one photo
        // (a 128 × 128 JPEG of noise, the size of the coordinator's thumbnails) unless --no-photos.
        let photo = noPhotos ? "" : try Self.makePhoto(in: work)
        let photoField = photo.isEmpty ? "" : "\"\(photo)\""  // a data: URL holds a comma
        let uuid = BenchBeacons.uuidText
        let total = stores * membersPerStore
        var csv = "id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt\n"
        for index in 1...total {
            csv += "m\(index),Member \(index),Tea,ibeacon:\(uuid):\((index - 1) / membersPerStore + 1):\(index),\(photoField),3,,\n"
        }
        for index in 0..<arrivals { csv += "n\(index),Newcomer \(index),Coffee,ibeacon:\(uuid):1000:\(index),\(photoField),0,,\n" }
        try csv.write(toFile: work + "/members.csv", atomically: true, encoding: .utf8)
        let departments = (0..<10).map { "          - {id: \($0), name: Department \($0)}" }.joined(separator: "\n")
        let storesYAML = (1...stores).map { "  - id: \($0)\n    name: Store \($0)\n    departments:\n\(departments)" }.joined(
            separator: "\n")
        try """
        id: bench
        broker: {url: "mqtt://127.0.0.1:\(brokerPort)"}
        database: bench.sqlite
        members: members.csv
        presence: {staleAfter: 10s, exitAfter: 60s, switchMargin: 4, switchDwell: 3s, visitGap: 20m}
        stores:
        \(storesYAML)
        """.write(toFile: work + "/coordinator.yaml", atomically: true, encoding: .utf8)

        let coordinator = try BenchProcess(
            BenchProcess.besideBench("beacon-coordinator"),
            ["run", "--config", work + "/coordinator.yaml", "--log-level", "warning"])
        defer { coordinator.stop() }
        let dashboardPort = try BenchProcess.freePort()
        let dashboard = try BenchProcess(
            BenchProcess.besideBench("beacon-dashboard"),
            ["--broker", "mqtt://127.0.0.1:\(brokerPort)", "--listen", "127.0.0.1:\(dashboardPort)", "--log-level", "warning"])
        defer { dashboard.stop() }
        try await BenchProcess.waitForPort(dashboardPort)

        MQTTLibrary.initialize()
        var logger = Logger(label: "beacon-bench")
        logger.logLevel = .warning
        let listener = try MQTTClient(configuration: MQTTConfiguration(broker: BrokerURL("mqtt://127.0.0.1:\(brokerPort)")), logger: logger)
        try listener.start()
        guard await listener.waitUntilConnected(timeout: .seconds(5)) else { throw BenchError("cannot reach the benchmark broker") }
        try listener.subscribe(Topics().events(store: 1), qos: .atLeastOnce)
        try listener.subscribe(Topics().coordinatorStatus(id: "bench"), qos: .atLeastOnce)
        let arrivedAt = Mutex<[String: Double]>([:])
        let coordinatorOnline = Mutex(false)
        let watcher = Task { [messages = listener.messages] in
            for await message in messages {
                let now = Self.wallMilliseconds()
                if message.topic.hasSuffix("/status") {
                    if String(decoding: message.payload, as: UTF8.self).contains("\"online\"") { coordinatorOnline.withLock { $0 = true } }
                } else if let event = try? WireCodec.decodeEvent(message.payload), case .arrived(let member, _, _, _, _, _) = event.kind {
                    arrivedAt.withLock { $0[member.id] = now }
                }
            }
        }
        defer { watcher.cancel() }
        let startDeadline = Measure.seconds() + 120
        while !coordinatorOnline.withLock({ $0 }) {
            guard Measure.seconds() < startDeadline else { throw BenchError("the coordinator did not come online") }
            try await Task.sleep(for: .milliseconds(100))
        }

        // The chain's nodes: every member heard every 4 s by their department's node, movers at once by their new one.
        let load = try ChainLoad(stores: stores, membersPerStore: membersPerStore, port: brokerPort, logger: logger)
        let loadTask = Task { try await load.run(movesPerSecond: movesPerSecond) }
        defer { loadTask.cancel() }
        let presentDeadline = Measure.seconds() + 180
        var present = 0
        while present < total {
            guard Measure.seconds() < presentDeadline else {
                throw BenchError("only \(present) of \(total) members present after 3 minutes")
            }
            try await Task.sleep(for: .seconds(1))
            present = (try? await Self.totalMembers(port: dashboardPort)) ?? 0
        }

        let memoryWhenPresent = dashboard.memory
        // Pages: plain readers of the event streams, and Chromium on store 1 noting when each row is added.
        let readers =
            try (1...max(1, pages)).prefix(pages).map { try SSEReader(port: dashboardPort, path: "/stores/\($0)/live") }
            + [try SSEReader(port: dashboardPort, path: "/live")]
        defer { readers.forEach { $0.stop() } }
        let browser = try await Browser.start()
        try await browser.open("http://127.0.0.1:\(dashboardPort)/stores/1")
        _ = try await browser.waitFor(
            "return document.querySelectorAll('#members tbody tr').length >= \(membersPerStore);", timeout: .seconds(20))
        _ = try await browser.evaluate(
            """
            window.appeared = {};
            new MutationObserver(function (records) {
              var t = performance.timeOrigin + performance.now();
              records.forEach(function (r) { r.addedNodes.forEach(function (n) {
                var id = n.getAttribute && n.getAttribute('data-member');
                if (id && !(id in window.appeared)) window.appeared[id] = t;
              }); });
            }).observe(document.querySelector('#members tbody'), {childList: true});
            return true;
            """)

        // The measured window: CPU and messages of the dashboard; newcomers arrive in store 1 at even intervals.
        let messagesBefore = try await Self.dashboardCounter("beaconmesh_dashboard_messages_total", port: dashboardPort)
        let bytesBefore = readers.reduce(0) { $0 + $1.bytes }
        let cpuBefore = dashboard.cpuSeconds ?? 0
        let windowStart = Measure.seconds()
        var firstSighting: [String: Double] = [:]
        for index in 0..<arrivals {
            let due = windowStart + Double(seconds) * Double(index) / Double(max(arrivals, 1))
            while Measure.seconds() < due { try await Task.sleep(for: .milliseconds(5)) }
            firstSighting["n\(index)"] = Self.wallMilliseconds()
            try await load.newcomer(index)
        }
        while Measure.seconds() < windowStart + Double(seconds) { try await Task.sleep(for: .milliseconds(20)) }
        let window = Measure.seconds() - windowStart
        let cpu = (dashboard.cpuSeconds ?? 0) - cpuBefore
        let messages = try await Self.dashboardCounter("beaconmesh_dashboard_messages_total", port: dashboardPort) - messagesBefore
        let dropped = try await Self.dashboardCounter("beaconmesh_dashboard_dropped_total", port: dashboardPort)
        let sent = readers.reduce(0) { $0 + $1.bytes } - bytesBefore
        let memory = dashboard.memory
        _ = try await browser.waitFor(
            "return Object.keys(window.appeared).filter(function (k) { return k[0] === 'n'; }).length >= \(arrivals);",
            timeout: .seconds(10))
        let appeared = try await browser.evaluate("return window.appeared;") as? [String: Any] ?? [:]
        let consoleErrors = try await browser.consoleMessages().filter { $0.hasPrefix("SEVERE") }
        await browser.quit()
        loadTask.cancel()

        let events = arrivedAt.withLock { $0 }
        var total_: [Double] = []
        var coordinatorPart: [Double] = []
        var dashboardPart: [Double] = []
        for (id, start) in firstSighting {
            guard let row = (appeared[id] as? Double) ?? (appeared[id] as? Int).map(Double.init) else { continue }
            total_.append(row - start)
            if let event = events[id] {
                coordinatorPart.append(event - start)
                dashboardPart.append(row - event)
            }
        }
        func summary(_ values: [Double]) -> String {
            guard !values.isEmpty else { return "n/a" }
            let sorted = values.sorted()
            return "p50 \(Int(sorted[sorted.count / 2].rounded())) ms, max \(Int(sorted.last!.rounded())) ms"
        }
        print(
            "dashboard benchmark: \(stores) stores × 10 departments, \(Measure.grouped(Double(total))) members present\(noPhotos ? " (no photos)" : " with photos (\(photo.utf8.count) bytes each)"), \(movesPerSecond) department moves/s; \(pages) store pages and 1 overview over server-sent events, 1 Chromium page"
        )
        print(
            "  dashboard CPU      \(Int((cpu / window * 1000).rounded()) / 10) % of one core over \(Int(window.rounded())) s (all threads, user + system), \(Measure.grouped(Double(messages) / window)) broker messages/s received, \(dropped) dropped since start"
        )
        print(
            "  dashboard memory   resident \(Measure.megabytes(memory.resident)) after the window (\(Measure.megabytes(memoryWhenPresent.resident)) when everybody had arrived), peak \(Measure.megabytes(memory.peak))"
        )
        print("  sent to pages      \(Measure.grouped(Double(sent) / window / 1024)) KiB/s to the \(readers.count) plain readers")
        print("  first sighting → row in Chromium: \(summary(total_)) (\(total_.count) of \(arrivals) newcomers)")
        print(
            "    of which first sighting → coordinator's arrived event (1 s settling): \(summary(coordinatorPart)); arrived event → row: \(summary(dashboardPart))"
        )
        if !consoleErrors.isEmpty { print("  console errors: \(consoleErrors)") }
    }

    static func wallMilliseconds() -> Double { Date().timeIntervalSince1970 * 1000 }

    /// A JPEG of noise as the coordinator's thumbnails are (128 × 128), as a `data:` URL.
    static func makePhoto(in work: String) throws -> String {
        let convert = try BenchProcess.which("convert")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: convert)
        process.arguments = ["-size", "128x128", "plasma:", "-quality", "80", work + "/photo.jpg"]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let data = FileManager.default.contents(atPath: work + "/photo.jpg") else {
            throw BenchError("ImageMagick's convert could not make the members' photo")
        }
        return "data:image/jpeg;base64," + data.base64EncodedString()
    }

    static func totalMembers(port: Int) async throws -> Int {
        let reply = try await LoopbackHTTP.request("GET", port: port, path: "/api/stores", timeout: .seconds(10))
        let object = try JSONSerialization.jsonObject(with: reply.body) as? [String: Any]
        return (object?["totals"] as? [String: Any])?["members"] as? Int ?? 0
    }

    /// The dashboard's counter `name` from its /metrics.
    static func dashboardCounter(_ name: String, port: Int) async throws -> Int {
        let reply = try await LoopbackHTTP.request("GET", port: port, path: "/metrics", timeout: .seconds(10))
        for line in String(decoding: reply.body, as: UTF8.self).split(separator: "\n") where line.hasPrefix(name + " ") {
            return Int(Double(line.split(separator: " ").last ?? "") ?? 0)
        }
        return 0
    }
}

/// The chain's department nodes for the dashboard benchmark: every member heard every 4 s by the node of their
/// department, `movesPerSecond` members a second moved to another department (heard there at once), and
/// newcomers in store 1 heard every 100 ms by a node of their own.
final class ChainLoad: Sendable {
    private let stores: Int
    private let membersPerStore: Int
    private let client: MQTTClient
    private let state = Mutex(State())

    private struct State {
        var department: [Int: UInt16] = [:]
        var sequence: [String: UInt64] = [:]
        var newcomers: [Int] = []
    }

    init(stores: Int, membersPerStore: Int, port: Int, logger: Logger) throws {
        self.stores = stores
        self.membersPerStore = membersPerStore
        client = try MQTTClient(
            configuration: MQTTConfiguration(broker: try BrokerURL("mqtt://127.0.0.1:\(port)"), clientID: "bench-nodes"),
            logger: logger)
        try client.start()
    }

    /// Makes newcomer `index` heard in store 1, department 0.
    func newcomer(_ index: Int) async throws {
        state.withLock { $0.newcomers.append(index) }
        try publishNewcomers()
    }

    func run(movesPerSecond: Int) async throws {
        let total = stores * membersPerStore
        let slices = 40  // ticks of 100 ms: each member once every 4 s
        var tick = 0
        while !Task.isCancelled {
            var due: [Int] = Array(stride(from: tick % slices + 1, through: total, by: slices))
            if tick % 10 == 0 {
                let movers = (0..<movesPerSecond).map { _ in Int.random(in: 1...total) }
                state.withLock { state in
                    for member in movers {
                        state.department[member] = UInt16(
                            (Int(state.department[member] ?? UInt16(member % 10)) + Int.random(in: 1...9)) % 10)
                    }
                }
                due += movers
            }
            try publish(members: due)
            try publishNewcomers()
            tick += 1
            try await Task.sleep(for: .milliseconds(100))
        }
        await client.disconnect(timeout: .seconds(1))
    }

    /// One batch per node (store, department) for the members due, 5 sightings at most each.
    private func publish(members: [Int]) throws {
        let now = Timestamp(milliseconds: Int64(DashboardBenchmark.wallMilliseconds()))
        var byNode: [NodeAddress: [Int]] = [:]
        let departments = state.withLock { $0.department }
        for member in members {
            let store = UInt16((member - 1) / membersPerStore + 1)
            let department = departments[member] ?? UInt16(member % 10)
            byNode[NodeAddress(store: store, department: department, node: "a")!, default: []].append(member)
        }
        for (node, members) in byNode {
            for start in stride(from: 0, to: members.count, by: 5) {
                let sightings = members[start..<min(start + 5, members.count)].map { member in
                    Sighting(
                        beacon: .iBeacon(uuid: BenchBeacons.uuid, major: node.store, minor: UInt16(member)), rssi: -60, count: 4,
                        txPower: -59, distance: 1.2, proximity: .near, lastSeen: now)
                }
                try send(node: node, sightings: sightings, at: now)
            }
        }
    }

    private func publishNewcomers() throws {
        let newcomers = state.withLock { $0.newcomers }
        guard !newcomers.isEmpty else { return }
        let now = Timestamp(milliseconds: Int64(DashboardBenchmark.wallMilliseconds()))
        let node = NodeAddress(store: 1, department: 0, node: "n")!
        for start in stride(from: 0, to: newcomers.count, by: 5) {
            let sightings = newcomers[start..<min(start + 5, newcomers.count)].map {
                Sighting(
                    beacon: .iBeacon(uuid: BenchBeacons.uuid, major: 1000, minor: UInt16($0)), rssi: -55, count: 4,
                    txPower: -59, distance: 1, proximity: .near, lastSeen: now)
            }
            try send(node: node, sightings: sightings, at: now)
        }
    }

    private func send(node: NodeAddress, sightings: [Sighting], at now: Timestamp) throws {
        let key = "\(node)"
        let seq = state.withLock { state -> UInt64 in
            state.sequence[key, default: 0] += 1
            return state.sequence[key]!
        }
        let payload = WireCodec.encode(SightingBatch(node: node, boot: "bench", seq: seq, sentAt: now, sightings: sightings))
        _ = try client.publish(
            topic: Topics().sightings(node),
            payload: payload, qos: .atLeastOnce)
    }
}

/// A page's event stream read and thrown away on a thread of its own, counting the bytes.
final class SSEReader: Sendable {
    private let counted = Mutex(0)
    private let stopped = Mutex(false)

    init(port: Int, path: String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw BenchError("cannot connect to the dashboard for \(path)")
        }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while !stopped.withLock({ $0 }) {
                let count = read(fd, &buffer, buffer.count)
                if count == 0 { break }
                if count > 0 { counted.withLock { $0 += count } }
            }
            close(fd)
        }
        thread.start()
    }

    var bytes: Int { counted.withLock { $0 } }

    func stop() { stopped.withLock { $0 = true } }
}
