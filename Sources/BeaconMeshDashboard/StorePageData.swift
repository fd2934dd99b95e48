import BeaconMeshCore
import BeaconMeshWire

/// What a store's live page receives in each server-sent event: the store as the monitor's model and the board
/// see it at `now`, as JSON the page's script renders. Member photos go once per page connection (`photosSent`),
/// as they are the bulk of the bytes and rarely change.
public enum StorePageData {
    public static func json(
        _ board: StoreBoard, coordinator: (id: String, status: CoordinatorStatus)?, at now: Timestamp,
        photosSent: inout [String: Int]
    ) -> JSONValue {
        let model = board.model
        let snapshot = model.snapshot
        var members: [JSONValue] = []
        for present in model.membersByArrival {
            let member = present.member
            let photo = member.photo.flatMap { $0.hasPrefix("data:image/") ? $0 : nil }
            var fields: [(String, JSONValue)] = [
                ("id", .string(member.id)),
                ("name", .string(member.name)),
                ("initials", .string(MemberInitials.of(member.name))),
                ("favoriteDrink", member.favoriteDrink.map { .string($0) } ?? .null),
                ("visits", .int(Int64(member.visits))),
                ("department", present.department.map { .int(Int64($0)) } ?? .null),
                ("departmentName", present.department.map { .string(present.departmentName ?? model.departmentName($0)) } ?? .null),
                ("confidence", present.confidence.map { .double($0) } ?? .null),
                ("proximity", .string(present.proximity.rawValue)),
                ("arrivedAt", .int(present.arrivedAt.milliseconds)),
                ("inDepartmentSince", .int(present.inDepartmentSince.milliseconds)),
                ("lastSeen", .int(present.lastSeen.milliseconds)),
                ("highlighted", .bool(model.isHighlighted(member.id, at: now))),
                ("hasPhoto", .bool(photo != nil)),
            ]
            if let photo, photosSent[member.id] != photo.hashValue {
                photosSent[member.id] = photo.hashValue
                fields.append(("photo", .string(photo)))
            }
            members.append(.object(fields))
        }
        var occupancy: [JSONValue] = []
        for (department, counts) in (snapshot?.occupancy ?? [:]).sorted(by: { $0.key < $1.key }) {
            occupancy.append(
                .object([
                    ("department", .int(Int64(department))), ("name", .string(model.departmentName(department))),
                    ("members", .int(Int64(counts.members))), ("guests", .int(Int64(counts.guests))),
                ]))
        }
        let nodes: [JSONValue] = board.nodesInOrder.map { node in
            .object([
                ("department", .int(Int64(node.key.department))), ("departmentName", .string(model.departmentName(node.key.department))),
                ("node", .string(node.key.node)), ("state", .string(node.state.rawValue)),
            ])
        }
        let events: [JSONValue] = board.recentEvents.map { event in
            .object([
                ("id", .string(event.id)), ("type", .string(event.type)), ("at", .int(event.at.milliseconds)),
                ("text", .string(EventText.describe(event, departmentName: model.departmentName))),
                ("why", EventText.why(event).map { .string($0) } ?? .null),
            ])
        }
        let promos: [JSONValue] = model.recentPromos.map { promo in
            .object([
                ("member", .string(promo.memberName)), ("department", .string(promo.departmentName)),
                ("title", .string(promo.title)), ("at", .int(promo.at.milliseconds)),
            ])
        }
        let alerts: [JSONValue] = board.recentAlerts.map { alert in
            .object([
                ("id", .string(alert.id)), ("rule", .string(alert.rule)), ("kind", .string(alert.kind.rawValue)),
                ("at", .int(alert.at.milliseconds)), ("text", .string(alert.text)),
                ("member", alert.member.map { .string($0.name) } ?? .null), ("node", alert.node.map { .string($0) } ?? .null),
            ])
        }
        let headcount = board.headcount
        return .object([
            ("store", .int(Int64(board.store))),
            ("name", .string(board.name)),
            ("now", .int(now.milliseconds)),
            ("broker", .string(model.broker)),
            ("connection", ConnectionData.json(model.connection)),
            ("stale", .bool(model.isStale)),
            ("hasSnapshot", .bool(snapshot != nil)),
            ("updatedAt", snapshot.map { .int($0.updatedAt.milliseconds) } ?? .null),
            ("lastHeard", board.lastHeard.map { .int($0.milliseconds) } ?? .null),
            ("quiet", .bool(board.isQuiet(at: now))),
            ("presenceChange", .bool(model.showsPresenceChange(at: now))),
            ("memberCount", .int(Int64(headcount.members))),
            ("guestCount", .int(Int64(headcount.guests))),
            ("members", .array(members)),
            ("occupancy", .array(occupancy)),
            ("nodes", .array(nodes)),
            ("events", .array(events)),
            ("promos", .array(promos)),
            ("alerts", .array(alerts)),
            ("coordinator", CoordinatorData.json(coordinator)),
            ("survey", SurveyStatusData.json(snapshot?.survey)),
        ])
    }
}

/// A surveyed store's survey as the pages show it: `{"state":"fits"|"stale","message":"…","accuracy":0.97}`, or null
/// for a store decided without one.
enum SurveyStatusData {
    static func json(_ survey: SurveyStatus?) -> JSONValue {
        guard let survey else { return .null }
        return .object([
            ("state", .string(survey.stale ? "stale" : "fits")), ("message", .string(survey.message)),
            ("accuracy", .double(survey.accuracy)), ("fittedAt", .int(survey.fittedAt.milliseconds)),
        ])
    }
}

/// The broker link as the pages show it: `{"state":"connected"}`, `{"state":"lost","since":…}`.
enum ConnectionData {
    static func json(_ connection: MonitorModel.Connection) -> JSONValue {
        switch connection {
        case .connecting: return .object([("state", .string("connecting"))])
        case .connected: return .object([("state", .string("connected"))])
        case .lost(let since): return .object([("state", .string("lost")), ("since", .int(since.milliseconds))])
        }
    }
}

/// A coordinator's status as the pages show it, or `null` when no coordinator says it serves the store.
enum CoordinatorData {
    static func json(_ coordinator: (id: String, status: CoordinatorStatus)?) -> JSONValue {
        guard let coordinator else { return .null }
        return .object([
            ("id", .string(coordinator.id)), ("state", .string(coordinator.status.state.rawValue)),
            ("startedAt", .int(coordinator.status.startedAt.milliseconds)),
        ])
    }
}
