import BeaconMeshCore
import Foundation
import GRDB
import Testing

@testable import BeaconMeshRegistry

private let header = "id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt"
private let uuid = "0cf052c2-97ca-407c-84f8-b62aac4e9020"
private let hour: Int64 = 3_600_000
/// A Monday, 00:00 UTC.
private let day: Int64 = 1_763_942_400_000

private func at(_ milliseconds: Int64) -> Timestamp { Timestamp(milliseconds: milliseconds) }

private func members(_ ids: [String]) throws -> [MemberRecord] {
    try MembersCSV.parse(
        ([header] + ids.enumerated().map { "\($0.element),Member \($0.element),,ibeacon:\(uuid):1:\($0.offset + 1),,0,," })
            .joined(separator: "\n"), file: "m.csv")
}

/// A finished visit of `member` to store 1, arriving at `start` (ms), through `stops` (department, seconds each).
private func visit(
    _ member: String, number: Int = 2, start: Int64, stops: [(UInt16, Int64)], offers: [(String, UInt16, Int64)] = [],
    checkins: [Int64] = [], store: UInt16 = 1
) -> VisitRecord {
    var time = start
    var record = VisitRecord(member: member, store: store, arrivedAt: at(start), number: number)
    for (department, seconds) in stops {
        record.stops.append(.init(department: department, name: "Dept \(department)", enteredAt: at(time), dwell: .seconds(seconds)))
        time += seconds * 1000
    }
    record.leftAt = at(time)
    record.offers = offers.map { .init(promo: $0.0, department: $0.1, at: at(start + $0.2 * 1000)) }
    record.checkins = checkins.map { .init(department: 6, at: at(start + $0 * 1000)) }
    return record
}

@Suite("Visit history, on SQLite and on PostgreSQL")
struct VisitHistoryTests {
    @Test("a visit written as it goes on and again when it ends is kept once, as it ended", arguments: Backend.allCases)
    func visitKeptOnce(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        try registry.merge(try members(["ana"]))
        var open = VisitRecord(
            member: "ana", store: 1, arrivedAt: at(day), number: 1,
            stops: [.init(department: 10, name: "Clothing", enteredAt: at(day))])
        var changes = RegistryChanges()
        changes.record(open)
        try registry.apply(changes, batch: "w-1", stores: nil)
        #expect(try registry.openHistory(stores: [1]).map(\.key) == [open.key])
        #expect(try registry.openHistory(stores: [2]).isEmpty)
        open.stops[0].dwell = .seconds(60)
        open.stops.append(.init(department: 20, name: "Housewares", enteredAt: at(day + 60_000), dwell: .seconds(30)))
        open.offers = [.init(promo: "kitchen", department: 20, at: at(day + 70_000))]
        open.checkins = [.init(department: 20, at: at(day + 80_000))]
        open.leftAt = at(day + 90_000)
        changes = RegistryChanges()
        changes.record(open)
        try registry.apply(changes, batch: "w-2", stores: nil)
        try registry.apply(changes, batch: "w-3", stores: nil)
        #expect(try registry.history(store: 1, from: at(day), to: at(day + hour)) == [open])
        #expect(try registry.openHistory(stores: nil).isEmpty)
    }

    @Test("history of a member forgotten while it waited to be written is never written", arguments: Backend.allCases)
    func forgottenMemberNotWritten(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        try registry.merge(try members(["ana", "ben"]))
        try registry.forget(id: "ana")
        var changes = RegistryChanges()
        changes.record(visit("ana", start: day, stops: [(10, 60)]))
        changes.record(visit("ben", start: day, stops: [(10, 60)]))
        try registry.apply(changes)
        #expect(try registry.history(store: 1, from: at(0), to: at(day * 2)).map(\.member) == ["ben"])
    }

