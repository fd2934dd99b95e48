import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Logging

/// What the decisions start from: the registry's contents, visits, handled check-ins, history and survey fits, read by
/// the shell before the state is made (or the local cache's, `CoordinatorState+Cache`).
extension CoordinatorState {
    /// What the state starts from, as the registry held it at start.
    struct Start: Sendable {
        /// Members, beacon owners and promo history.
        var contents: RegistryContents
        /// Visits open (or recently left) at the last stop.
        var visits: [PresenceEngine.Visit]
        /// Ids of check-in requests handled within `checkinMemory`.
        var handledCheckins: Set<String>
        /// The visits the history keeps as going on (those of `visits` go on being written under the same key).
        var history: [VisitRecord] = []
        /// The survey fits of the stores that have one.
        var surveys: [UInt16: SurveyFit] = [:]
        /// The survey marks held at the last stop.
        var surveyMarks: [SurveyMarkRecord] = []
        /// Started from the local cache (the database could not be reached): the leases held when it was saved. Those
        /// nobody stood by for are decided at once, as they were; the database keeps them for their holder.
        var cachedLeases: [UInt16: LeaseGrant]? = nil

        /// Reads what a state starts from out of `registry` (at `now`).
        static func read(from registry: any RegistryReading & SurveyRegistry, stores: Set<UInt16>? = nil, at now: Timestamp) throws -> Start
        {
            var surveys: [UInt16: SurveyFit] = [:]
            var marks: [SurveyMarkRecord] = []
            if let stores {
                // A fit that cannot be read leaves its store uncalibrated; the registry poll logs why at its first look.
                for store in try registry.surveyFitVersions(stores: stores).keys {
                    surveys[store] = (try? registry.surveyFit(store: store)) ?? nil
                }
                marks = try registry.surveyMarks(stores: stores)
            }
            return Start(
                contents: try registry.contents(), visits: try registry.loadVisits(stores: stores),
                handledCheckins: try registry.checkinRequests(since: now - CoordinatorState.checkinMemory),
                history: try registry.openHistory(stores: stores), surveys: surveys, surveyMarks: marks)
        }
    }
}
