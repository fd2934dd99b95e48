import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Logging

/// Promos: fired after their dwell, at most once per member and promo within the cooldown.
extension CoordinatorState {
    // MARK: Promos

    mutating func firePromos(_ present: [UInt16: [PresenceEngine.Visit]], at now: Timestamp) {
        guard !present.isEmpty else { return }
        for store in configuration.stores where promoStores.contains(store.id) {
            let (day, minute) = store.localDayAndMinute(of: now)
            // A member whose department is unknown gets no department's promo: no event is published for them.
            for visit in present[store.id] ?? [] where !visit.departmentUnknown {
                guard let department = store.department(visit.department), let rule = department.promo,
                    let profile = profiles[visit.member]
                else { continue }
                let eligibility = PromoEligibility(
                    proximity: rule.proximity, dwell: rule.dwell ?? configuration.promos.dwell,
                    cooldown: configuration.promos.cooldown)
                let last = promoFires[visit.member]?[rule.promo.id]
                guard eligibility.shouldFire(for: visit, lastFiredAt: last, at: now),
                    rule.window.check(day: day, minute: minute).open,
                    rule.audience.includes(member: visit.member, visits: profile.visits, checkins: profile.checkins)
                else { continue }
                promoFires[visit.member, default: [:]][rule.promo.id] = now
                actions.registry.promoFired(rule.promo.id, member: visit.member, store: store.id, at: now)
                keep(journal.offered(member: visit.member, promo: rule.promo.id, department: department.id, at: now))
                publish(
                    event: .promo(member: profile, department: department.id, departmentName: department.name, promo: rule.promo),
                    store: store.id, at: now, afterWrite: true)
                let offer = Offer(
                    id: nextID(), member: visit.member, store: store.id, department: department.id,
                    departmentName: department.name, promo: rule.promo, at: now)
                actions.publications.append(
                    Publication(
                        topic: topics.offers(member: visit.member), message: .offer(offer),
                        qos: .atLeastOnce, retain: false, store: store.id, afterWrite: true))
            }
        }
    }
}
