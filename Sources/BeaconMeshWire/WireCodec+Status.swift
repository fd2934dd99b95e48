import BeaconMeshCore

extension WireCodec {
    /// The retained node status payload (also the last will, with `state: offline`).
    public static func encode(_ status: NodeStatus) -> [UInt8] {
        payload { body in
            body.member("v", 1)
            body.member("state", status.state.rawValue)
            body.member("version", status.version)
            body.member("boot", status.boot)
            body.member("source", status.source)
            body.member("startedAt", status.startedAt)
            writeNodeConfigReports(status.config, into: &body)
        }
    }

    /// Reads a node status; only `state` is required (a will written by another tool may say little else).
    public static func decodeNodeStatus(_ bytes: [UInt8]) throws(WireError) -> NodeStatus {
        try JSONReader.withVersion1Document(bytes) { body throws(WireError) in
            NodeStatus(
                state: try body.linkState("state"), version: try body.optionalString("version") ?? "",
                boot: try body.optionalString("boot") ?? "", source: try body.optionalString("source") ?? "",
                startedAt: try body.optionalTimestamp("startedAt") ?? Timestamp(milliseconds: 0),
                config: try decodeNodeConfigReports(body))
        }
    }

    /// The node health payload.
    public static func encode(_ health: NodeHealth) -> [UInt8] {
        payload { body in
            body.member("v", 1)
            body.member("uptime", health.uptimeSeconds)
            body.member("adverts", health.adverts)
            body.member("advertsPerSec", (health.advertsPerSecond * 10).rounded() / 10)
            body.member("beacons", health.beacons)
            body.member("batches", health.batches)
            body.member("dropped", health.dropped)
            body.member("queued", health.queued)
            body.member("rssBytes", health.rssBytes)
            body.member("malformed", health.malformedFrames)
        }
    }

    /// Reads a node health report.
    public static func decodeNodeHealth(_ bytes: [UInt8]) throws(WireError) -> NodeHealth {
        try JSONReader.withVersion1Document(bytes) { body throws(WireError) in
            NodeHealth(
                uptimeSeconds: try body.int("uptime"), adverts: UInt64(clamping: try body.int("adverts")),
                advertsPerSecond: try body.double("advertsPerSec"), beacons: Int(try body.int("beacons")),
                batches: UInt64(clamping: try body.int("batches")), dropped: UInt64(clamping: try body.int("dropped")),
                queued: Int(try body.int("queued")), rssBytes: Int(try body.int("rssBytes")),
                malformedFrames: UInt64(clamping: try body.optionalInt("malformed") ?? 0))
        }
    }

    /// The retained coordinator status payload.
    public static func encode(_ status: CoordinatorStatus) -> [UInt8] {
        payload { body in
            body.member("v", 1)
            body.member("state", status.state.rawValue)
            body.key("stores")
            body.array(status.stores) { store, writer in writer.int(store) }
            body.key("active")
            body.array(status.active) { store, writer in writer.int(store) }
            body.member("startedAt", status.startedAt)
        }
    }

    /// Reads a coordinator status.
    public static func decodeCoordinatorStatus(_ bytes: [UInt8]) throws(WireError) -> CoordinatorStatus {
        try JSONReader.withVersion1Document(bytes) { body throws(WireError) in
            let stores = try body.optionalUInt16s("stores", expected: "an array of store numbers")
            // A coordinator from before leases says no `active`: it decides for all its stores.
            let active = body.contains("active") ? try body.optionalUInt16s("active", expected: "an array of store numbers") : stores
            return CoordinatorStatus(
                state: try body.linkState("state"), stores: stores, active: active,
                startedAt: try body.optionalTimestamp("startedAt") ?? Timestamp(milliseconds: 0))
        }
    }

