import BeaconMeshCore
import BeaconMeshRegistry

/// Notices new survey fits and cleared surveys of the coordinator's stores in the registry (a `survey fit` or
/// `survey clear` from anywhere), for the registry poll to hand to the decisions within seconds, without a restart.
///
/// Each look reads only the stores' fit versions, a small query, and a fit itself only when its version changed.
struct SurveyWatch: Sendable {
    let stores: Set<UInt16>
    /// The fit version of each store as last handed over (absent: no fit).
    private var versions: [UInt16: Int64] = [:]
    private var lastLook: ContinuousClock.Instant?
    /// How often it looks at most.
    static let interval: Duration = .seconds(1)

    init(stores: Set<UInt16>) {
        self.stores = stores
    }

    /// The stores whose fit changed since the last look (a new fit, or `nil`: cleared); empty when nothing did, when
    /// it looked less than `interval` ago, or when the registry keeps no surveys.
    mutating func look(at registry: any MemberRegistry, now: ContinuousClock.Instant) throws -> [UInt16: SurveyFit?] {
        guard let surveys = registry as? any SurveyRegistry else { return [:] }
        if let lastLook, now - lastLook < Self.interval { return [:] }
        lastLook = now
        let current = try surveys.surveyFitVersions(stores: stores)
        var changed: [UInt16: SurveyFit?] = [:]
        for store in stores where current[store] != versions[store] {
            changed[store] = current[store] == nil ? .some(nil) : .some(try surveys.surveyFit(store: store))
        }
        versions = current
        return changed
    }
}
