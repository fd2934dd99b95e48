import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshWire

/// Registry writes not yet made, as the local cache keeps them (`CoordinatorCacheDocument.PendingWrite`), so that a
/// restart while the database is away loses none: saved and ended visits, visit and check-in counts, promo firings,
/// check-in requests handled, guest counts, registry events published, webhook deliveries owed, and the forgetting of
/// old rows. The visit history's records, survey samples and fob offsets are not kept (the history is rewritten as
/// visits go on; a survey walked while the database was away is walked again; a fob is followed again as it is heard).
extension RegistryChanges {
    var cacheValue: JSONValue {
        var members: [(String, JSONValue)] = []
        members.append(
            (
                "visits",
                .array(
                    visits.sorted { $0.key < $1.key }.map { member, visit in
                        guard let visit else { return .object([("member", .string(member)), ("ended", .bool(true))]) }
                        return .object([
                            ("member", .string(member)), ("store", .int(Int64(visit.store))),
                            ("arrivedAt", .int(visit.arrivedAt.milliseconds)),
                            ("department", .int(Int64(visit.department))),
                            ("inDepartmentSince", .int(visit.inDepartmentSince.milliseconds)),
                            ("lastSeen", .int(visit.lastSeen.milliseconds)),
                            ("leftAt", visit.leftAt.map { .int($0.milliseconds) } ?? .null),
                            ("proximity", .string(visit.proximity.rawValue)),
                        ])
                    })
            ))
        members.append(
            (
                "counts",
                .array(
                    counts.sorted { $0.key < $1.key }.map {
                        .object([
                            ("member", .string($0.key)), ("visits", .int(Int64($0.value.visits))), ("at", .int($0.value.at.milliseconds)),
                        ])
                    })
            ))
        members.append(
            (
                "promoFires",
                .array(
                    promoFires.map {
                        .object([
                            ("member", .string($0.key.member)), ("promo", .string($0.key.promo)), ("store", .int(Int64($0.key.store))),
                            ("at", .int($0.value.milliseconds)),
                        ])
                    })
            ))
        members.append(
            (
                "checkins",
                .array(
                    checkins.sorted { $0.key < $1.key }.map { .object([("member", .string($0.key)), ("count", .int(Int64($0.value)))]) })
            ))
        members.append(
            (
                "checkinRequests",
                .array(
                    checkinRequests.sorted { $0.key < $1.key }.map {
                        .object([("id", .string($0.key)), ("at", .int($0.value.milliseconds))])
                    })
            ))
        members.append(
            (
                "guestCounts",
                .array(
                    guestCounts.map {
                        .object([
                            ("store", .int(Int64($0.key.store))), ("hour", .int($0.key.hour.milliseconds)),
                            ("department", .int(Int64($0.key.department))), ("visits", .int(Int64($0.value.visits))),
                            ("dwell", .int(Int64($0.value.dwell.wholeMilliseconds))),
                        ])
                    })
            ))
        members.append(("publishedRegistryEvents", .array(publishedRegistryEvents.sorted().map { .int($0) })))
        members.append(
            (
                "webhookDeliveries",
                .array(
                    webhookDeliveries.map {
                        .object([
                            ("endpoint", .string($0.endpoint)), ("store", .int(Int64($0.store))), ("id", .string($0.eventID)),
                            ("body", .string(String(decoding: $0.body, as: UTF8.self))),
                            ("member", $0.personalDataOf.map { .string($0) } ?? .null), ("at", .int($0.createdAt.milliseconds)),
                        ])
                    })
            ))
        members.append(("forgetCheckinRequestsBefore", forgetCheckinRequestsBefore.map { .int($0.milliseconds) } ?? .null))
        members.append(("forgetHistoryBefore", forgetHistoryBefore.map { .int($0.milliseconds) } ?? .null))
        members.append(("decidedBy", decidedBy.map { .string($0) } ?? .null))
        return .object(members)
    }

    /// The changes `value` (as `cacheValue` wrote them); `nil` when it is not their shape.
    init?(cacheValue value: JSONValue) {
        self.init()
        guard case .object = value else { return nil }
        func items(_ key: String) -> [JSONValue]? {
            switch value[key] {
            case .array(let items): items
            case nil, .null: []
            default: nil
            }
        }
        guard let visits = items("visits"), let counts = items("counts"), let fires = items("promoFires"),
            let checkins = items("checkins"), let requests = items("checkinRequests"), let guests = items("guestCounts"),
            let published = items("publishedRegistryEvents")
        else { return nil }
        for item in visits {
            guard let member = item["member"]?.text else { return nil }
            if item["ended"] == .bool(true) {
                endVisit(of: member)
                continue
            }
            guard let store = item["store"]?.store, let arrived = item["arrivedAt"]?.time, let department = item["department"]?.store,
                let since = item["inDepartmentSince"]?.time, let seen = item["lastSeen"]?.time,
                let proximity = item["proximity"]?.text.flatMap(Proximity.init(rawValue:))
            else { return nil }
            save(
                PresenceEngine.Visit(
                    member: member, store: store, arrivedAt: arrived, department: department, inDepartmentSince: since, lastSeen: seen,
                    leftAt: item["leftAt"]?.time, proximity: proximity))
        }
        for item in counts {
            guard let member = item["member"]?.text, let count = item["visits"]?.number, let at = item["at"]?.time else { return nil }
            countVisit(of: member, visits: Int(count), at: at)
        }
        for item in fires {
            guard let member = item["member"]?.text, let promo = item["promo"]?.text, let store = item["store"]?.store,
                let at = item["at"]?.time
            else { return nil }
            promoFired(promo, member: member, store: store, at: at)
        }
        for item in checkins {
            guard let member = item["member"]?.text, let count = item["count"]?.number else { return nil }
            countCheckin(of: member, count: Int(count))
        }
        for item in requests {
            guard let id = item["id"]?.text, let at = item["at"]?.time else { return nil }
            handledCheckinRequest(id, at: at)
        }
        for item in guests {
            guard let store = item["store"]?.store, let hour = item["hour"]?.time, let department = item["department"]?.store,
                let count = item["visits"]?.number, let dwell = item["dwell"]?.number
            else { return nil }
            addGuests(.init(visits: Int(count), dwell: .milliseconds(dwell)), at: .init(store: store, hour: hour, department: department))
        }
        for item in published {
            guard let seq = item.number else { return nil }
            registryEventPublished(seq)
        }
        for item in items("webhookDeliveries") ?? [] {
            guard let endpoint = item["endpoint"]?.text, let store = item["store"]?.store, let id = item["id"]?.text,
                let body = item["body"]?.text, let at = item["at"]?.time
            else { return nil }
            queueWebhook(
                WebhookDelivery(
                    endpoint: endpoint, store: store, eventID: id, body: Array(body.utf8), personalDataOf: item["member"]?.text,
                    createdAt: at))
        }
        if let before = value["forgetCheckinRequestsBefore"]?.time { forgetCheckinRequests(before: before) }
        if let before = value["forgetHistoryBefore"]?.time { forgetHistory(before: before) }
        decidedBy = value["decidedBy"]?.text
    }
}

extension JSONValue {
    fileprivate var text: String? {
        if case .string(let text) = self { text } else { nil }
    }

    fileprivate var number: Int64? {
        if case .int(let number) = self { number } else { nil }
    }

    fileprivate var time: Timestamp? { number.map { Timestamp(milliseconds: $0) } }

    fileprivate var store: UInt16? { number.flatMap { UInt16(exactly: $0) } }
}
