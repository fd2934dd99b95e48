import BeaconMeshTesting
import Foundation
import Synchronization

/// A real mesh for the dashboard's tests: mosquitto on a free port, the real coordinator (store 1: Clothing 10,
/// Housewares 20, Automotive 30; short presence timings) with three members — Ana Souza with a photo (`…:1:1`),
/// Zoë Martin (`…:1:4`) and 李小龍 (`…:1:8`) without, and any `extraMembers` rows; the departments in `tills` are
/// tills — and the real `beacon-dashboard`
/// on a free port, with `dashboardArguments` added to its command line. `Shoppers` plays the department nodes.
struct DashboardMesh {
    let broker: MosquittoBroker
    let directory: String
    let coordinator: TestProcess
    var dashboard: TestProcess
    let dashboardPort: Int
    let metricsPort: Int
    let shoppers: Shoppers
    /// What the dashboard was started with beyond the broker and `--listen`.
    let dashboardArguments: [String]

    var dashboardURL: String { "http://127.0.0.1:\(dashboardPort)" }

    /// Starts the mesh; `prepare` runs in its folder before the dashboard starts and returns the dashboard's extra
    /// arguments (a users file it made, say).
    /// `tiers` adds a `tier` column to the members CSV (a custom field; empty for members not in it), and
    /// `extraConfig` top-level keys to the coordinator's config (`alerts:`, say).
    static func start(
        extraMembers: [String] = [], database: String = "mesh.sqlite", tills: Set<Int> = [], tiers: [String: String] = [:],
        extraConfig: String = "", prepare: (_ directory: String) async throws -> [String] = { _ in [] }
    ) async throws -> DashboardMesh {
        let broker = try await MosquittoBroker.start()
        let directory = try Mesh.temporaryDirectory()
        try drawPhoto(to: directory + "/ana.png")
        let uuid = Mesh.uuid
        let members = """
            id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt
            ana,Ana Souza,Flat white,ibeacon:\(uuid):1:1,ana.png,11,1763683200000,1735689600000
            zoe,Zoë Martin,,ibeacon:\(uuid):1:4,,0,,
            li,李小龍,Jasmine tea,ibeacon:\(uuid):1:8,,2,1763683200000,
            """ + extraMembers.map { "\n" + $0 }.joined()
        let csv =
            tiers.isEmpty
            ? members
            : members.split(separator: "\n").enumerated().map { index, row in
                index == 0 ? row + ",tier" : row + "," + (tiers[String(row.prefix { $0 != "," })] ?? "")
            }.joined(separator: "\n")
        // The CSV's photo paths are read relative to the working directory of the import: give an absolute one.
        try csv.replacingOccurrences(of: ",ana.png,", with: ",\(directory)/ana.png,")
            .write(toFile: directory + "/members.csv", atomically: true, encoding: .utf8)
        let metricsPort = try FreePort.next()
        func till(_ department: Int) -> String { tills.contains(department) ? ", till: true" : "" }
        let config = """
            id: e2e
            broker: {url: "\(broker.url)"}
            database: "\(database)"
            members: members.csv
            metrics: "127.0.0.1:\(metricsPort)"
            presence: {staleAfter: 3s, exitAfter: 2s, switchMargin: 4, switchDwell: 1s, visitGap: 20m}
            promos: {dwell: 1s, cooldown: 24h}
            stores:
              - id: 1
                name: San Francisco
                departments:
                  - {id: 10, name: Clothing\(till(10)), promo: {id: shirts, title: "Promoção de blusas!", message: "Ganhe R$10!"}}
                  - {id: 20, name: Housewares\(till(20))}
                  - {id: 30, name: Automotive\(till(30))}
            \(extraConfig)
            """
        try config.write(toFile: directory + "/coordinator.yaml", atomically: true, encoding: .utf8)
        let coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", directory + "/coordinator.yaml"])
        guard await coordinator.waitForLine(in: .stderr, timeout: .seconds(20), where: { $0.contains("coordinator running") }) != nil else {
            throw TestSupportError("the coordinator did not start: \(coordinator.transcript)")
        }
        let port = try FreePort.next()
        let arguments = try await prepare(directory)
        let dashboard = try await startDashboard(brokerURL: broker.url, port: port, extra: arguments)
        return DashboardMesh(
            broker: broker, directory: directory, coordinator: coordinator, dashboard: dashboard,
            dashboardPort: port, metricsPort: metricsPort, shoppers: Shoppers(port: broker.port), dashboardArguments: arguments)
    }

    /// Starts `beacon-dashboard` on `port` and waits for its "serving" line (http:// or https://).
    static func startDashboard(brokerURL: String, port: Int, extra: [String] = []) async throws -> TestProcess {
        let dashboard = try Mesh.program("beacon-dashboard", ["--broker", brokerURL, "--listen", "127.0.0.1:\(port)"] + extra)
        guard await dashboard.waitForLine(in: .stdout, timeout: .seconds(20), where: { $0.contains("serving http") }) != nil else {
            throw TestSupportError("the dashboard did not start: \(dashboard.transcript)")
        }
        return dashboard
    }

