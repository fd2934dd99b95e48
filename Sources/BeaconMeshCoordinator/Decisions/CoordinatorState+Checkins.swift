import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Logging

/// Check-ins at a till: accepted once per request, when the member is heard near the till.
extension CoordinatorState {
    // MARK: Check-ins

    /// How long handled check-in request ids are remembered.
    static let checkinMemory: Duration = .seconds(7 * 24 * 3600)
    /// How recently a member must have been heard near the till.
    static let checkinWindow: Duration = .seconds(5)

    /// Decides a till's check-in request: counted once per id; accepted for a member heard `immediate` or `near` in
    /// that till department within the last 5 s; the `checkin` event goes to the store and to the member's
    /// `checkins` topic, a `checkin-refused` event to the store. An accepted check-in is trusted truth: what the
    /// nodes hear of her beacons at that moment becomes a survey sample of the till department.
    mutating func checkIn(_ request: CheckinRequest, store storeID: UInt16, at now: Timestamp) {
        guard handledCheckins[request.id] == nil else { return }
        guard let store = configuration.store(storeID) else { return }
        handledCheckins[request.id] = now
        actions.registry.handledCheckinRequest(request.id, at: now)
        func refuse(_ reason: CheckinRefusal) {
            publish(
                event: .checkinRefused(request: request.id, member: request.member, department: request.department, reason: reason),
                store: storeID, at: now)
        }
        guard let department = store.department(request.department), department.till else { return refuse(.notATill) }
        guard var profile = profiles[request.member] else { return refuse(.unknownMember) }
        guard engine.heardNear(member: request.member, store: storeID, department: department.id, within: Self.checkinWindow, at: now)
        else { return refuse(.notNearTill) }
        profile.checkins += 1
        profiles[request.member] = profile
        sampleCheckin(of: profile.id, store: storeID, department: department.id, at: now)
        actions.registry.countCheckin(of: profile.id)
        if journal.visit(of: profile.id)?.store == storeID {
            keep(journal.checkedIn(member: profile.id, department: department.id, at: now))
        }
        let event = publish(
            event: .checkin(
                member: profile, department: department.id, departmentName: department.name,
                request: request.id, checkins: profile.checkins, verified: false),
            store: storeID, at: now, afterWrite: true)
        actions.publications.append(
            Publication(
                topic: topics.checkins(member: profile.id), message: .event(event), qos: .atLeastOnce, retain: false,
                store: storeID, afterWrite: true))
    }

    /// Forgets handled check-in requests older than `checkinMemory`, once an hour.
    mutating func pruneCheckins(at now: Timestamp) {
        guard now - lastCheckinPrune >= .seconds(3600) else { return }
        lastCheckinPrune = now
        let before = now - Self.checkinMemory
        handledCheckins = handledCheckins.filter { $0.value >= before }
        actions.registry.forgetCheckinRequests(before: before)
    }
}
