/// How a survey turns what the nodes hear into numbers to compare: per node of the survey, its RSSI relative to the
/// strongest node that hears the beacon now (0 for the strongest, down to `floor`), or `notHeard` when it does not.
///
/// Relative readings make a fit hold for a phone or fob weaker or stronger than the one walked for the survey: a
/// beacon 8 dB weaker shifts every node's reading alike, and the pattern stays.
public enum SurveyFeatures {
    /// The weakest relative reading kept, in dB below the strongest node: anything weaker is as good as unheard.
    public static let floor = -30.0
    /// The value of a node that does not hear the beacon: below every reading it could have.
    public static let notHeard = -35.0

    /// Fills `features` (one per node of the survey, in its order) from `(feature index, RSSI)` pairs; returns
    /// whether any node of the survey hears the beacon.
    @inlinable
    public static func fill<Readings: Sequence>(_ features: inout [Double], from readings: Readings) -> Bool
    where Readings.Element == (index: Int, rssi: Double) {
        var strongest = -Double.infinity
        for reading in readings where reading.index >= 0 { strongest = max(strongest, reading.rssi) }
        for index in features.indices { features[index] = notHeard }
        guard strongest > -Double.infinity else { return false }
        for reading in readings where reading.index >= 0 {
            features[reading.index] = max(floor, reading.rssi - strongest)
        }
        return true
    }
}
