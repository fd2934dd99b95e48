import BeaconMeshCore
import BeaconMeshMQTT

/// Alerts: the config's rules (`AlertBook`) told each event the decisions publish and ticked with the time; what they
/// answer goes to the store's `alerts` topic, QoS 1, while the store is decided here.
extension CoordinatorState {
    /// Tells the rules what `event` says: an arrival, a move, a departure, a node's change.
    mutating func alertRules(see event: StoreEvent) {
        let minute = LocalCalendar.dayAndMinute(of: event.at).1
        var due: [Alert] = []
        switch event.kind {
        case .arrived(let member, let department, let departmentName, _, _, _):
            due = alertBook.arrived(
                member, store: event.store, department: department, departmentName: departmentName, at: event.at, localMinute: minute)
        case .moved(let member, _, let to, _, let toName, _):
            due = alertBook.moved(member, store: event.store, to: to, departmentName: toName, at: event.at, localMinute: minute)
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

    /// The rules whose spells (a stay, a node offline) grew past their duration by `now`.
    mutating func tickAlerts(at now: Timestamp) {
        guard !alertBook.isEmpty else { return }
        for alert in alertBook.tick(at: now, localMinute: { _ in LocalCalendar.dayAndMinute(of: now).1 }) {
            if leases != nil, !active.contains(alert.store) { continue }
            publish(alert: alert)
        }
    }

    /// Publishes `alert` on its store's `alerts` topic under a new id (an event's kind of id).
    mutating func publish(alert: Alert) {
        var alert = alert
        alert.id = nextID()
        actions.publications.append(
            Publication(
                topic: topics.alerts(store: alert.store), message: .alert(alert), qos: .atLeastOnce, retain: false, store: alert.store))
        logger.notice("alert", metadata: ["rule": "\(alert.rule)", "store": "\(alert.store)", "text": "\(alert.text)"])
    }
}
