import BeaconMeshCore
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Members: imported, removed, forgotten, read (with what the coordinator works from).
extension PostgresRegistry {
    @discardableResult
    public func merge(_ records: [MemberRecord]) throws -> ImportSummary {
        try session.transaction { statements in
            var summary = ImportSummary()
            // In slices, each a handful of statements whatever its size (an import of 100,000 members).
            for start in stride(from: 0, to: records.count, by: 5000) {
                let slice = Array(records[start..<min(records.count, start + 5000)])
                let existing = Dictionary(
                    uniqueKeysWithValues: try fetch(ids: slice.map(\.id), statements).map { ($0.id, $0) })
                var changed: [MemberRecord] = []
                var events: [(RegistryEvent.Kind, String)] = []
                for record in slice {
                    var merged = record.keepingFob(of: existing[record.id])
                    if let known = existing[record.id] {
                        merged.profile.visits = max(known.profile.visits, record.profile.visits)
                        merged.profile.checkins = max(known.profile.checkins, record.profile.checkins)
                        merged.profile.lastVisitAt = [known.profile.lastVisitAt, record.profile.lastVisitAt].compactMap { $0 }.max()
                        merged.createdAt = known.createdAt ?? record.createdAt
                        if known.profile == merged.profile && Set(known.beacons) == Set(merged.beacons)
                            && known.createdAt == merged.createdAt && known.fob == merged.fob
                        {
                            summary.unchanged += 1
                            continue
                        }
                        summary.updated += 1
                        events.append((.updated, record.id))
                    } else {
                        summary.added += 1
                        events.append((.added, record.id))
                    }
                    changed.append(merged)
                }
                try store(changed, statements)
                try recordEvents(events, statements)
            }
            return summary
        }
    }

    /// Writes `records` whole (profile, fields, beacons), replacing what is stored under their ids.
    private func store(_ records: [MemberRecord], _ statements: PostgresSession.Statements) throws {
        guard !records.isEmpty else { return }
        let ids = records.map(\.id)
        let drinks = NullableColumn(records.map(\.profile.favoriteDrink), placeholder: "")
        let photos = NullableColumn(records.map(\.profile.photo), placeholder: "")
        let lastVisits = NullableColumn(records.map { $0.profile.lastVisitAt?.milliseconds }, placeholder: 0)
        let created = NullableColumn(records.map { $0.createdAt?.milliseconds }, placeholder: 0)
        try statements.execute(
            """
            INSERT INTO member (id, name, favorite_drink, photo, visits, checkins, last_visit_at, created_at)
            SELECT id, name, CASE WHEN has_drink THEN drink END, CASE WHEN has_photo THEN photo END, visits, checkins,
                CASE WHEN has_last THEN last_visit_at END, CASE WHEN has_created THEN created_at END
            FROM unnest(\(ids)::text[], \(records.map(\.profile.name))::text[],
                \(drinks.values)::text[], \(drinks.present)::bool[], \(photos.values)::text[], \(photos.present)::bool[],
                \(records.map { Int64($0.profile.visits) })::bigint[], \(records.map { Int64($0.profile.checkins) })::bigint[],
                \(lastVisits.values)::bigint[], \(lastVisits.present)::bool[], \(created.values)::bigint[], \(created.present)::bool[])
                AS m(id, name, drink, has_drink, photo, has_photo, visits, checkins, last_visit_at, has_last, created_at, has_created)
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, favorite_drink = excluded.favorite_drink,
                photo = excluded.photo, visits = excluded.visits, checkins = excluded.checkins,
                last_visit_at = excluded.last_visit_at, created_at = excluded.created_at
            """)
        try statements.execute("DELETE FROM member_field WHERE member = ANY(\(ids))")
        let fields = records.flatMap { record in record.profile.customFields.map { (record.id, $0.key, $0.value) } }
        if !fields.isEmpty {
            try statements.execute(
                """
                INSERT INTO member_field (member, name, value)
                SELECT * FROM unnest(\(fields.map(\.0))::text[], \(fields.map(\.1))::text[], \(fields.map(\.2))::text[])
                """)
        }
        try statements.execute("DELETE FROM beacon WHERE member = ANY(\(ids))")
        let beacons = records.flatMap { record in record.beacons.map { ($0.description, record.id) } }
        if !beacons.isEmpty {
            try statements.execute(
                """
                INSERT INTO beacon (key, member) SELECT * FROM unnest(\(beacons.map(\.0))::text[], \(beacons.map(\.1))::text[])
                ON CONFLICT (key) DO UPDATE SET member = excluded.member
                """)
        }
        for record in records {
            guard let fob = record.fob else { continue }
            try statements.execute(
                """
                INSERT INTO member_fob (member, sealed_key, rotation_exponent, counter_offset, handle)
                VALUES (\(record.id), \(ByteBuffer(bytes: fob.sealedKey)), \(Int32(fob.rotationExponent)), \(fob.offset),
                    \(Int64(bitPattern: fob.handle)))
                ON CONFLICT (member) DO UPDATE SET sealed_key = excluded.sealed_key, rotation_exponent = excluded.rotation_exponent,
                    counter_offset = excluded.counter_offset, handle = excluded.handle
                """)
        }
    }

