/// The drift check of surveyed stores (the contract's `surveys[].drift`): how each node hears the store's references
/// now against how it heard them in the samples the fit was learnt from. A reference is a fixed beacon, so a node
/// whose readings of it moved by `threshold` dB or more was knocked, turned or moved (or something now stands
/// between them), and the fit no longer describes it (a pure value: samples in, drift out).
public struct ReferenceDrift: Sendable {
    /// Per reference, each node's mean RSSI (dBm) of it in the fit's samples.
    public typealias Baseline = [BeaconKey: [SurveyNode: Double]]

    /// A node's readings of a reference this far (dB) from its baseline count as drift.
    public static let threshold = 6.0
    /// Samples of a reference (10 s apart) a node needs before its drift is told: a minute.
    public static let minimumSamples = 6
    /// The recent level is the mean of about this many latest samples (five minutes of a reference).
    static let window = 30

    private var baselines: [UInt16: Baseline] = [:]
    /// Per reference and node: the recent mean RSSI and how many samples it holds (up to `window`).
    private var recent: [BeaconKey: [SurveyNode: (mean: Double, count: Int)]] = [:]

    public init() {}

    /// The baseline of `references` in `samples`: each node's mean reading of each, counting samples up to `before`
    /// (those the fit was learnt from).
    public static func baseline(from samples: [SurveySample], references: Set<BeaconKey>, before: Timestamp) -> Baseline {
        var sums: [BeaconKey: [SurveyNode: (total: Double, count: Int)]] = [:]
        for sample in samples where references.contains(sample.beacon) && sample.at <= before {
            for (node, rssi) in sample.readings {
                let sum = sums[sample.beacon]?[node] ?? (0, 0)
                sums[sample.beacon, default: [:]][node] = (sum.total + rssi, sum.count + 1)
            }
        }
        return sums.mapValues { nodes in nodes.mapValues { $0.total / Double($0.count) } }
    }

    /// Compares `store`'s references with `baseline` from now on (`nil`: no fit, nothing to compare with); what was
    /// heard of them before starts over.
    public mutating func setBaseline(_ baseline: Baseline?, store: UInt16) {
        for beacon in (baselines[store] ?? [:]).keys { recent[beacon] = nil }
        baselines[store] = baseline
        for beacon in (baseline ?? [:]).keys { recent[beacon] = nil }
    }

    /// Takes in one sample of a reference (others are ignored).
    public mutating func record(_ sample: SurveySample) {
        guard baselines[sample.store]?[sample.beacon] != nil else { return }
        for (node, rssi) in sample.readings {
            let held = recent[sample.beacon]?[node] ?? (0, 0)
            let count = min(held.count + 1, Self.window)
            recent[sample.beacon, default: [:]][node] = (held.mean + (rssi - held.mean) / Double(count), count)
        }
    }

    /// The nodes of `store` whose readings of a reference moved by `threshold` dB or more from the baseline, each
    /// with its largest move (rounded to a tenth of a dB), the largest first.
    public func drift(store: UInt16) -> [SurveyStatus.Drift] {
        var largest: [SurveyNode: Double] = [:]
        for (beacon, baseline) in baselines[store] ?? [:] {
            for (node, heard) in recent[beacon] ?? [:] where heard.count >= Self.minimumSamples {
                guard let expected = baseline[node] else { continue }
                let moved = heard.mean - expected
                if abs(moved) >= Self.threshold && abs(moved) > abs(largest[node] ?? 0) { largest[node] = moved }
            }
        }
        return largest.map { SurveyStatus.Drift(node: $0.key.node, department: $0.key.department, db: ($0.value * 10).rounded() / 10) }
            .sorted { (abs($0.db), $1.department, $1.node) > (abs($1.db), $0.department, $0.node) }
    }
}
