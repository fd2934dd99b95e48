import BeaconMeshCore
import BeaconMeshRegistry

/// Notices new survey fits and cleared surveys of the coordinator's stores in the registry (a `survey fit` or
/// `survey clear` from anywhere), for the registry poll to hand to the decisions within seconds, without a restart.
///
/// Each look reads only the stores' fit versions, a small query, and a fit itself only when its version changed.
struct SurveyWatch: Sendable {
    let stores: Set<UInt16>
    /// The references of the stores that have them, whose baselines come with each new fit (`ReferenceDrift`).
    let references: [UInt16: Set<BeaconKey>]
    /// The fit version of each store as last handed over (absent: no fit).
    private var versions: [UInt16: Int64] = [:]
    private var lastLook: ContinuousClock.Instant?
    /// How often it looks at most.
    static let interval: Duration = .seconds(1)

    init(stores: Set<UInt16>, references: [UInt16: Set<BeaconKey>] = [:]) {
        self.stores = stores
        self.references = references
    }

    /// The stores whose fit changed since the last look (a new fit, or `nil`: cleared), with the baselines of their
    /// references in the samples of a new fit, and those whose new fit could not be read (they keep the fit they had;
    /// that version is not read again); nothing when it looked less than `interval` ago.
    /// Throws when the versions cannot be read.
    mutating func look(at surveys: any SurveyRegistry, now: ContinuousClock.Instant) throws -> (
        changed: [UInt16: SurveyFit?], baselines: [UInt16: ReferenceDrift.Baseline], unreadable: [UInt16: any Error]
    ) {
        if let lastLook, now - lastLook < Self.interval { return ([:], [:], [:]) }
        lastLook = now
        let current = try surveys.surveyFitVersions(stores: stores)
        var changed: [UInt16: SurveyFit?] = [:]
        var baselines: [UInt16: ReferenceDrift.Baseline] = [:]
        var unreadable: [UInt16: any Error] = [:]
        for store in stores where current[store] != versions[store] {
            do {
                let fit = try surveys.surveyFit(store: store)
                if let fit, let references = references[store] {
                    baselines[store] = ReferenceDrift.baseline(
                        from: try surveys.surveySamples(store: store), references: references, before: fit.fittedAt)
                }
                changed[store] = .some(fit)
            } catch {
                unreadable[store] = error
            }
        }
        versions = current
        return (changed, baselines, unreadable)
    }
}
