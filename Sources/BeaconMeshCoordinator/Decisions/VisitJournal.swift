import BeaconMeshCore

/// The history of the member visits going on, written as they happen: arrival, each department with its dwell, the
/// promos offered and the check-ins. Pure bookkeeping for `CoordinatorState` (no clock, no I/O): each change returns
/// the visit as it now stands, for the registry writer to keep (`RegistryChanges.record`), so a visit is in the
/// history while it goes on and complete when it ends; a restart reads the open ones back (`restore`).
struct VisitJournal {
    private var open: [String: VisitRecord] = [:]

    /// Takes the open visits the registry kept (at a start): those of `visits` the engine restored; a restored visit
    /// the history lacks (kept by an older version) starts from its current department.
    mutating func restore(
        _ records: [VisitRecord], visits: [PresenceEngine.Visit], visitNumbers: [String: Int], name: (UInt16, UInt16) -> String
    ) {
        let kept = Dictionary(records.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        for visit in visits {
            let key = VisitRecord.Key(member: visit.member, store: visit.store, arrivedAt: visit.arrivedAt)
            open[visit.member] =
                kept[key]
                ?? VisitRecord(
                    member: visit.member, store: visit.store, arrivedAt: visit.arrivedAt,
                    leftAt: visit.leftAt.map { _ in visit.lastSeen }, number: visitNumbers[visit.member] ?? 1,
                    stops: [
                        .init(department: visit.department, name: name(visit.store, visit.department), enteredAt: visit.inDepartmentSince)
                    ])
        }
    }

    /// The open visit of `member`, if any.
    func visit(of member: String) -> VisitRecord? { open[member] }

    /// A visit began in `department` at `time`.
    mutating func arrived(member: String, store: UInt16, department: UInt16, name: String, number: Int, at time: Timestamp) -> VisitRecord {
        let record = VisitRecord(
            member: member, store: store, arrivedAt: time, number: number,
            stops: [.init(department: department, name: name, enteredAt: time)])
        open[member] = record
        return record
    }

    /// The member came back within `visitGap`, to `department`: the visit goes on with a new stop (the time away
    /// counts in no department).
    mutating func resumed(member: String, department: UInt16, name: String, at time: Timestamp) -> VisitRecord? {
        guard var record = open[member] else { return nil }
        record.leftAt = nil
        record.stops.append(.init(department: department, name: name, enteredAt: time))
        open[member] = record
        return record
    }

    /// The member moved to `department` at `time`: the stop before it ends then.
    mutating func moved(member: String, to department: UInt16, name: String, at time: Timestamp) -> VisitRecord? {
        guard var record = open[member] else { return nil }
        record.closeLastStop(at: time)
        record.stops.append(.init(department: department, name: name, enteredAt: time))
        open[member] = record
        return record
    }

    /// `promo` was offered to the member in `department`.
    mutating func offered(member: String, promo: String, department: UInt16, at time: Timestamp) -> VisitRecord? {
        open[member]?.offers.append(.init(promo: promo, department: department, at: time))
        return open[member]
    }

    /// The member checked in at the till `department`.
    mutating func checkedIn(member: String, department: UInt16, at time: Timestamp) -> VisitRecord? {
        open[member]?.checkins.append(.init(department: department, at: time))
        return open[member]
    }

    /// The member left; `dwell` is the visit's length up to the last reading (the visit's end). The visit stays
    /// open for a resumption until `ended`.
    mutating func left(member: String, dwell: Duration) -> VisitRecord? {
        guard var record = open[member] else { return nil }
        let lastReading = record.arrivedAt + dwell
        record.closeLastStop(at: lastReading)
        record.leftAt = lastReading
        open[member] = record
        return record
    }

    /// The member's visit ended for good (`visitGap` passed, or the member is gone): forgotten here.
    mutating func ended(member: String) { open[member] = nil }
}

extension VisitRecord {
    /// Sets the last stop's dwell to end at `time`.
    fileprivate mutating func closeLastStop(at time: Timestamp) {
        guard let last = stops.indices.last else { return }
        stops[last].dwell = max(.zero, time - stops[last].enteredAt)
    }
}