    /// The coordinator health payload (with the added `rangingReports`).
    public static func encode(_ health: CoordinatorHealth) -> [UInt8] {
        payload { body in
            body.member("v", 1)
            body.member("uptime", health.uptimeSeconds)
            body.member("batches", health.batches)
            body.member("rangingReports", health.rangingReports)
            body.member("sightings", health.sightings)
            body.member("events", health.events)
            body.member("dropped") { dropped in
                for (reason, count) in health.dropped.sorted(by: { $0.key < $1.key }) {
                    dropped.key(reason)
                    dropped.int(count)
                }
            }
            body.member("gaps", health.gaps)
            body.member("duplicates", health.duplicates)
            body.member("tracked", health.tracked)
            body.member("rssBytes", health.rssBytes)
            body.key("nodes")
            body.array(health.nodes) { node, writer in
                writer.object { entry in
                    entry.member("store", node.address.store)
                    entry.member("department", node.address.department)
                    entry.member("node", node.address.node)
                    entry.member("state", node.state.rawValue)
                    entry.member("clockSkewMs", node.clockSkew)
                }
            }
            body.member("database") { database in
                database.member("state", health.database.failing ? "failing" : "ok")
                database.member("queued", health.database.queued)
                database.member("error", orNull: health.database.error)
                database.member("since", orNull: health.database.since)
                database.member("surveySamplesDropped", health.database.surveySamplesDropped)
            }
            body.key("leases")
            body.array(health.leases) { lease, writer in
                writer.object { entry in
                    entry.member("store", lease.store)
                    entry.member("since", lease.since)
                    entry.member("heldSeconds", lease.heldSeconds)
                }
            }
            if !health.surveys.isEmpty {
                body.key("surveys")
                body.array(health.surveys) { survey, writer in writeSurveyStatus(survey, into: &writer) }
            }
            if !health.webhooks.isEmpty {
                body.key("webhooks")
                body.array(health.webhooks) { webhook, writer in
                    writer.object { entry in
                        entry.member("name", webhook.name)
                        entry.member("state", webhook.failingSince == nil ? "ok" : "failing")
                        entry.member("backlog", webhook.backlog)
                        entry.member("delivered", webhook.delivered)
                        entry.member("failed", webhook.failed)
                        entry.member("refused", webhook.refused)
                        entry.member("expired", webhook.expired)
                        entry.member("error", orNull: webhook.error)
                        entry.member("since", orNull: webhook.failingSince)
                    }
                }
            }
            if let fobs = health.fobs {
                body.member("fobs") { entry in
                    entry.member("count", fobs.count)
                    entry.member("unresolved", fobs.unresolved)
                }
            }
            if !health.webhookListsDiffer.isEmpty {
                body.key("webhookListsDiffer")
                body.array(health.webhookListsDiffer) { other, writer in
                    writer.object { entry in
                        entry.member("coordinator", other.coordinator)
                        entry.key("endpoints")
                        entry.array(other.endpoints) { name, writer in writer.string(name) }
                    }
                }
            }
        }
    }

    /// Reads a coordinator health report.
    public static func decodeCoordinatorHealth(_ bytes: [UInt8]) throws(WireError) -> CoordinatorHealth {
        try JSONReader.withVersion1Document(bytes) { body throws(WireError) in
            let dropped = try body.lenientIntegerMembers("dropped").mapValues { UInt64(clamping: $0) }
            var health = CoordinatorHealth(
                uptimeSeconds: try body.int("uptime"), batches: UInt64(clamping: try body.int("batches")),
                sightings: UInt64(clamping: try body.int("sightings")), events: UInt64(clamping: try body.int("events")),
                dropped: dropped, gaps: UInt64(clamping: try body.int("gaps")),
                duplicates: UInt64(clamping: try body.int("duplicates")), tracked: Int(try body.int("tracked")),
                rssBytes: Int(try body.int("rssBytes")), nodes: try decodeHealthNodes(body), database: try decodeHealthDatabase(body),
                rangingReports: UInt64(clamping: try body.optionalInt("rangingReports") ?? 0), leases: try decodeHealthLeases(body),
                surveys: try decodeHealthSurveys(body), webhooks: try decodeHealthWebhooks(body),
                webhookListsDiffer: try decodeHealthWebhookLists(body))
            if let fobs = try body.optionalObject("fobs") {
                health.fobs = .init(count: Int(try fobs.int("count")), unresolved: UInt64(clamping: try fobs.int("unresolved")))
            }
            return health
        }
    }

    private static func decodeHealthWebhookLists(_ body: JSONReader) throws(WireError) -> [CoordinatorHealth.WebhookListDifference] {
        var lists: [CoordinatorHealth.WebhookListDifference] = []
        try body.forEachObject("webhookListsDiffer", optional: true) { entry throws(WireError) in
            lists.append(.init(coordinator: try entry.string("coordinator"), endpoints: try entry.optionalStrings("endpoints")))
        }
        return lists
    }