    private func recordEvents(_ events: [(RegistryEvent.Kind, String)], _ statements: PostgresSession.Statements) throws {
        guard !events.isEmpty else { return }
        try statements.execute(
            """
            INSERT INTO registry_event (type, member, at)
            SELECT kind, member, \(Self.now()) FROM unnest(\(events.map(\.0.rawValue))::text[], \(events.map(\.1))::text[])
                WITH ORDINALITY AS e(kind, member, n) ORDER BY n
            """)
    }

    @discardableResult
    public func remove(id: String) throws -> Bool {
        try delete(id: id, as: .removed)
    }

    /// Deletes the member's row (their fields, beacons, visits and promo history go with it) and the survey samples of
    /// their beacons. PostgreSQL keeps a deleted row's bytes in its table file until vacuum reclaims the page
    /// (autovacuum does, soon after): no query, dump or replica shows them.
    @discardableResult
    public func forget(id: String) throws -> Bool {
        try delete(id: id, as: .forgotten)
    }

    private func delete(id: String, as kind: RegistryEvent.Kind) throws -> Bool {
        try session.transaction { statements in
            // Survey samples name a beacon, not a member: those of a forgotten member's beacons go first, while the
            // beacons still say whose they are.
            if kind == .forgotten { try deleteSurveySamples(ofMember: id, statements) }
            guard try statements.execute("DELETE FROM member WHERE id = \(id)") > 0 else { return false }
            if kind == .forgotten {
                // The change log forgets her too, and says "anyone may have changed" instead: it names no one.
                try statements.execute("DELETE FROM member_change WHERE member = \(id)")
                // Webhook bodies not yet delivered that carry her name or photo go too (an id-only one is still owed).
                try statements.execute("DELETE FROM webhook_outbox WHERE member = \(id)")
                try statements.query(
                    PostgresQuery(
                        unsafeSQL: """
                            WITH logged AS (INSERT INTO member_change (member) VALUES ('\(RegistryChange.everyoneLogged)') RETURNING seq)
                            SELECT pg_notify('\(PostgresSchema.channel)', pg_backend_pid() || ':' || seq) FROM logged
                            """))
            }
            try recordEvents([(kind, id)], statements)
            return true
        }
    }

    public func allMembers() throws -> [MemberRecord] {
        try session.run { statements in try fetch(ids: nil, statements) }
    }

    public func members(ids: Set<String>) throws -> [MemberRecord] {
        guard !ids.isEmpty else { return [] }
        return try session.run { statements in try fetch(ids: Array(ids), statements) }
    }

    /// Members by id (all if `nil`), ordered by id, with their fobs: four queries whatever their number.
    private func fetch(ids: [String]?, _ statements: PostgresSession.Statements) throws -> [MemberRecord] {
        let all = ids == nil
        let wanted = ids ?? []
        var fields: [String: [String: String]] = [:]
        for row in try statements.query(
            "SELECT member, name, value FROM member_field WHERE \(all) OR member = ANY(\(wanted))")
        {
            let (member, name, value) = try row.decode((String, String, String).self)
            fields[member, default: [:]][name] = value
        }
        var beacons: [String: [BeaconKey]] = [:]
        for row in try statements.query(
            "SELECT member, key FROM beacon WHERE \(all) OR member = ANY(\(wanted)) ORDER BY member, key")
        {
            let (member, key) = try row.decode((String, String).self)
            if let key = BeaconKey(key) { beacons[member, default: []].append(key) }
        }
        var fobs: [String: MemberFob] = [:]
        for row in try statements.query(
            """
            SELECT member, sealed_key, rotation_exponent, counter_offset, handle FROM member_fob
            WHERE \(all) OR member = ANY(\(wanted))
            """)
        {
            let (member, sealed, exponent, offset, handle) = try row.decode((String, ByteBuffer, Int32, Int64, Int64).self)
            fobs[member] = MemberFob(
                sealedKey: Array(buffer: sealed), rotationExponent: UInt8(clamping: exponent), offset: offset,
                handle: UInt64(bitPattern: handle))
        }
        return try statements.query(
            """
            SELECT id, name, favorite_drink, photo, visits, checkins, last_visit_at, created_at FROM member
            WHERE \(all) OR id = ANY(\(wanted)) ORDER BY id
            """
        ).map { row in
            let (id, name, drink, photo, visits, checkins, lastVisitAt, createdAt) = try row.decode(
                (String, String, String?, String?, Int64, Int64, Int64?, Int64?).self)
            let profile = MemberProfile(
                id: id, name: name, favoriteDrink: drink, visits: Int(visits),
                lastVisitAt: lastVisitAt.map(Timestamp.init(milliseconds:)), photo: photo,
                customFields: fields[id] ?? [:], checkins: Int(checkins))
            return MemberRecord(
                profile: profile, beacons: beacons[id] ?? [], createdAt: createdAt.map(Timestamp.init(milliseconds:)), fob: fobs[id])
        }
    }

    public func contents() throws -> RegistryContents {
        try session.run { statements in
            let members = try fetch(ids: nil, statements)
            var owners: [BeaconKey: String] = [:]
            for member in members {
                for beacon in member.beacons { owners[beacon] = member.id }
            }
            return RegistryContents(
                profiles: Dictionary(uniqueKeysWithValues: members.map { ($0.id, $0.profile) }), beaconOwners: owners,
                promoFires: try fetchPromoFires(statements),
                fobs: Dictionary(uniqueKeysWithValues: members.compactMap { member in member.fob.map { (member.id, $0) } }))
        }
    }
}
