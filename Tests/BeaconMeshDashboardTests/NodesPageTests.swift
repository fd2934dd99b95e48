import BeaconMeshCore
import BeaconMeshTesting
import BeaconMeshWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import BeaconMeshDashboard

/// The nodes pages (`/nodes`, `/stores/{store}/nodes`) and `/api/stores/{store}/nodes`, from a chain board fed the
/// nodes' retained status and health as the broker delivers them.
@Suite("Nodes pages")
struct NodesPageTests {
    typealias F = BoardFixtures

    static func address(_ store: UInt16, _ department: UInt16, _ node: String) -> NodeAddress {
        NodeAddress(store: store, department: department, node: node)!
    }

    static func status(
        _ state: LinkState, _ version: String, store: NodeConfigReport? = nil, node: NodeConfigReport? = nil
    ) -> [UInt8] {
        WireCodec.encode(
            NodeStatus(
                state: state, version: version, boot: "b", source: "hci0", startedAt: F.at(seconds: 0),
                config: NodeConfigReports(store: store, node: node)))
    }

    static let refusal = "unknown key 'rssi-floor' <b>"

    /// Store 1 (San Francisco, by its snapshot): Clothing's node on 1.10.0 with store config r3 applied, Housewares'
    /// offline, Automotive's `b` on 1.9.2 with its own config r2 refused; store 2: one node on 1.10.0 with health.
    static func board() -> ChainBoard {
        var board = ChainBoard(broker: "b")
        _ = board.receive(topic: F.topics.presence(store: 1), payload: F.snapshot(members: [], at: 1), at: F.at(seconds: 1))
        let feed: [(NodeAddress, [UInt8])] = [
            (address(1, 10, "a"), status(.online, "1.10.0", store: NodeConfigReport(revision: 3, state: .applied))),
            (address(1, 20, "a"), status(.offline, "1.10.0")),
            (address(1, 30, "b"), status(.online, "1.9.2", node: NodeConfigReport(revision: 2, state: .refused, error: refusal))),
            (address(2, 5, "a"), status(.online, "1.10.0")),
        ]
        for (node, payload) in feed {
            #expect(board.receive(topic: F.topics.nodeStatus(node), payload: payload, at: F.at(seconds: 2)).change == .store(node.store))
        }
        let health = WireCodec.encode(
            NodeHealth(
                uptimeSeconds: 125, adverts: 1000, advertsPerSecond: 12.34, beacons: 3, batches: 9, dropped: 0, queued: 0, rssBytes: 1))
        let heard = board.receive(topic: F.topics.nodeHealth(address(2, 5, "a")), payload: health, at: F.at(seconds: 3))
        #expect(heard.dropReason == nil)
        return board
    }

