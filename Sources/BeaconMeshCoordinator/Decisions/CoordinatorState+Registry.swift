import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Logging

/// The registry both ways: visits saved as they go on (a slice per tick) and at a stop; members as others changed them.
extension CoordinatorState {
    /// Saves every visit the engine holds (open and recently left), with their latest last-seen times (at a stop).
    mutating func saveVisits() -> CoordinatorActions {
        for visit in engine.visits where active.contains(visit.store) { actions.registry.save(visit) }
        return takeActions()
    }

    /// Saves the visits of the next slice of members, so that every visit is saved at least every
    /// `timings.visitSave` without one long write holding up the messages.
    mutating func saveVisitSlice() {
        let ticks = max(1, Int(timings.visitSave.wholeMilliseconds / timings.tick.wholeMilliseconds))
        let slots = engine.memberSlots
        guard slots > 0 else { return }
        if visitSaveCursor >= slots { visitSaveCursor = 0 }
        let end = min(slots, visitSaveCursor + (slots + ticks - 1) / ticks)
        let visits = engine.visits(inSlots: visitSaveCursor..<end)
        visitSaveCursor = end
        for visit in visits where active.contains(visit.store) { actions.registry.save(visit) }
    }

    /// Takes members as others left them (read by the caller outside the decisions): the `members` command, and with
    /// a shared registry the other stores' coordinators, whose visit and check-in counts and promo firings come with
    /// them. Counts made here and still waiting for the writer are kept (the larger count and the later visit win), and
    /// so are firings made here (the later one wins). Costs the members that changed, not the whole registry.
    mutating func membersChanged(_ changes: MemberChanges, at now: Timestamp) -> CoordinatorActions {
        for id in changes.removed {
            profiles[id] = nil
            promoFires[id] = nil
        }
        for (id, record) in changes.records {
            profiles[id] = profiles[id].map { CoordinatorState.keepingCounts(of: $0, in: record.profile) } ?? record.profile
        }
        for (member, promos) in changes.promoFires where profiles[member] != nil {
            var fires = promos
            for (promo, time) in promoFires[member] ?? [:] where (fires[promo]).map({ $0 < time }) ?? true { fires[promo] = time }
            promoFires[member] = fires
        }
        apply(engine.updateDirectory(changes.records.mapValues(\.beacons), removing: changes.removed), at: now)
        if changes.removed.isEmpty { cacheSchedule.changedSoon() } else { cacheSchedule.changedNow() }
        logger.debug("members changed", metadata: ["changed": "\(changes.records.count)", "removed": "\(changes.removed.count)"])
        return takeActions()
    }

    /// `registry`'s profile keeping the counts made here that the writer has not saved yet: the larger visit count
    /// (with its visit time) and the larger check-in count win.
    static func keepingCounts(of known: MemberProfile, in registry: MemberProfile) -> MemberProfile {
        var profile = registry
        if known.visits > profile.visits {
            profile.visits = known.visits
            profile.lastVisitAt = known.lastVisitAt
        }
        profile.checkins = max(known.checkins, profile.checkins)
        return profile
    }
}
