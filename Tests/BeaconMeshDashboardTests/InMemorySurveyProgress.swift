import BeaconMeshCore
import BeaconMeshRegistry
import Synchronization

@testable import BeaconMeshDashboard

/// Seconds of survey samples per department of each store, as the registry would answer them; set `failure` to make
/// every read fail with that text (a database that does not answer).
final class InMemorySurveyProgress: SurveyProgressReading {
    let seconds = Mutex<[UInt16: [UInt16: Int]]>([:])
    let failure = Mutex<String?>(nil)
    /// Whose each beacon is, as the registry would say.
    let owners = Mutex<[BeaconKey: SurveyBeaconOwner]>([:])

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    func surveySeconds(store: UInt16) async throws -> [UInt16: Int] {
        if let failure = failure.withLock({ $0 }) { throw Failure(description: failure) }
        return seconds.withLock { $0[store] ?? [:] }
    }

    func surveyBeacons(_ beacons: Set<BeaconKey>, store: UInt16) async throws -> [BeaconKey: SurveyBeaconOwner] {
        if let failure = failure.withLock({ $0 }) { throw Failure(description: failure) }
        return owners.withLock { owners in owners.filter { beacons.contains($0.key) } }
    }
}
