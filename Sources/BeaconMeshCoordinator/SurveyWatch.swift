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

    /// The stores whose fit changed since the last look (a new fit, or `nil`: cleared), and those whose new fit could
    /// not be read (they keep the fit they had; that version is not read again); nothing when it looked less than
    /// `interval` ago, or when the registry keeps no surveys. Throws when the versions cannot be read.
    mutating func look(at registry: any RegistryBackend, now: ContinuousClock.Instant) throws -> (
        changed: [UInt16: SurveyFit?], unreadable: [UInt16: any Error]
    ) {
        guard let surveys = registry as? any SurveyRegistry else { return ([:], [:]) }
        if let lastLook, now - lastLook < Self.interval { return ([:], [:]) }
        lastLook = now
        let current = try surveys.surveyFitVersions(stores: stores)
        var changed: [UInt16: SurveyFit?] = [:]
        var unreadable: [UInt16: any Error] = [:]
        for store in stores where current[store] != versions[store] {
            do {
                changed[store] = .some(try surveys.surveyFit(store: store))
            } catch {
                unreadable[store] = error
            }
        }
        versions = current
        return (changed, unreadable)
    }
}
