import BeaconMeshCore

/// Keeps each store's survey: the samples a survey walk gathered (one a second) and the fit `survey fit` learnt
/// from them — one behaviour whatever keeps it (`SQLiteRegistry`, `PostgresRegistry`).
///
/// Every call blocks until the database answered and is one transaction, as `MemberRegistry`'s do. Samples carry a
/// beacon key but no member: `MemberRegistry.forget` deletes the samples of the forgotten member's beacons. A running
/// coordinator adds its live samples through its `RegistryWriter` (`RegistryChanges.addSurveySamples`), and notices a
/// new fit or a cleared one by polling `surveyFitVersions`.
public protocol SurveyRegistry: AnyObject, Sendable {
    /// Adds `samples` (of any stores) in one transaction; a sample of the same store, beacon and time as one already
    /// kept is the same second, and is skipped.
    func addSurveySamples(_ samples: [SurveySample]) throws

    /// Every sample of `store`, ordered by beacon and time.
    func surveySamples(store: UInt16) throws -> [SurveySample]

    /// How many seconds of samples `store` has in each department it has any (one sample is one second).
    func surveySeconds(store: UInt16) throws -> [UInt16: Int]
    /// The store's seconds of samples per department and where their department came from.
    func surveySecondsBySource(store: UInt16) throws -> [UInt16: [SurveySample.Source: Int]]

    /// Keeps `fit` as its store's fit, replacing the one kept before, and changes the store's fit version.
    func saveSurveyFit(_ fit: SurveyFit) throws

    /// The fit kept for `store`, or `nil` if it has none. Throws when the kept bytes are not a fit this version reads.
    func surveyFit(store: UInt16) throws -> SurveyFit?

    /// For each store of `stores` (all if `nil`) that ever had a fit, a number that changes whenever its fit is saved
    /// or cleared: a cheap query that a running coordinator polls, reading the fit only when its store's number moved.
    /// A store missing here has never had a fit.
    func surveyFitVersions(stores: Set<UInt16>?) throws -> [UInt16: Int64]

    /// Who each of `beacons` is, for the survey page's list of what a store hears: a member's (her id and name), or
    /// one of `store`'s references (the department its reference samples name). Beacons of neither are left out.
    func surveyMarks(stores: Set<UInt16>?) throws -> [SurveyMarkRecord]

    func surveyBeacons(_ beacons: Set<BeaconKey>, store: UInt16) throws -> [BeaconKey: SurveyBeaconOwner]

    /// Deletes `store`'s samples and its fit (a fit deleted changes the store's fit version); returns how many samples
    /// went and whether a fit did.
    @discardableResult
    func clearSurvey(store: UInt16) throws -> (samples: Int, fit: Bool)
}

extension SurveyRegistry {
    /// The fit version of every store that has one (`surveyFitVersions(stores: nil)`).
    public func surveyFitVersions() throws -> [UInt16: Int64] { try surveyFitVersions(stores: nil) }
}

/// Whose a beacon a store hears is, as the survey page names it.
public enum SurveyBeaconOwner: Hashable, Sendable {
    /// A member's fob or phone.
    case member(id: String, name: String)
    /// A reference placed in `department` (`references:`).
    case reference(department: UInt16)
}
