import BeaconMeshCore
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Loyalty: the decisions' changes written, the saved visits, promo history, check-ins and the registry events' outbox.
extension PostgresRegistry {
    public func apply(_ changes: RegistryChanges, batch: String?, stores: Set<UInt16>?) throws {
        guard !changes.isEmpty else { return }
        try session.transaction { statements in
            if let batch {
                let fresh = try statements.execute(
                    "INSERT INTO applied_write (id, at) VALUES (\(batch), \(Self.now())) ON CONFLICT (id) DO NOTHING")
                // Applied already: the commit went through and only its answer was lost.
                guard fresh > 0 else { return }
            }
            let scope = stores.map { $0.map { Int32($0) } }
            // Without leases (the `members` command, a coordinator's own tests) no holder is anybody else.
            let holder = changes.decidedBy ?? ""
            let fenceVisits = changes.decidedBy != nil
            let saved = changes.visits.values.compactMap { $0 }
            if !saved.isEmpty {
                let left = NullableColumn(saved.map { $0.leftAt?.milliseconds }, placeholder: 0)
                try statements.execute(
                    """
                    INSERT INTO visit (member, store, arrived_at, department, in_department_since, last_seen, left_at, proximity)
                    SELECT member, store, arrived_at, department, in_department_since, last_seen,
                        CASE WHEN has_left THEN left_at END, proximity
                    FROM unnest(\(saved.map(\.member))::text[], \(saved.map { Int32($0.store) })::integer[],
                        \(saved.map(\.arrivedAt.milliseconds))::bigint[], \(saved.map { Int32($0.department) })::integer[],
                        \(saved.map(\.inDepartmentSince.milliseconds))::bigint[], \(saved.map(\.lastSeen.milliseconds))::bigint[],
                        \(left.values)::bigint[], \(left.present)::bool[], \(saved.map(\.proximity.rawValue))::text[])
                        AS v(member, store, arrived_at, department, in_department_since, last_seen, left_at, has_left, proximity)
                    WHERE EXISTS (SELECT 1 FROM member WHERE id = v.member)
                        AND (NOT \(fenceVisits) OR NOT EXISTS (SELECT 1 FROM store_lease l WHERE l.store = v.store AND l.holder <> \(holder)))
                    ON CONFLICT (member, store) DO UPDATE SET arrived_at = excluded.arrived_at,
                        department = excluded.department, in_department_since = excluded.in_department_since,
                        last_seen = excluded.last_seen, left_at = excluded.left_at, proximity = excluded.proximity
                    """)
            }
            let ended = changes.visits.filter { $0.value == nil }.map(\.key)
            if !ended.isEmpty {
                try statements.execute(
                    """
                    DELETE FROM visit v WHERE member = ANY(\(ended)) AND (\(scope == nil) OR store = ANY(\(scope ?? [])))
                        AND (NOT \(fenceVisits) OR NOT EXISTS (SELECT 1 FROM store_lease l WHERE l.store = v.store AND l.holder <> \(holder)))
                    """)
            }
            let counts = changes.counts.sorted { $0.key < $1.key }
            if !counts.isEmpty {
                try statements.execute(
                    """
                    UPDATE member m SET visits = m.visits + c.n, last_visit_at = GREATEST(COALESCE(m.last_visit_at, 0), c.at)
                    FROM unnest(\(counts.map(\.key))::text[], \(counts.map { Int64($0.value.visits) })::bigint[],
                        \(counts.map(\.value.at.milliseconds))::bigint[]) AS c(id, n, at)
                    WHERE m.id = c.id
                    """)
            }
            let checkins = changes.checkins.sorted { $0.key < $1.key }
            if !checkins.isEmpty {
                try statements.execute(
                    """
                    UPDATE member m SET checkins = m.checkins + c.n
                    FROM unnest(\(checkins.map(\.key))::text[], \(checkins.map { Int64($0.value) })::bigint[]) AS c(id, n)
                    WHERE m.id = c.id
                    """)
            }
            if !changes.checkinRequests.isEmpty {
                try statements.execute(
                    """
                    INSERT INTO checkin_request (id, at)
                    SELECT * FROM unnest(\(Array(changes.checkinRequests.keys))::text[],
                        \(changes.checkinRequests.values.map(\.milliseconds))::bigint[])
                    ON CONFLICT (id) DO NOTHING
                    """)
            }
            if let before = changes.forgetCheckinRequestsBefore {
                try statements.execute("DELETE FROM checkin_request WHERE at < \(before.milliseconds)")
                try statements.execute("DELETE FROM applied_write WHERE at < \(before.milliseconds)")
            }
            if !changes.publishedRegistryEvents.isEmpty {
                try statements.execute("DELETE FROM registry_event WHERE seq = ANY(\(Array(changes.publishedRegistryEvents)))")
            }
            if let before = changes.forgetHistoryBefore {
                try statements.execute("DELETE FROM visit_history WHERE arrived_at < \(before.milliseconds)")
            }
            try keep(Array(changes.history.values), statements)
            try insertSurveySamples(changes.surveySamples, statements)
            try keepSurveyMarks(changes.surveyMarks, statements)
            for (handle, offset) in changes.fobOffsets {
                try statements.execute("UPDATE member_fob SET counter_offset = \(offset) WHERE handle = \(Int64(bitPattern: handle))")
            }
            try insertWebhookDeliveries(changes.webhookDeliveries, statements)
            let guests = changes.guestCounts.sorted {
                ($0.key.store, $0.key.hour, $0.key.department) < ($1.key.store, $1.key.hour, $1.key.department)
            }
            if !guests.isEmpty {
                try statements.execute(
                    """
                    INSERT INTO guest_count (store, hour, department, visits, dwell_ms)
                    SELECT * FROM unnest(\(guests.map { Int32($0.key.store) })::integer[], \(guests.map(\.key.hour.milliseconds))::bigint[],
                        \(guests.map { Int32($0.key.department) })::integer[], \(guests.map { Int64($0.value.visits) })::bigint[],
                        \(guests.map(\.value.dwell.wholeMilliseconds))::bigint[])
                    ON CONFLICT (store, hour, department) DO UPDATE SET visits = guest_count.visits + excluded.visits,
                        dwell_ms = guest_count.dwell_ms + excluded.dwell_ms
                    """)
            }
            let fires = Array(changes.promoFires)
            if !fires.isEmpty {
                try statements.execute(
                    """
                    INSERT INTO promo_fire (member, promo, store, fired_at)
                    SELECT f.* FROM unnest(\(fires.map(\.key.member))::text[], \(fires.map(\.key.promo))::text[],
                        \(fires.map { Int32($0.key.store) })::integer[], \(fires.map(\.value.milliseconds))::bigint[])
                        AS f(member, promo, store, fired_at)
                    WHERE EXISTS (SELECT 1 FROM member WHERE id = f.member)
                    ON CONFLICT (member, promo) DO UPDATE SET store = excluded.store, fired_at = excluded.fired_at
                    """)
            }
        }
    }