    private static func decodeHealthWebhooks(_ body: JSONReader) throws(WireError) -> [CoordinatorHealth.Webhook] {
        var webhooks: [CoordinatorHealth.Webhook] = []
        try body.forEachObject("webhooks", optional: true) { entry throws(WireError) in
            var webhook = CoordinatorHealth.Webhook(name: try entry.string("name"), backlog: Int(try entry.int("backlog")))
            webhook.delivered = UInt64(clamping: try entry.int("delivered"))
            webhook.failed = UInt64(clamping: try entry.int("failed"))
            webhook.refused = UInt64(clamping: try entry.int("refused"))
            webhook.expired = UInt64(clamping: try entry.int("expired"))
            webhook.error = try entry.optionalString("error")
            webhook.failingSince = try entry.optionalInt("since").map { Timestamp(milliseconds: $0) }
            webhooks.append(webhook)
        }
        return webhooks
    }

    private static func decodeHealthSurveys(_ body: JSONReader) throws(WireError) -> [SurveyStatus] {
        var surveys: [SurveyStatus] = []
        try body.forEachObject("surveys", optional: true) { entry throws(WireError) in surveys.append(try decodeSurveyStatus(entry)) }
        return surveys
    }

    /// A surveyed store's status, as health and the presence snapshot carry it.
    static func writeSurveyStatus(_ survey: SurveyStatus, into writer: inout JSONStreamWriter) {
        writer.object { entry in
            entry.member("store", survey.store)
            entry.member("fittedAt", survey.fittedAt)
            entry.member("accuracy", survey.accuracy)
            entry.member("state", survey.stale ? "stale" : "fits")
            entry.member("checks", survey.checks)
            entry.member("share", survey.share)
            entry.member("message", survey.message)
            entry.key("drift")
            entry.array(survey.drift) { drift, writer in
                writer.object { item in
                    item.member("node", drift.node)
                    item.member("department", drift.department)
                    item.member("db", drift.db)
                }
            }
        }
    }

    static func decodeSurveyStatus(_ entry: JSONReader) throws(WireError) -> SurveyStatus {
        var drift: [SurveyStatus.Drift] = []
        try entry.forEachObject("drift", optional: true) { item throws(WireError) in
            drift.append(.init(node: try item.string("node"), department: try item.uint16("department"), db: try item.double("db")))
        }
        return SurveyStatus(
            store: try entry.uint16("store"), fittedAt: try entry.timestamp("fittedAt"), accuracy: try entry.double("accuracy"),
            checks: Int(try entry.int("checks")), share: try entry.double("share"), stale: try entry.string("state") == "stale",
            drift: drift)
    }

    private static func decodeHealthLeases(_ body: JSONReader) throws(WireError) -> [CoordinatorHealth.Lease] {
        var leases: [CoordinatorHealth.Lease] = []
        try body.forEachObject("leases", optional: true) { entry throws(WireError) in
            leases.append(
                .init(store: try entry.uint16("store"), since: try entry.timestamp("since"), heldSeconds: try entry.int("heldSeconds")))
        }
        return leases
    }

    private static func decodeHealthNodes(_ body: JSONReader) throws(WireError) -> [CoordinatorHealth.Node] {
        var nodes: [CoordinatorHealth.Node] = []
        try body.forEachObject("nodes", optional: true) { entry throws(WireError) in
            guard
                let address = NodeAddress(
                    store: try entry.uint16("store"), department: try entry.uint16("department"),
                    node: try entry.string("node"))
            else { throw .absurdValue(field: "\(entry.path).node", value: try entry.string("node")) }
            nodes.append(.init(address: address, state: try entry.linkState("state"), clockSkew: try entry.int("clockSkewMs")))
        }
        return nodes
    }

    private static func decodeHealthDatabase(_ body: JSONReader) throws(WireError) -> CoordinatorHealth.Database {
        guard body.contains("database") else { return .init() }
        let database = try body.object("database")
        return .init(
            failing: try database.string("state") == "failing", queued: Int(try database.int("queued")),
            error: try database.optionalString("error"), since: try database.optionalTimestamp("since"),
            surveySamplesDropped: Int(try database.optionalInt("surveySamplesDropped") ?? 0))
    }
}
