import BeaconMeshCore

extension WireCodec {
    /// The retained node status payload (also the last will, with `state: offline`).
    public static func encode(_ status: NodeStatus) -> [UInt8] {
        serialize(.object([
            ("v", .integer(1)), ("state", .string(status.state.rawValue)), ("version", .string(status.version)),
            ("boot", .string(status.boot)), ("source", .string(status.source)), ("startedAt", .timestamp(status.startedAt)),
        ]))
    }

    /// Reads a node status; only `state` is required (a will written by another tool may say little else).
    public static func decodeNodeStatus(_ bytes: [UInt8]) throws(WireError) -> NodeStatus {
        let body = try parseVersion1(bytes)
        return NodeStatus(
            state: try body.linkState("state"), version: try body.optionalString("version") ?? "",
            boot: try body.optionalString("boot") ?? "", source: try body.optionalString("source") ?? "",
            startedAt: try body.optionalTimestamp("startedAt") ?? Timestamp(milliseconds: 0))
    }

    /// The node health payload.
    public static func encode(_ health: NodeHealth) -> [UInt8] {
        serialize(.object([
            ("v", .integer(1)), ("uptime", .integer(health.uptimeSeconds)), ("adverts", .integer(health.adverts)),
            ("advertsPerSec", .double((health.advertsPerSecond * 10).rounded() / 10)), ("beacons", .integer(health.beacons)),
            ("batches", .integer(health.batches)), ("dropped", .integer(health.dropped)), ("queued", .integer(health.queued)),
            ("rssBytes", .integer(health.rssBytes)),
        ]))
    }

    /// Reads a node health report.
    public static func decodeNodeHealth(_ bytes: [UInt8]) throws(WireError) -> NodeHealth {
        let body = try parseVersion1(bytes)
        return NodeHealth(
            uptimeSeconds: try body.int("uptime"), adverts: UInt64(clamping: try body.int("adverts")),
            advertsPerSecond: try body.double("advertsPerSec"), beacons: Int(try body.int("beacons")),
            batches: UInt64(clamping: try body.int("batches")), dropped: UInt64(clamping: try body.int("dropped")),
            queued: Int(try body.int("queued")), rssBytes: Int(try body.int("rssBytes")))
    }

    /// The retained coordinator status payload.
    public static func encode(_ status: CoordinatorStatus) -> [UInt8] {
        serialize(.object([
            ("v", .integer(1)), ("state", .string(status.state.rawValue)), ("stores", .array(status.stores.map { .integer($0) })),
            ("startedAt", .timestamp(status.startedAt)),
        ]))
    }

    /// Reads a coordinator status.
    public static func decodeCoordinatorStatus(_ bytes: [UInt8]) throws(WireError) -> CoordinatorStatus {
        let body = try parseVersion1(bytes)
        var stores: [UInt16] = []
        for element in try body.optionalArray("stores") {
            guard case .int(let number) = element, let store = UInt16(exactly: number) else {
                throw .wrongType(field: "stores", expected: "an array of store numbers")
            }
            stores.append(store)
        }
        return CoordinatorStatus(state: try body.linkState("state"), stores: stores,
                                 startedAt: try body.optionalTimestamp("startedAt") ?? Timestamp(milliseconds: 0))
    }

    /// The coordinator health payload (with the added `rangingReports`).
    public static func encode(_ health: CoordinatorHealth) -> [UInt8] {
        serialize(.object([
            ("v", .integer(1)), ("uptime", .integer(health.uptimeSeconds)), ("batches", .integer(health.batches)),
            ("rangingReports", .integer(health.rangingReports)),
            ("sightings", .integer(health.sightings)), ("events", .integer(health.events)),
            ("dropped", .object(health.dropped.sorted { $0.key < $1.key }.map { ($0.key, .integer($0.value)) })),
            ("gaps", .integer(health.gaps)), ("duplicates", .integer(health.duplicates)), ("tracked", .integer(health.tracked)),
            ("rssBytes", .integer(health.rssBytes)),
            ("nodes", .array(health.nodes.map { node in
                .object([
                    ("store", .integer(node.address.store)), ("department", .integer(node.address.department)),
                    ("node", .string(node.address.node)), ("state", .string(node.state.rawValue)),
                    ("clockSkewMs", .integer(node.clockSkew)),
                ])
            })),
            ("database", .object([
                ("state", .string(health.database.failing ? "failing" : "ok")), ("queued", .integer(health.database.queued)),
                ("error", health.database.error.map { .string($0) } ?? .null),
                ("since", .timestamp(health.database.since)),
            ])),
        ]))
    }

    /// Reads a coordinator health report.
    public static func decodeCoordinatorHealth(_ bytes: [UInt8]) throws(WireError) -> CoordinatorHealth {
        let body = try parseVersion1(bytes)
        var dropped: [String: UInt64] = [:]
        if case .object(let reasons)? = body.value["dropped"] {
            for (reason, count) in reasons {
                guard case .int(let number) = count else { throw .wrongType(field: "dropped.\(reason)", expected: "an integer") }
                dropped[reason] = UInt64(clamping: number)
            }
        }
        return CoordinatorHealth(
            uptimeSeconds: try body.int("uptime"), batches: UInt64(clamping: try body.int("batches")),
            sightings: UInt64(clamping: try body.int("sightings")), events: UInt64(clamping: try body.int("events")),
            dropped: dropped, gaps: UInt64(clamping: try body.int("gaps")),
            duplicates: UInt64(clamping: try body.int("duplicates")), tracked: Int(try body.int("tracked")),
            rssBytes: Int(try body.int("rssBytes")), nodes: try decodeHealthNodes(body), database: try decodeHealthDatabase(body),
            rangingReports: UInt64(clamping: try body.optionalInt("rangingReports") ?? 0))
    }

    private static func decodeHealthNodes(_ body: JSONReader) throws(WireError) -> [CoordinatorHealth.Node] {
        var nodes: [CoordinatorHealth.Node] = []
        for (index, element) in try body.optionalArray("nodes").enumerated() {
            let entry = try JSONReader(element, path: "nodes[\(index)]")
            guard let address = NodeAddress(store: try entry.uint16("store"), department: try entry.uint16("department"),
                                             node: try entry.string("node"))
            else { throw .absurdValue(field: "nodes[\(index)].node", value: try entry.string("node")) }
            nodes.append(.init(address: address, state: try entry.linkState("state"), clockSkew: try entry.int("clockSkewMs")))
        }
        return nodes
    }

    private static func decodeHealthDatabase(_ body: JSONReader) throws(WireError) -> CoordinatorHealth.Database {
        guard body.value["database"] != nil else { return .init() }
        let database = try body.object("database")
        return .init(failing: try database.string("state") == "failing", queued: Int(try database.int("queued")),
                     error: try database.optionalString("error"), since: try database.optionalTimestamp("since"))
    }
}