    public func loadVisits(stores: Set<UInt16>?) throws -> [PresenceEngine.Visit] {
        let scope = (stores ?? []).map { Int32($0) }
        return try session.run { statements in
            try statements.query(
                """
                SELECT member, store, arrived_at, department, in_department_since, last_seen, left_at, proximity FROM visit
                WHERE \(stores == nil) OR store = ANY(\(scope))
                """
            ).map { row in
                let (member, store, arrivedAt, department, since, lastSeen, leftAt, proximity) = try row.decode(
                    (String, Int32, Int64, Int32, Int64, Int64, Int64?, String).self)
                return PresenceEngine.Visit(
                    member: member, store: UInt16(store), arrivedAt: Timestamp(milliseconds: arrivedAt),
                    department: UInt16(department), inDepartmentSince: Timestamp(milliseconds: since),
                    lastSeen: Timestamp(milliseconds: lastSeen), leftAt: leftAt.map(Timestamp.init(milliseconds:)),
                    proximity: Proximity(rawValue: proximity) ?? .unknown)
            }
        }
    }

    public func promoFires() throws -> [String: [String: Timestamp]] {
        try session.run { statements in try fetchPromoFires(statements) }
    }

    func fetchPromoFires(_ statements: PostgresSession.Statements) throws -> [String: [String: Timestamp]] {
        var fires: [String: [String: Timestamp]] = [:]
        for row in try statements.query("SELECT member, promo, fired_at FROM promo_fire") {
            let (member, promo, at) = try row.decode((String, String, Int64).self)
            fires[member, default: [:]][promo] = Timestamp(milliseconds: at)
        }
        return fires
    }

    public func checkinRequests(since time: Timestamp) throws -> Set<String> {
        try session.run { statements in
            Set(try statements.query("SELECT id FROM checkin_request WHERE at >= \(time.milliseconds)").map { try $0.decode(String.self) })
        }
    }

    public func claimRegistryEvents(for coordinator: String) throws -> [PendingRegistryEvent] {
        try session.transaction { statements in
            try statements.execute("UPDATE registry_event SET claimed_by = \(coordinator) WHERE claimed_by IS NULL")
            return try statements.query(
                "SELECT seq, type, member, at FROM registry_event WHERE claimed_by = \(coordinator) ORDER BY seq"
            ).compactMap { row in
                let (seq, type, member, at) = try row.decode((Int64, String, String, Int64).self)
                guard let kind = RegistryEvent.Kind(rawValue: type) else { return nil }
                return PendingRegistryEvent(seq: seq, kind: kind, member: member, at: Timestamp(milliseconds: at))
            }
        }
    }
}
