import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Logging

/// Presence snapshots (retained) and health reports, each when due.
extension CoordinatorState {
    // MARK: Snapshots, health, persistence

    /// The stores whose snapshot goes out at this tick: changed ones at most every `timings.snapshotMinimum`, the
    /// others every `timings.snapshotRefresh`; the longest waiting first, no more than a fair share per tick.
    func storesDueForSnapshot(at now: Timestamp) -> Set<UInt16> {
        var due: [(store: UInt16, last: Timestamp?)] = []
        for store in configuration.storeIDs where active.contains(store) {
            let last = lastSnapshot[store]
            guard let last else {
                due.append((store, nil))
                continue
            }
            let age = now - last
            if age >= timings.snapshotRefresh
                || dirtyStores.contains(store) && age >= timings.snapshotMinimum
            {
                due.append((store, last))
            }
        }
        let share =
            (configuration.storeIDs.count * Int(timings.tick.wholeMilliseconds)
                + Int(timings.snapshotMinimum.wholeMilliseconds) - 1)
            / Int(timings.snapshotMinimum.wholeMilliseconds)
        guard due.count > share else { return Set(due.map(\.store)) }
        due.sort { ($0.last?.milliseconds ?? .min, $0.store) < ($1.last?.milliseconds ?? .min, $1.store) }
        return Set(due.prefix(share).map(\.store))
    }

    mutating func publishSnapshots(of stores: Set<UInt16>, present: [UInt16: [PresenceEngine.Visit]], at now: Timestamp) {
        guard !stores.isEmpty else { return }
        let guests = engine.guestCountsByStore(at: now)
        for store in configuration.stores where stores.contains(store.id) {
            dirtyStores.remove(store.id)
            lastSnapshot[store.id] = now
            let nodes = engine.nodeStates(store: store.id).map {
                PresenceSnapshot.NodeState(department: $0.node.department, node: $0.node.node, state: $0.state)
            }
            let members = (present[store.id] ?? []).compactMap { visit in profiles[visit.member].map { (visit, $0) } }
            actions.metrics.snapshots.append(
                .init(
                    store: store.id, members: members.count, guests: (guests[store.id] ?? [:]).values.reduce(0, +),
                    nodes: nodes.map { ($0.department, $0.node, $0.state == .online) }))
            actions.snapshots.append(
                SnapshotSource(
                    store: store, present: members, guests: guests[store.id] ?? [:], nodes: nodes, at: now,
                    survey: surveyStatus(of: store.id)))
        }
    }

    /// What was dropped, by reason: refused messages, and readings too late or from offline nodes.
    func droppedCounts() -> [String: UInt64] {
        let counters = engine.counters
        var dropped = drops.counts
        if counters.late > 0 { dropped["late"] = counters.late }
        if counters.fromOfflineNodes > 0 { dropped["offline-node"] = counters.fromOfflineNodes }
        return dropped
    }

    mutating func publishHealth(at now: Timestamp) {
        let counters = engine.counters
        let dropped = droppedCounts()
        let health = CoordinatorHealth(
            uptimeSeconds: (now - startedAt).wholeMilliseconds / 1000, batches: counters.batches, sightings: counters.sightings,
            events: eventsPublished, dropped: dropped, gaps: counters.gaps, duplicates: counters.duplicates,
            tracked: engine.trackedCount, rssBytes: 0,
            nodes: engine.nodeClocks.map { .init(address: $0.node, state: $0.state, clockSkew: $0.clockSkew) },
            database: .init(
                failing: database.failure != nil, queued: database.queued, error: database.failure,
                since: database.failingSince, surveySamplesDropped: database.surveySamplesDropped),
            rangingReports: counters.rangingReports,
            leases: active.sorted().map { store in
                let since = activeSince[store] ?? startedAt
                return .init(store: store, since: since, heldSeconds: max(0, (now - since).wholeMilliseconds / 1000))
            },
            surveys: surveyHealth())
        for survey in health.surveys where survey.stale && !staleSurveys.contains(survey.store) {
            logger.warning("\(survey.message)", metadata: ["store": "\(survey.store)", "share": "\(survey.share)"])
        }
        staleSurveys = Set(health.surveys.filter(\.stale).map(\.store))
        actions.health = health
    }
}
