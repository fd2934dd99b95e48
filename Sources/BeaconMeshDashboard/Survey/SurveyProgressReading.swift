import BeaconMeshCore
import BeaconMeshRegistry

/// Where the survey page reads how much of a store has been surveyed — the seconds of survey samples the registry
/// holds for each of the store's departments — and whose the beacons it hears are (the registry behind `--db`; an
/// in-memory one in tests).
///
/// A department with no samples may be left out. A failure is shown on the page and answered 503, naming the error.
public protocol SurveyProgressReading: Sendable {
    /// The seconds of samples gathered so far in each department of `store`.
    func surveySeconds(store: UInt16) async throws -> [UInt16: Int]

    /// Whose each of `beacons` is: a member's (id and name) or a reference of `store`; others left out.
    func surveyBeacons(_ beacons: Set<BeaconKey>, store: UInt16) async throws -> [BeaconKey: SurveyBeaconOwner]
}