    /// Restarts the dashboard on the same port (after `stopDashboard`).
    mutating func restartDashboard() async throws {
        dashboard = try await Self.startDashboard(brokerURL: broker.url, port: dashboardPort, extra: dashboardArguments)
    }

    func stop() async {
        await shoppers.stop()
        _ = await dashboard.stop(with: SIGTERM, timeout: .seconds(10))
        _ = await coordinator.stop(with: SIGTERM, timeout: .seconds(10))
        await broker.stop()
    }

    /// A head-and-shoulders picture drawn with ImageMagick (installed by deploy/install-deps.sh tests): a real PNG for
    /// the coordinator's photo import to shrink into the member's thumbnail.
    static func drawPhoto(to path: String) throws {
        let convert = ["/usr/bin/convert", "/usr/local/bin/convert"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let convert else { throw TestSupportError("ImageMagick's convert is missing: run deploy/install-deps.sh tests") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: convert)
        process.arguments = [
            "-size", "256x256", "xc:#cfe8e1", "-fill", "#3b2418", "-draw", "ellipse 128,104 62,70 0,360",
            "-fill", "#e9b38f", "-draw", "ellipse 128,118 48,56 0,360", "-fill", "#3b2418",
            "-draw", "ellipse 128,72 52,26 180,360", "-fill", "#0a6e5c", "-draw", "ellipse 128,262 96,76 0,360",
            "-fill", "#e9b38f", "-draw", "rectangle 114,165 142,190", path,
        ]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestSupportError("convert failed drawing \(path)") }
    }
}

/// The department nodes of store 1, played through a long-lived `mosquitto_pub` each (`TopicPublisher`): every 300 ms
/// each department with somebody in it publishes a sighting batch of the beacons (minors of `…:1:N`) placed there.
/// Also publishes node status.
final class Shoppers: Sendable {
    private let port: Int
    private let placement = Placement()
    private let task: Task<Void, Never>

    /// Which beacons are in which department.
    private final class Placement: Sendable {
        let minors = Mutex<[Int: Set<Int>]>([:])
    }

    init(port: Int) {
        self.port = port
        let boot = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let placement = self.placement
        task = Task {
            var seq: [Int: Int] = [:]
            var nodes: [Int: TopicPublisher] = [:]
            try? await paced(.max, every: .milliseconds(300)) { _ in
                for (department, minors) in placement.minors.withLock({ $0 }) where !minors.isEmpty {
                    seq[department, default: 0] += 1
                    if nodes[department] == nil {
                        nodes[department] = try? await TopicPublisher(
                            port: port, topic: "beaconmesh/v1/stores/1/departments/\(department)/nodes/a/sightings")
                    }
                    // Stamped as it is sent: the batch is on its way within a millisecond.
                    let now = Mesh.nowMilliseconds
                    let sightings = minors.sorted().map { minor in
                        """
                        {"beacon":"ibeacon:\(Mesh.uuid):1:\(minor)","rssi":-60,"count":4,"txPower":-59,"distance":1.1,\
                        "proximity":"near","lastSeen":\(now)}
                        """
                    }.joined(separator: ",")
                    let batch = """
                        {"v":1,"store":1,"department":\(department),"node":"a","boot":"\(boot)","seq":\(seq[department]!),\
                        "sentAt":\(now),"sightings":[\(sightings)]}
                        """
                    try? nodes[department]?.send(batch)
                }
            }
            for node in nodes.values { await node.stop() }
        }
    }

    /// Puts beacon `minor` in `department` (or takes it out of the store with `nil`).
    func place(_ minor: Int, in department: Int?) {
        placement.minors.withLock { placed in
            for key in placed.keys { placed[key]?.remove(minor) }
            if let department { placed[department, default: []].insert(minor) }
        }
    }

    /// Publishes node `a` of `department`'s retained status.
    func nodeStatus(department: Int, online: Bool) async throws {
        try await MosquittoClients.publish(
            port: port, topic: "beaconmesh/v1/stores/1/departments/\(department)/nodes/a/status",
            string:
                #"{"v":1,"state":"\#(online ? "online" : "offline")","version":"test","boot":"b","source":"sim","startedAt":\#(Mesh.nowMilliseconds)}"#,
            qos: 1, retain: true)
    }

    func stop() async {
        task.cancel()
        await task.value
    }
}

extension DashboardMesh {
    /// Starts a mesh, runs `body` with it and stops it, also when `body` throws.
    static func run(
        extraMembers: [String] = [], database: String = "mesh.sqlite", tills: Set<Int> = [],
        prepare: (_ directory: String) async throws -> [String] = { _ in [] }, _ body: (inout DashboardMesh) async throws -> Void
    ) async throws {
        var mesh = try await start(extraMembers: extraMembers, database: database, tills: tills, prepare: prepare)
        do {
            try await body(&mesh)
        } catch {
            await mesh.stop()
            throw error
        }
        await mesh.stop()
    }
}