    @Test("the chain's nodes: offline first, the version behind the newest flagged (1.10.0 is newer than 1.9.2), config states as reported")
    func chainModel() throws {
        let model = NodesPageModel(Self.board())
        #expect(
            model.rows.map(\.address) == [
                Self.address(1, 20, "a"), Self.address(1, 10, "a"), Self.address(1, 30, "b"), Self.address(2, 5, "a"),
            ])
        #expect(model.newestVersion == "1.10.0")
        #expect(model.rows.map(\.behind) == [false, false, true, false])
        #expect(model.versions == [.init(version: "1.10.0", nodes: 3, behind: false), .init(version: "1.9.2", nodes: 1, behind: true)])
        #expect(model.offlineCount == 1 && model.behindCount == 1 && model.refusedCount == 1)
        #expect(model.rows[0].departmentName == "Housewares" && model.rows[0].storeName == "San Francisco")
        #expect(NodesPageModel.describe(model.rows[1].config.store) == "r3 applied")
        #expect(NodesPageModel.describe(model.rows[1].config.node) == "none")
        #expect(NodesPageModel.describe(model.rows[2].config.node) == "r2 refused: \(Self.refusal)")
        let health = try #require(model.rows[3].health)
        #expect(health.uptimeSeconds == 125 && model.rows[3].lastHeard == F.at(seconds: 3))
    }

    @Test("a store's page has its nodes only; a user of store 2 sees store 2's only, its newest among them")
    func storeAndAccess() {
        let board = Self.board()
        #expect(NodesPageModel(board, store: 1).rows.map(\.address.store) == [1, 1, 1])
        let storeTwo = NodesPageModel(board, stores: .stores([2]))
        #expect(storeTwo.rows.map(\.address) == [Self.address(2, 5, "a")])
        #expect(NodesPageModel(board, store: 1, stores: .stores([2])).rows.isEmpty)
    }

    @Test("a zero-byte retained status takes the node out: off the page, the API and the store's node panel")
    func deletedStatus() {
        var board = Self.board()
        let node = Self.address(1, 30, "b")
        #expect(board.receive(topic: F.topics.nodeStatus(node), payload: [], at: F.at(seconds: 4)).change == .store(1))
        #expect(!board.nodes.entries(store: 1).contains { $0.address == node })
        #expect(NodesPageModel(board).behindCount == 0)
        #expect(board.stores[1]?.nodes[StoreBoard.NodeKey(department: 30, node: "b")] == nil)
        // Deleting a node never heard changes nothing.
        #expect(board.receive(topic: F.topics.nodeStatus(Self.address(1, 40, "z")), payload: [], at: F.at(seconds: 5)).change == .none)
    }

    @Test("the dashboard subscribes to node health, every store's or the stores it shows")
    func subscribesToHealth() {
        #expect(DashboardFeed.filters(stores: [], topics: F.topics).contains("beaconmesh/v1/stores/+/departments/+/nodes/+/health"))
        #expect(DashboardFeed.filters(stores: [3], topics: F.topics).contains("beaconmesh/v1/stores/3/departments/+/nodes/+/health"))
    }

    @Test("the page: rows offline first with their classes, the behind marker, the refusal's reason escaped, health; the HTML lints clean")
    func page() async throws {
        let html = NodesPage.html(NodesPageModel(Self.board()), linkLost: false, signedInAs: nil, now: F.at(seconds: 13))
        let rows = html.matches(of: /<tr data-node="([^"]+)"( class="([^"]*)")?>/).map { ("\($0.output.1)", "\($0.output.3 ?? "")") }
        #expect(rows.map(\.0) == ["1/20/a", "1/10/a", "1/30/b", "2/5/a"])
        #expect(rows.map(\.1) == ["offline", "", "behind refused", ""])
        #expect(html.contains(#"<span class="marker">behind 1.10.0</span>"#))
        #expect(html.contains("r2 refused: unknown key &#39;rssi-floor&#39; &lt;b&gt;"))
        #expect(!html.contains("<b>"))
        #expect(html.contains(#"<td class="uptime">2m 05s</td><td class="adverts">12.3</td><td class="heard">10s ago</td>"#))
        #expect(html.contains(#"<a href="/stores/2/nodes">Store 2</a>"#))
        #expect(html.contains(#"<li class="version behind" data-version="1.9.2">"#))

        let python = BuiltProducts.packageRoot.appendingPathComponent(".build/weblint/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            Issue.record("the web linter is missing: run deploy/install-weblint.sh (deploy/run-tests.sh does)")
            return
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nodes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pages = [
            ("chain.html", html),
            (
                "store.html",
                NodesPage.html(
                    NodesPageModel(Self.board(), store: 1), storeName: "San & Francisco", linkLost: true, signedInAs: "a<b>",
                    now: F.at(seconds: 13))
            ),
            (
                "empty.html",
                NodesPage.html(NodesPageModel(ChainBoard(broker: "b")), linkLost: false, signedInAs: nil, now: F.at(seconds: 0))
            ),
        ]
        var paths: [String] = []
        for (name, text) in pages {
            let path = folder.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            paths.append(path)
        }
        let script = BuiltProducts.packageRoot.appendingPathComponent("deploy/lint-web.py").path
        let run = try TestProcess(executable: python, arguments: [script] + paths)
        let status = await run.waitForExit(timeout: .seconds(60))
        #expect(status == .exited(0), "\(run.stdoutLines.joined(separator: "\n"))")
    }

    @Test("/api/stores/1/nodes is `nodes list --json` of store 1; the pages answer; with --users store 2's nodes are 403 to a store-1 user")
    func routes() async throws {
        let board = Self.board()
        let hub = DashboardHub(board: board)
        let expected = WireCodec.encode(nodeEntries: board.nodes.entries(store: 1))
        let app = Application(
            router: DashboardRoutes.router(hub: hub, metricsText: { "" }, clock: ManualClock(now: F.at(seconds: 13))))
        try await app.test(.router) { client in
            try await client.execute(uri: "/api/stores/1/nodes", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json")
                #expect(Array(buffer: response.body) == expected)
            }
            let list = try await client.execute(uri: "/api/stores/1/nodes", method: .get) { try WireCodec.parse(Array(buffer: $0.body)) }
            guard case .array(let nodes) = list else {
                Issue.record("not a list: \(list)")
                return
            }
            #expect(nodes.map { $0["node"] } == [.string("a"), .string("a"), .string("b")])
            #expect(nodes[2]["config"]?["node"]?["error"] == .string(Self.refusal))
            for uri in ["/nodes", "/stores/1/nodes"] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .ok, "\(uri)")
                    #expect(String(buffer: response.body).contains(#"<tr data-node="1/30/b" class="behind refused">"#), "\(uri)")
                }
            }
            try await client.execute(uri: "/api/stores/x/nodes", method: .get) { #expect($0.status == .badRequest) }
        }

        let users = [DashboardUser(name: "anna", passwordHash: PasswordHash.make("anna-store-1-pass"), stores: .stores([1]))]
        let access = DashboardAccess(users: users, secureCookies: false, logger: Logger(label: "test"))
        let guarded = Application(
            router: DashboardRoutes.router(hub: hub, metricsText: { "" }, access: access, clock: ManualClock(now: F.at(seconds: 13))))
        let anna: HTTPFields = [.authorization: "Basic " + Data("anna:anna-store-1-pass".utf8).base64EncodedString()]
        try await guarded.test(.router) { client in
            try await client.execute(uri: "/api/stores/1/nodes", method: .get) { #expect($0.status == .unauthorized) }
            try await client.execute(uri: "/nodes", method: .get, headers: [.accept: "text/html"]) { response in
                #expect(response.status == .seeOther && response.headers[.location] == "/login?next=%2Fnodes")
            }
            try await client.execute(uri: "/api/stores/2/nodes", method: .get, headers: anna) { #expect($0.status == .forbidden) }
            try await client.execute(uri: "/stores/2/nodes", method: .get, headers: anna) { #expect($0.status == .forbidden) }
            try await client.execute(uri: "/api/stores/1/nodes", method: .get, headers: anna) {
                #expect(Array(buffer: $0.body) == expected)
            }
            try await client.execute(uri: "/nodes", method: .get, headers: anna) { response in
                let html = String(buffer: response.body)
                #expect(html.contains(#"data-node="1/20/a""#) && !html.contains(#"data-node="2/"#), "\(html)")
                #expect(html.contains("Signed in as anna"))
            }
        }
        hub.close()
    }
}
