import BeaconMeshCore
import BeaconMeshRegistry

/// The survey marks a coordinator holds: which surveyor's beacon is where its carrier says, in which store, and the
/// samples to keep of it about once a second (a pure value: marks and time in, samples out).
///
/// A mark holds until the beacon's next mark: another department, "between departments" (`department: nil`, kept
/// but not sampled) or `stop`. A member's mark (`member:ID`) marks each of her beacons, as the caller resolved them.
/// The store's holder keeps each mark in the registry, so a restart or a take-over restores them (`restore`).
struct SurveyMarks: Sendable {
    /// A marked beacon: in which store, which department (`nil`: between departments), since when.
    struct Marking: Hashable, Sendable {
        var store: UInt16
        var department: UInt16?
        var since: Timestamp
    }

    /// How often a marked beacon is sampled.
    static let interval: Duration = .seconds(1)

    private(set) var marked: [BeaconKey: Marking] = [:]
    private var grid = SamplingGrid(every: interval)

    /// Why a mark was refused (its drop reason and a line of detail), or `nil` when it was taken. `beacons` are the
    /// beacons it marks: its own, or its member's (none: a member the registry does not know, or without beacons).
    mutating func take(
        _ mark: SurveyMark, beacons: [BeaconKey], store: CoordinatorConfiguration.Store?, storeID: UInt16, at now: Timestamp
    ) -> (reason: String, detail: String)? {
        guard let store else { return ("unknown-store", "store \(storeID) is not served here") }
        if case .member(let member) = mark.carried, beacons.isEmpty {
            return ("unknown-member", "no member '\(member)' with a beacon in the registry")
        }
        if mark.stop {
            for beacon in beacons { marked[beacon] = nil }
            return nil
        }
        if let department = mark.department, store.department(department) == nil {
            return ("unknown-department", "store \(store.id) has no department \(department)")
        }
        for beacon in beacons { marked[beacon] = Marking(store: store.id, department: mark.department, since: now) }
        return nil
    }

    /// Takes the marks the registry kept (at a start, or a store taken over): each unless a later mark of its beacon
    /// is held already (one heard while standing by).
    mutating func restore(_ records: [SurveyMarkRecord]) {
        for record in records where (marked[record.beacon]?.since).map({ $0 < record.since }) ?? true {
            marked[record.beacon] = Marking(store: record.store, department: record.department, since: record.since)
        }
    }

    /// The samples due at `now` (about one a second per beacon marked in a department of a store in `deciding`):
    /// what `readings` says the store's nodes hear of it now; a beacon no node hears gives no sample.
    mutating func samples(
        at now: Timestamp, deciding: (UInt16) -> Bool, readings: (BeaconKey, UInt16) -> [SurveyNode: Double]?
    ) -> [SurveySample] {
        guard !marked.isEmpty else { return [] }
        guard grid.isDue(at: now) else { return [] }
        return marked.sorted { $0.key.description < $1.key.description }.compactMap { beacon, marking in
            guard let department = marking.department, deciding(marking.store), let heard = readings(beacon, marking.store) else {
                return nil
            }
            return SurveySample(store: marking.store, beacon: beacon, department: department, at: now, readings: heard)
        }
    }
}
