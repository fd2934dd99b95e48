import BeaconMeshCore
import BeaconMeshRegistry

/// The survey page's seconds per department and the owners of the beacons it lists, read from the registry behind `--db` (off the event loop, as analytics
/// are).
public struct RegistrySurveyProgress: SurveyProgressReading {
    let registry: any SurveyRegistry

    public init(registry: any SurveyRegistry) {
        self.registry = registry
    }

    public func surveySeconds(store: UInt16) async throws -> [UInt16: Int] {
        try await readOffTheEventLoop { [registry] in try registry.surveySeconds(store: store) }
    }

    public func surveyBeacons(_ beacons: Set<BeaconKey>, store: UInt16) async throws -> [BeaconKey: SurveyBeaconOwner] {
        guard !beacons.isEmpty else { return [:] }
        return try await readOffTheEventLoop { [registry] in try registry.surveyBeacons(beacons, store: store) }
    }
}
