import BeaconMeshRegistry

/// The survey page's seconds per department, read from the registry behind `--db` (off the event loop, as analytics
/// are).
public struct RegistrySurveyProgress: SurveyProgressReading {
    let registry: any SurveyRegistry

    public init(registry: any SurveyRegistry) {
        self.registry = registry
    }

    public func surveySeconds(store: UInt16) async throws -> [UInt16: Int] {
        try await readOffTheEventLoop { [registry] in try registry.surveySeconds(store: store) }
    }
}