    @Test("retention deletes member visits that began before the limit, and keeps guest counts", arguments: Backend.allCases)
    func retentionDeletes(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        try registry.merge(try members(["ana"]))
        var changes = RegistryChanges()
        changes.record(visit("ana", start: day - 400 * 24 * hour, stops: [(10, 60)]))
        changes.record(visit("ana", start: day - 10 * 24 * hour, stops: [(10, 60)], checkins: [30]))
        changes.countGuest(GuestVisit(store: 1, department: 10, arrivedAt: at(day - 400 * 24 * hour), dwell: .seconds(40)))
        try registry.apply(changes)
        var retention = RegistryChanges()
        retention.forgetHistory(before: at(day - 365 * 24 * hour))
        try registry.apply(retention)
        let kept = try registry.history(store: 1, from: at(0), to: at(day))
        #expect(kept.map(\.arrivedAt) == [at(day - 10 * 24 * hour)])
        #expect(kept.first?.checkins.count == 1)
        let old = try registry.analytics(store: 1, from: at(day - 401 * 24 * hour), to: at(day - 399 * 24 * hour))
        #expect(old.visits.members == 0 && old.visits.guests == 1)
    }

    @Test(
        "retention gives the pages of SQLite's deleted history back to the file system (a new file at once, an older one by VACUUM)",
        arguments: [false, true])
    func retentionReclaimsSpace(olderFile: Bool) throws {
        let path = try temporaryFolder() + "/db.sqlite"
        if olderFile {
            // A file an older version made: write-ahead logging before anything, so auto-vacuum can no longer be set.
            let sqlite = Process()
            sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            sqlite.arguments = [path, "PRAGMA journal_mode = WAL; CREATE TABLE t (x); DROP TABLE t;"]
            sqlite.standardOutput = FileHandle.nullDevice
            try sqlite.run()
            sqlite.waitUntilExit()
        }
        let registry = try SQLiteRegistry(path: path)
        try registry.merge(try members(["ana", "ben"]))
        var changes = RegistryChanges()
        for index in 0..<3000 {
            let member = index % 2 == 0 ? "ana" : "ben"
            changes.record(visit(member, start: day - 30 * 24 * hour + Int64(index) * 60_000, stops: [(10, 60), (20, 30), (30, 10)]))
        }
        try registry.apply(changes)
        var retention = RegistryChanges()
        retention.forgetHistory(before: at(day))
        try registry.apply(retention)
        #expect(try registry.history(store: 1, from: at(0), to: at(day)).isEmpty)
        // 3,000 visits of three stops took well over a megabyte; what is left is the schema (49 pages of 4 KiB with the
        // fobs table) and two members.
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        let log = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(size < 250_000 && log == 0, "file \(size) bytes, write-ahead log \(log) bytes")
    }

