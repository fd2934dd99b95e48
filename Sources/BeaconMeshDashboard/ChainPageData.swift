import BeaconMeshCore
import BeaconMeshWire

/// What the chain overview receives in each server-sent event: every store heard with its headcount, departments,
/// nodes, the coordinator that decides for it and those standing by, and whether it needs attention (quiet, nodes
/// offline, coordinator offline or unknown, no coordinator holding it).
///
/// Only the stores in `stores` are in it: totals count only them, and a coordinator is listed only with those of its
/// stores, and only when it serves one of them, so a signed-in user learns nothing of another store.
public enum ChainPageData {
    public static func json(_ board: ChainBoard, at now: Timestamp, stores visible: StoreAccess = .all) -> JSONValue {
        var stores: [JSONValue] = []
        var totalMembers = 0
        var totalGuests = 0
        var totalOffline = 0
        var needAttention = 0
        for store in board.storesInOrder where visible.allows(store.store) {
            let headcount = store.headcount
            let offline = store.offlineNodeCount
            let coordinator = board.coordinator(of: store.store)
            let quiet = store.isQuiet(at: now)
            let coordinatorDown = coordinator?.status.state != .online
            let held = board.holder(of: store.store) != nil
            let attention = quiet || offline > 0 || coordinatorDown || !held
            totalMembers += headcount.members
            totalGuests += headcount.guests
            totalOffline += offline
            if attention { needAttention += 1 }
            let departments: [JSONValue] = (store.model.snapshot?.occupancy ?? [:]).sorted { $0.key < $1.key }.map { department, counts in
                .object([
                    ("department", .int(Int64(department))), ("name", .string(store.model.departmentName(department))),
                    ("members", .int(Int64(counts.members))), ("guests", .int(Int64(counts.guests))),
                ])
            }
            stores.append(
                .object([
                    ("store", .int(Int64(store.store))),
                    ("name", .string(store.name)),
                    ("members", .int(Int64(headcount.members))),
                    ("guests", .int(Int64(headcount.guests))),
                    ("departments", .array(departments)),
                    ("nodesOnline", .int(Int64(store.nodes.count - offline))),
                    ("nodesOffline", .int(Int64(offline))),
                    (
                        "offlineNodes",
                        .array(
                            store.nodesInOrder.filter { $0.state == .offline }.map {
                                .string("\(store.model.departmentName($0.key.department)) · \($0.key.node)")
                            })
                    ),
                    ("coordinator", CoordinatorData.json(coordinator)),
                    ("held", .bool(held)),
                    ("standby", .array(board.standbys(of: store.store).map { .string($0) })),
                    ("lastHeard", store.lastHeard.map { .int($0.milliseconds) } ?? .null),
                    ("quiet", .bool(quiet)),
                    ("survey", SurveyStatusData.json(store.model.snapshot?.survey)),
                    ("attention", .bool(attention)),
                ]))
        }
        let coordinators: [JSONValue] = board.coordinators.sorted { $0.key < $1.key }.compactMap { id, status in
            let served = status.stores.filter { visible.allows($0) }
            if served.isEmpty && visible != .all { return nil }
            return .object([
                ("id", .string(id)), ("state", .string(status.state.rawValue)),
                ("stores", .array(served.map { .int(Int64($0)) })),
                ("active", .array(status.active.filter { visible.allows($0) }.map { .int(Int64($0)) })),
                ("startedAt", .int(status.startedAt.milliseconds)),
                (
                    "webhooks",
                    .array(
                        (board.webhooks[id] ?? []).map { webhook in
                            .object([
                                ("name", .string(webhook.name)), ("state", .string(webhook.failingSince == nil ? "ok" : "failing")),
                                ("backlog", .int(Int64(webhook.backlog))), ("error", webhook.error.map { .string($0) } ?? .null),
                                ("since", webhook.failingSince.map { .int($0.milliseconds) } ?? .null),
                            ])
                        })
                ),
            ])
        }
        let stale = board.isLinkLost
        return .object([
            ("now", .int(now.milliseconds)),
            ("broker", .string(board.broker)),
            ("connection", ConnectionData.json(board.connection)),
            ("stale", .bool(stale)),
            (
                "totals",
                .object([
                    ("stores", .int(Int64(stores.count))), ("members", .int(Int64(totalMembers))),
                    ("guests", .int(Int64(totalGuests))), ("nodesOffline", .int(Int64(totalOffline))),
                    ("needAttention", .int(Int64(needAttention))),
                ])
            ),
            ("stores", .array(stores)),
            ("coordinators", .array(coordinators)),
        ])
    }
}
