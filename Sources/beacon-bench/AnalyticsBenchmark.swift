import ArgumentParser
import BeaconMeshCore
import BeaconMeshRegistry
import Foundation

/// Shopper analytics on a year of history: one store with `--visits-per-day` member visits a day for `--days` days,
/// and a chain of `--stores` stores with `--chain-visits-per-day` each for `--chain-days` days, written through the
/// registry's own writes (`RegistryChanges`); then the 7-day report of the one store (the budget: 200 ms)
/// and the chain's month — every store's summary, as the chain's analytics page reads it (budget: 5 s) — timed, and
/// the history's size per visit.
struct AnalyticsBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analytics",
        abstract:
            "Analytics: a store's year and a chain's month of history; 7-day report and the chain's month, timed (SQLite or PostgreSQL).")

    @Option(
        help: ArgumentHelp("A new registry: a SQLite file or a postgres:// URL (password: BEACONMESH_DB_PASSWORD).", valueName: "FILE|URL"))
    var db: String

    @Option(help: "Member visits a day in the one store.") var visitsPerDay = 1_000
    @Option(help: "Days of history of the one store.") var days = 365
    @Option(help: "Stores of the chain (numbered from 1000).") var stores = 1_000
    @Option(help: "Member visits a day in each store of the chain.") var chainVisitsPerDay = 100
    @Option(help: "Days of history of each store of the chain.") var chainDays = 30
    @Option(help: "Loyalty members the visits are spread over.") var members = 20_000
    @Flag(help: "Measure the history already in --db (written by an earlier run with the same options) without writing.")
    var measureOnly = false

    /// The end of the history: a Monday, 00:00 UTC.
    static let end: Int64 = 1_763_942_400_000
    static let day: Int64 = 86_400_000

    func run() throws {
        let registry = try RegistryLocation(db).open()
        var written = 0
        if measureOnly {
            written = days * visitsPerDay + stores * chainDays * chainVisitsPerDay
        } else {
            guard try registry.historyStores().isEmpty else {
                throw ValidationError("\(db) already holds history: give a new database, or --measure-only")
            }
            written = try writeHistory(registry)
        }
        try measure(registry, written: written)
    }

    /// Members, then the one store's year and the chain's month; returns how many visits were written.
    private func writeHistory(_ registry: any MemberRegistry) throws -> Int {
        let uuid = BenchBeacons.uuid
        var people: [MemberRecord] = []
        for index in 0..<members {
            let major = UInt16(1 + index / 60_000)
            let minor = UInt16(index % 60_000)
            let beacon = BeaconKey.iBeacon(uuid: uuid, major: major, minor: minor)
            people.append(MemberRecord(profile: MemberProfile(id: "m\(index)", name: "Member \(index)"), beacons: [beacon], createdAt: nil))
        }
        try registry.merge(people)
        var random = SplitMix(seed: 25)
        let writing = ContinuousClock.now
        var written = 0
        written += try write(registry, store: 1, days: days, perDay: visitsPerDay, random: &random)
        for store in 0..<stores {
            written += try write(registry, store: UInt16(1000 + store), days: chainDays, perDay: chainVisitsPerDay, random: &random)
        }
        print("history written: \(written) member visits in \(Self.format(ContinuousClock.now - writing)) s")
        return written
    }

    /// Times the one store's 7-day report and the chain's month, and prints the history's size per visit.
    private func measure(_ registry: any MemberRegistry, written: Int) throws {
        var week: [Duration] = []
        var last = StoreAnalytics(store: 1, from: Timestamp(milliseconds: 0), to: Timestamp(milliseconds: 0))
        for _ in 0..<5 {
            let started = ContinuousClock.now
            last = try registry.analytics(
                store: 1, from: Timestamp(milliseconds: Self.end - 7 * Self.day), to: Timestamp(milliseconds: Self.end))
            week.append(ContinuousClock.now - started)
        }
        week.sort()
        print(
            "7-day report of store 1 (\(last.visits.members) members, \(last.hourly.reduce(0) { $0 + $1.members }) visits): "
                + "median \(Self.milliseconds(week[2])) ms, worst \(Self.milliseconds(week[4])) ms (budget 200 ms)")

        // The chain's page: every store's summary of the month in one grouped pass (three queries).
        var months: [Duration] = []
        var summaries: [StoreSummary] = []
        for _ in 0..<3 {
            let started = ContinuousClock.now
            summaries = try registry.storeSummaries(
                from: Timestamp(milliseconds: Self.end - Int64(chainDays) * Self.day), to: Timestamp(milliseconds: Self.end))
            months.append(ContinuousClock.now - started)
        }
        months.sort()
        let chain = summaries.filter { $0.store >= 1000 }
        print(
            "the chain's month (\(chain.count) stores, \(chain.reduce(0) { $0 + $1.memberVisits }) visits, "
                + "\(chain.reduce(0) { $0 + $1.checkins }) check-ins; every store's summary): median \(Self.format(months[1])) s, "
                + "worst \(Self.format(months[2])) s (budget 5 s)")
        if let bytes = try historyBytes() {
            print("history size: \(bytes / max(1, written)) bytes per visit (\(bytes / 1_048_576) MiB for \(written) visits)")
        }
    }

    /// Writes `perDay` finished visits a day for `days` days before `end` to `store`, in batches; returns how many.
    private func write(_ registry: any MemberRegistry, store: UInt16, days: Int, perDay: Int, random: inout SplitMix) throws -> Int {
        var changes = RegistryChanges()
        var count = 0
        for day in 0..<days {
            let dayStart = Self.end - Int64(days - day) * Self.day
            for _ in 0..<perDay {
                // Opening hours 08:00–20:00; one to four departments of five; a promo now and then, a check-in at the till.
                var time = dayStart + 8 * 3_600_000 + Int64(random.next(below: 12 * 3_600_000))
                let member = "m\(random.next(below: UInt64(members)))"
                var record = VisitRecord(
                    member: member, store: store, arrivedAt: Timestamp(milliseconds: time), number: Int(random.next(below: 20)) + 1)
                for _ in 0..<(1 + Int(random.next(below: 4))) {
                    let department = UInt16(10 * (1 + random.next(below: 5)))
                    let dwell = Int64(30_000 + random.next(below: 900_000))
                    record.stops.append(
                        .init(
                            department: department, name: "Department \(department)", enteredAt: Timestamp(milliseconds: time),
                            dwell: .milliseconds(dwell)))
                    if random.next(below: 4) == 0 {
                        record.offers.append(
                            .init(promo: "promo-\(department)", department: department, at: Timestamp(milliseconds: time + 3000)))
                    }
                    time += dwell
                }
                if random.next(below: 3) == 0 { record.checkins.append(.init(department: 60, at: Timestamp(milliseconds: time - 1000))) }
                record.leftAt = Timestamp(milliseconds: time)
                changes.record(record)
                if random.next(below: 2) == 0 {
                    changes.countGuest(
                        GuestVisit(
                            store: store, department: UInt16(10 * (1 + random.next(below: 5))), arrivedAt: Timestamp(milliseconds: time),
                            dwell: .seconds(120)))
                }
                count += 1
                if changes.history.count >= 5_000 {
                    try registry.apply(changes)
                    changes = RegistryChanges()
                }
            }
        }
        try registry.apply(changes)
        return count
    }

    /// The bytes the history takes: the SQLite file, or PostgreSQL's history tables with their indexes.
    private func historyBytes() throws -> Int? {
        guard case .sqlite(let path) = try RegistryLocation(db) else {
            let registry = try RegistryLocation(db).open()
            return try (registry as? PostgresRegistry)?.historyTableBytes()
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        return size + wal
    }

    private static func format(_ duration: Duration) -> String {
        String(format: "%.2f", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    private static func milliseconds(_ duration: Duration) -> String {
        String(format: "%.1f", (Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18) * 1000)
    }
}

/// A small, fast, seeded random number generator (SplitMix64), so that every run writes the same history.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func next(below bound: UInt64) -> UInt64 { next() % bound }
}