    @Test("SQLite's write-ahead log is emptied once past its bound and no reader needs it; writes go on while one reads")
    func writeAheadLogBounded() throws {
        let path = try temporaryFolder() + "/db.sqlite"
        let registry = try SQLiteRegistry(path: path)
        let ids = (0..<50).map { "m\($0)" }
        try registry.merge(try members(ids))
        func log() -> Int { (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0 }
        var written = 0
        func writeHistory() throws {
            var changes = RegistryChanges()
            for member in ids {
                changes.countVisit(of: member, at: at(day + Int64(written) * 60_000))
                changes.record(visit(member, start: day + Int64(written) * 60_000, stops: [(10, 60), (20, 30), (30, 10)]))
            }
            written += 1
            try registry.apply(changes)
        }
        // Another connection reads the file as it was (a report, the coordinator's look at the change log): the log
        // cannot restart under it, and the writes go on without waiting for it.
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        let reader = try DatabaseQueue(path: path, configuration: configuration)
        try reader.inDatabase { db in
            try db.execute(sql: "BEGIN")
            _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM member")
        }
        while log() <= SQLiteRegistry.writeAheadLogBound && written < 5000 { try writeHistory() }
        #expect(log() > SQLiteRegistry.writeAheadLogBound, "\(written) writes")
        try writeHistory()
        #expect(log() > SQLiteRegistry.writeAheadLogBound)
        try reader.inDatabase { db in try db.execute(sql: "COMMIT") }
        // The reader is done: the next write empties the log (it used to stay at its largest, restarting at best).
        try writeHistory()
        #expect(log() < 1_048_576, "write-ahead log \(log()) bytes")
        #expect(try registry.history(store: 1, from: at(0), to: at(day + Int64(written) * 60_000)).count == ids.count * written)
    }

    @Test("forget deletes the member's history: no row, nothing in the SQLite file or pg_dump", arguments: Backend.allCases)
    func forgetErasesHistory(backend: Backend) throws {
        let database = try backend.makeDatabase()
        let registry = try database.open()
        let secret = "zebulon-quixote-7731"
        try registry.merge(try members([secret, "ana"]))
        var changes = RegistryChanges()
        // What only the history holds of this member: a promo id and department names of this visit alone.
        var erased = visit(secret, start: day, stops: [(10, 60), (20, 30)], offers: [("secret-offer-zq", 20, 70)], checkins: [80])
        erased.stops = erased.stops.map {
            var stop = $0
            stop.name = "fitting-room-zq-\(stop.department)"
            return stop
        }
        changes.record(erased)
        changes.record(visit("ana", start: day, stops: [(10, 60)]))
        changes.countGuest(GuestVisit(store: 1, department: 10, arrivedAt: at(day), dwell: .seconds(40)))
        try registry.apply(changes)
        #expect(try registry.history(store: 1, from: at(day), to: at(day + hour)).count == 2)
        let before = try database.everythingStored().map(\.bytes)
        #expect(before.contains { $0.range(of: Data("secret-offer-zq".utf8)) != nil }, "the look below would find the history")
        #expect(try registry.forget(id: secret))
        var published = RegistryChanges()
        for event in try registry.claimRegistryEvents(for: "test") { published.registryEventPublished(event.seq) }
        try registry.apply(published)
        #expect(try registry.history(store: 1, from: at(day), to: at(day + hour)).map(\.member) == ["ana"])
        let analytics = try registry.analytics(store: 1, from: at(day), to: at(day + hour))
        #expect(analytics.visits.members == 1 && analytics.visits.guests == 1)
        #expect(analytics.checkins.count == 0 && analytics.promos.isEmpty)
        // The member's id is in the published registry event's row until SQLite's next checkpoint overwrites that
        // page (the existing forget test's rule); everything of the history is gone at once.
        let traces = ["secret-offer-zq", "fitting-room-zq-10", "fitting-room-zq-20"] + (backend == .postgres ? [secret] : [])
        for (place, bytes) in try database.everythingStored() {
            for trace in traces {
                #expect(bytes.range(of: Data(trace.utf8)) == nil, "\(trace) is still in \(place)")
            }
        }
    }

    @Test("the analytics object is computed exactly for a scripted day", arguments: Backend.allCases)
    func scriptedDay(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        try registry.merge(try members(["ana", "ben", "cid", "dot"]))
        var changes = RegistryChanges()
        // 09:00 ana, first visit ever: Clothing 100 s → Housewares 300 s; the kitchen promo at 150 s, a check-in at 350 s.
        changes.record(
            visit("ana", number: 1, start: day + 9 * hour, stops: [(10, 100), (20, 300)], offers: [("kitchen", 20, 150)], checkins: [350]))
        // 09:30 ben: Housewares 200 s → Clothing 50 s → Housewares 100 s; offered kitchen, no check-in.
        changes.record(
            visit("ben", start: day + 9 * hour + 1_800_000, stops: [(20, 200), (10, 50), (20, 100)], offers: [("kitchen", 20, 10)]))
        // 11:00 cid: Clothing 600 s; a check-in before any promo, then the shirts promo.
        changes.record(visit("cid", start: day + 11 * hour, stops: [(10, 600)], offers: [("shirts", 10, 500)], checkins: [100]))
        // 11:10 ana again (her second visit that day): Clothing 40 s.
        changes.record(visit("ana", number: 2, start: day + 11 * hour + 600_000, stops: [(10, 40)]))
        // Outside the period, and a visit still going on: neither counts.
        changes.record(visit("dot", start: day - hour, stops: [(10, 60)]))
        changes.record(
            VisitRecord(
                member: "dot", store: 1, arrivedAt: at(day + 12 * hour), number: 3,
                stops: [.init(department: 10, name: "Dept 10", enteredAt: at(day + 12 * hour))]))
        // Another store's visit does not count either.
        changes.record(visit("ben", start: day + 10 * hour, stops: [(10, 60)], store: 2))
        for (minute, department) in [(5, 10), (20, 10), (25, 20)] as [(Int64, UInt16)] {
            changes.countGuest(
                GuestVisit(store: 1, department: department, arrivedAt: at(day + 9 * hour + minute * 60_000), dwell: .seconds(30)))
        }
        changes.countGuest(GuestVisit(store: 1, department: 10, arrivedAt: at(day + 14 * hour), dwell: .seconds(30)))
        changes.countGuest(GuestVisit(store: 2, department: 10, arrivedAt: at(day + 14 * hour), dwell: .seconds(30)))
        try registry.apply(changes)

        let analytics = try registry.analytics(store: 1, from: at(day), to: at(day + 24 * hour))
        #expect(analytics.visits == .init(members: 3, newMembers: 1, repeatMembers: 2, guests: 4))
        // Visit lengths 400, 350, 600, 40 s: median the 2nd (350), p90 the 4th (600).
        #expect(analytics.dwell == .init(median: 350, p90: 600))
        #expect(
            analytics.hourly == [
                .init(hour: at(day + 9 * hour), members: 2, guests: 3), .init(hour: at(day + 11 * hour), members: 2, guests: 0),
                .init(hour: at(day + 14 * hour), members: 0, guests: 1),
            ])
        // Clothing: ana 100, ben 50, cid 600, ana 40 → sorted 40, 50, 100, 600. Housewares: ana 300, ben 300.
        #expect(
            analytics.departments == [
                .init(department: 10, name: "Dept 10", visits: 4, dwell: .init(median: 50, p90: 600, total: 790)),
                .init(department: 20, name: "Dept 20", visits: 2, dwell: .init(median: 300, p90: 300, total: 600)),
            ])
        #expect(analytics.flows == [.init(from: 10, to: 20, count: 2), .init(from: 20, to: 10, count: 1)])
        #expect(analytics.checkins == .init(count: 2, visitsWithCheckin: 2))
        #expect(
            analytics.promos == [
                .init(id: "kitchen", department: 20, offers: 2, visitsWithCheckinAfter: 1),
                .init(id: "shirts", department: 10, offers: 1, visitsWithCheckinAfter: 0),
            ])
        #expect(try registry.historyStores() == [1, 2])

        // The chain's summaries of the same day agree with each store's report, in one grouped pass: store 1 has
        // 4 finished visits (400 + 350 + 600 + 40 s: average 348 s), store 2 ben's 60 s and one guest.
        let summaries = try registry.storeSummaries(from: at(day), to: at(day + 24 * hour))
        #expect(
            summaries == [
                StoreSummary(
                    store: 1, memberVisits: 4, visits: .init(members: 3, newMembers: 1, repeatMembers: 2, guests: 4), averageVisit: 348,
                    checkins: 2),
                StoreSummary(
                    store: 2, memberVisits: 1, visits: .init(members: 1, newMembers: 0, repeatMembers: 1, guests: 1), averageVisit: 60),
            ])
        // A period with only the visit before the day: store 1 alone.
        #expect(
            try registry.storeSummaries(from: at(day - 2 * hour), to: at(day))
                == [StoreSummary(store: 1, memberVisits: 1, visits: .init(members: 1, repeatMembers: 1), averageVisit: 60)])
        // A period without a visit: no dwell (the percentiles' offsets are kept at 0), no department.
        let empty = try registry.analytics(store: 1, from: at(day + 30 * hour), to: at(day + 31 * hour))
        #expect(empty.dwell == .init(median: 0, p90: 0) && empty.departments.isEmpty && empty.visits.members == 0)
    }
}
