import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Logging

/// Visits and greetings: the engine's outputs turned into the contract's events, visit counts and the visit history.
extension CoordinatorState {
    // MARK: Engine outputs

    mutating func apply(_ outputs: [PresenceEngine.Output], at now: Timestamp) {
        for output in outputs {
            // A store stood by for: the engine stays warm, and nothing of it is published, counted or written.
            if leases != nil, let store = output.store, !active.contains(store) { continue }
            switch output {
            case .arrived(let member, let store, let department, let at, let evidence):
                guard let (profile, visit) = countVisit(member: member, at: at) else { continue }
                actions.registry.record(
                    journal.arrived(
                        member: member, store: store, department: department, name: departmentName(store, department),
                        number: visit.number, at: at))
                let template = configuration.store(store)?.greeting(forVisit: visit.number) ?? .standard
                let greeting = template.render(for: profile, visit: visit.number)
                publish(
                    event: .arrived(
                        member: profile, department: department, departmentName: departmentName(store, department),
                        visit: visit, greeting: greeting, evidence: evidence), store: store, at: at)
            case .resumed(let member, let store, let department, let at, let evidence):
                let record = journal.resumed(member: member, department: department, name: departmentName(store, department), at: at)
                keep(record)
                guard let profile = profiles[member] else { continue }
                // The visit goes on: its number is the one its arrival counted.
                let visit = VisitNumber(number: record?.number ?? profile.visits, previousAt: nil)
                publish(
                    event: .resumed(
                        member: profile, department: department, departmentName: departmentName(store, department), visit: visit,
                        evidence: evidence), store: store, at: at)
            case .moved(let member, let store, let from, let to, let at, let evidence):
                guard let profile = profiles[member] else { continue }
                keep(journal.moved(member: member, to: to, name: departmentName(store, to), at: at))
                publish(
                    event: .moved(
                        member: profile, from: from, to: to, fromName: departmentName(store, from),
                        toName: departmentName(store, to), evidence: evidence), store: store, at: at)
            case .left(let member, let store, let department, let dwell, let at):
                keep(journal.left(member: member, dwell: dwell))
                guard let profile = profiles[member] else { continue }
                publish(
                    event: .left(member: profile, department: department, dwellSeconds: Int((dwell.wholeMilliseconds + 500) / 1000)),
                    store: store, at: at)
            case .node(let node, let state, let at):
                publish(event: .node(department: node.department, node: node.node, state: state), store: node.store, at: at)
            case .presenceChanged(let store):
                dirtyStores.insert(store)
            case .visitChanged(let visit):
                actions.registry.save(visit)
            }
        }
    }

    /// Hands a visit of the journal to the registry writer for the history.
    mutating func keep(_ record: VisitRecord?) {
        if let record { actions.registry.record(record) }
    }

    /// Deletes member visit history older than `retention.visits`: at the first tick and then every hour.
    mutating func forgetOldHistory(at now: Timestamp) {
        // A coordinator that decides for no store (it stands by for all) leaves the registry to those that do.
        guard leases == nil || !active.isEmpty else { return }
        guard lastRetentionRun.map({ now - $0 >= Self.retentionInterval }) ?? true else { return }
        lastRetentionRun = now
        actions.registry.forgetHistory(before: now - configuration.retention.visits)
    }

    /// Counts the visit in memory (the count goes to the registry writer with the open visit, which the engine's
    /// `visitChanged` output that follows carries) and returns the member as the event shows them.
    mutating func countVisit(member: String, at time: Timestamp) -> (MemberProfile, VisitNumber)? {
        guard var profile = profiles[member] else { return nil }
        let visit = VisitNumber(number: profile.visits + 1, previousAt: profile.lastVisitAt)
        profile.visits = visit.number
        profile.lastVisitAt = time
        profiles[member] = profile
        actions.registry.countVisit(of: member, at: time)
        return (profile, visit)
    }

    func departmentName(_ store: UInt16, _ department: UInt16) -> String {
        configuration.store(store)?.department(department)?.name ?? "Department \(department)"
    }

    mutating func nextID() -> String {
        eventCounter += 1
        return "\(eventPrefix)-\(eventCounter)"
    }

    /// Publishes an event on the store's events topic; returns the event.
    @discardableResult
    mutating func publish(event kind: StoreEvent.Kind, store: UInt16, at: Timestamp, afterWrite: Bool = false) -> StoreEvent {
        let event = StoreEvent(id: nextID(), store: store, at: at, kind: kind)
        eventsPublished += 1
        actions.metrics.events[event.type, default: 0] += 1
        actions.publications.append(
            Publication(
                topic: topics.events(store: store), message: .event(event), qos: .atLeastOnce, retain: false, store: store,
                afterWrite: afterWrite))
        logger.info("event", metadata: ["type": "\(event.type)", "store": "\(store)", "member": "\(event.member?.id ?? "-")"])
        if !alertBook.isEmpty { alertRules(see: event) }
        return event
    }
}

extension PresenceEngine.Output {
    /// The store the output is about, if any.
    var store: UInt16? {
        switch self {
        case .arrived(_, let store, _, _, _), .resumed(_, let store, _, _, _), .moved(_, let store, _, _, _, _),
            .left(_, let store, _, _, _), .presenceChanged(let store):
            return store
        case .node(let node, _, _):
            return node.store
        case .visitChanged(let visit):
            return visit.store
        }
    }
}
