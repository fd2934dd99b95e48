import BeaconMeshCore

/// Reads a survey's rows back into Core values, the same on every backend: a row that does not read is a damaged
/// database, said in words that name the store and the row, never skipped without a word.
enum SurveyRows {
    /// The sample in one `survey_sample` row.
    static func sample(
        store: UInt16, beacon: String, department: Int64, at: Int64, readings: String, source: String
    ) throws(RegistryFailure) -> SurveySample {
        guard let key = BeaconKey(beacon), let department = UInt16(exactly: department),
            let values = SurveySample.readings(fromText: readings), let source = SurveySample.Source(rawValue: source)
        else {
            throw RegistryFailure(
                .damaged, "a survey sample of store \(store) (beacon '\(beacon)', at \(at)) is unreadable: run survey clear and walk again")
        }
        return SurveySample(
            store: store, beacon: key, department: department, at: Timestamp(milliseconds: at), readings: values, source: source)
    }

    /// The fit in one `survey_fit` row's bytes.
    static func fit(store: UInt16, bytes: [UInt8]) throws(RegistryFailure) -> SurveyFit {
        guard let fit = SurveyFit(encoded: bytes), fit.store == store else {
            throw RegistryFailure(
                .damaged,
                "the survey fit kept for store \(store) is not one this version reads (\(bytes.count) bytes): run survey fit again")
        }
        return fit
    }
}
