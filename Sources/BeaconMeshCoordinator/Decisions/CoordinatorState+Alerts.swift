import BeaconMeshCore
import BeaconMeshMQTT
import Logging

/// Alerts: the config's rules (`AlertBook`) told each event the decisions publish and ticked with the time; what they
/// answer goes to the store's `alerts` topic, QoS 1, while the store is decided here.
extension CoordinatorState {
    /// Tells the rules what `event` says: an arrival, a move, a resumed visit, a departure, a node's change.
    mutating func alertRules(see event: StoreEvent) {
        let minute = Self.localMinute(of: event.store, at: event.at, stores: configuration.stores)
        var due: [Alert] = []
        switch event.kind {
        case .arrived(let member, let department, let departmentName, _, _, _):
            due = alertBook.arrived(
                member, store: event.store, department: department, departmentName: departmentName, at: event.at, localMinute: minute)
        case .moved(let member, _, let to, _, let toName, _):
            due = alertBook.moved(member, store: event.store, to: to, departmentName: toName, at: event.at, localMinute: minute)
        case .resumed(let member, let department, let departmentName, _, _):
            alertBook.resumed(member, store: event.store, in: department, departmentName: departmentName, at: event.at)
        case .left(let member, _, _):
            alertBook.left(member: member.id, store: event.store)
        case .node(let department, let node, let state):
            guard let address = NodeAddress(store: event.store, department: department, node: node) else { return }
            alertBook.node(address, online: state == .online, departmentName: departmentName(event.store, department), at: event.at)
        case .promo, .checkin, .checkinRefused:
            return
        }
        for alert in due { publish(alert: alert) }
    }

    /// Tells the rules of the open visits restored at a start or taken over with a store: each member's stay in her
    /// department is timed from when she entered it (a dwell alert comes at its time, not only after her next move);
    /// nothing is told as an arrival (she was greeted before).
    mutating func alertRules(restore visits: [PresenceEngine.Visit]) {
        guard !alertBook.isEmpty else { return }
        for visit in visits where visit.leftAt == nil {
            guard let profile = profiles[visit.member] else { continue }
            alertBook.resumed(
                profile, store: visit.store, in: visit.department, departmentName: departmentName(visit.store, visit.department),
                at: visit.inDepartmentSince)
        }
    }

    /// Tells the rules which of this coordinator's stores nobody decides (from a lease renewal), and since when.
    mutating func alertRules(see undecided: [UInt16: Timestamp], at now: Timestamp) {
        for store in configuration.storeIDs {
            alertBook.store(store, decided: undecided[store] == nil, at: undecided[store] ?? now)
        }
    }

    /// The rules whose spells (a stay, a node offline, a store undecided) grew past their duration by `now`. A store
    /// nobody decides is told by those standing by for it (under one id, so that their copies are one alert); the
    /// rest only by the store's holder.
    mutating func tickAlerts(at now: Timestamp) {
        guard !alertBook.isEmpty else { return }
        let stores = configuration.stores
        for alert in alertBook.tick(at: now, localMinute: { Self.localMinute(of: $0, at: now, stores: stores) }) {
            if leases != nil, !active.contains(alert.store), alert.kind != .storeUndecided { continue }
            publish(alert: alert)
        }
    }

    /// Publishes `alert` on its store's `alerts` topic under a new id (an event's kind of id).
    mutating func publish(alert: Alert) {
        var alert = alert
        if alert.id.isEmpty { alert.id = nextID() }
        // Published only while the store is decided here — but that nobody decides it is told by those who do not.
        let fence = alert.kind == .storeUndecided ? nil : alert.store
        actions.publications.append(
            Publication(topic: topics.alerts(store: alert.store), message: .alert(alert), qos: .atLeastOnce, retain: false, store: fence))
        logger.notice("alert", metadata: ["rule": "\(alert.rule)", "store": "\(alert.store)", "text": "\(alert.text)"])
    }

    /// The minute after local midnight of `time` in `store` (its `timeZone:`, or the coordinator's).
    static func localMinute(of store: UInt16, at time: Timestamp, stores: [CoordinatorConfiguration.Store]) -> Int {
        if let store = stores.first(where: { $0.id == store }) { return store.localDayAndMinute(of: time).1 }
        return LocalCalendar.dayAndMinute(of: time).1
    }
}
