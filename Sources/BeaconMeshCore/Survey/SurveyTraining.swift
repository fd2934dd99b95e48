/// Learns a store's `SurveyFit` from its samples and says how good it is (`SurveyQuality`): each block of a stretch
/// (an unbroken run of one beacon's samples in one department) decided by a fit of all the other samples, through the
/// belief over departments (`SurveyTraining+Estimate`); a refit is judged by leave-one-stretch-out
/// (`SurveyTraining+Refit`).
///
/// A linear discriminant fits in closed form: class sums and one scatter matrix, so holding a stretch out is a
/// subtraction and one small matrix inversion, and an hour of samples of 20 departments fits in well under a second.
public struct SurveyTraining: Sendable {
    /// The fewest seconds of samples a department needs.
    public static let minimumSeconds = 20
    /// Samples of one beacon further apart than this start a new stretch.
    public static let stretchGap: Int64 = 5_000
    /// Added to the covariance's diagonal (dB²): keeps it invertible with few samples and keeps a node that always
    /// read the same from being trusted absolutely.
    public static let shrinkage = 4.0

    public let store: UInt16
    public let nodes: [SurveyNode]
    public let departments: [UInt16]
    /// Per sample: its department's index, its stretch, its features.
    let labels: [Int]
    let stretchOf: [Int]
    let features: [[Double]]
    /// The samples, in the order of `labels`.
    let samples: [SurveySample]
    public let stretches: Int

    /// Prepares `samples` of `store` (samples of other stores are ignored). Throws when there are none, or when a
    /// department has fewer than `minimumSeconds` of them.
    public init(samples: [SurveySample], store: UInt16) throws(SurveyFitError) {
        let mine = samples.filter { $0.store == store }.sorted { ($0.beacon.description, $0.at) < ($1.beacon.description, $1.at) }
        guard !mine.isEmpty else { throw .noSamples(store: store) }
        var counts: [UInt16: Int] = [:]
        var heard: [SurveyNode: Int] = [:]
        for sample in mine {
            counts[sample.department, default: 0] += 1
            for node in sample.readings.keys { heard[node, default: 0] += 1 }
        }
        if let thin = counts.filter({ $0.value < Self.minimumSeconds }).min(by: { $0.key < $1.key }) {
            throw .tooFewSamples(store: store, department: thin.key, seconds: thin.value)
        }
        self.store = store
        departments = counts.keys.sorted()
        nodes = heard.keys.sorted()
        let departmentIndex = Dictionary(uniqueKeysWithValues: departments.enumerated().map { ($1, $0) })
        let nodeIndex = Dictionary(uniqueKeysWithValues: nodes.enumerated().map { ($1, $0) })
        var labels: [Int] = []
        var stretchOf: [Int] = []
        var features: [[Double]] = []
        var stretch = -1
        var previous: SurveySample?
        for sample in mine {
            if let previous, previous.beacon == sample.beacon, previous.department == sample.department,
                sample.at.milliseconds - previous.at.milliseconds <= Self.stretchGap
            {
            } else {
                stretch += 1
            }
            previous = sample
            var row = [Double](repeating: 0, count: nodes.count)
            _ = SurveyFeatures.fill(&row, from: sample.readings.map { (index: nodeIndex[$0.key]!, rssi: $0.value) })
            labels.append(departmentIndex[sample.department]!)
            stretchOf.append(stretch)
            features.append(row)
        }
        self.labels = labels
        self.stretchOf = stretchOf
        self.features = features
        self.samples = mine
        stretches = stretch + 1
    }

    /// Fits all samples, and measures the fit as its decisions will run: each block of seconds decided by a fit of
    /// the others, through the belief over departments (`heldOutEvidence`, `temporalDecisions`).
    public func fit(at time: Timestamp) throws(SurveyFitError) -> (fit: SurveyFit, quality: SurveyQuality) {
        let all = Sums(features: features, labels: labels, departments: departments.count, including: { _ in true })
        guard var fit = model(from: all, at: time) else { throw .singular(store: store) }
        let width = departments.count
        var confusion = [Int](repeating: 0, count: width * width)
        for (index, decided) in temporalDecisions(heldOutEvidence(at: time)).enumerated() where decided >= 0 {
            confusion[labels[index] * width + decided] += 1
        }
        let right = (0..<width).reduce(0) { $0 + confusion[$1 * width + $1] }
        let decided = confusion.reduce(0, +)
        fit.accuracy = decided > 0 ? Double(right) / Double(decided) : 0
        var distances = features.indices.map { fit.fitness(features[$0], department: labels[$0]) }
        distances.sort()
        fit.fitnessLimit = distances[min(distances.count - 1, Int(Double(distances.count) * 0.99))]
        let quality = SurveyQuality(
            store: store, departments: departments,
            samples: departments.indices.map { department in labels.lazy.filter { $0 == department }.count },
            stretches: departments.indices.map { department in
                Set(labels.indices.lazy.filter { labels[$0] == department }.map { stretchOf[$0] }).count
            },
            confusion: confusion, accuracy: fit.accuracy)
        return (fit, quality)
    }

    /// Per sample, the department index a fit of all the other stretches decides it (`-1`: none could, its
    /// stretch held every sample of the store's other departments).
    func heldOutDecisions(at time: Timestamp) -> [Int] {
        let all = Sums(features: features, labels: labels, departments: departments.count, including: { _ in true })
        let width = departments.count
        var decisions = [Int](repeating: -1, count: features.count)
        var logs: [Double] = []
        for stretch in 0..<stretches {
            let members = features.indices.filter { stretchOf[$0] == stretch }
            var held = all
            for index in members { held.remove(features[index], label: labels[index]) }
            guard let fold = model(from: held, at: time) else { continue }
            for index in members {
                fold.logPosteriors(features[index], into: &logs)
                // A department with no sample left in the fold cannot be decided.
                var best = -1
                for department in 0..<width where held.counts[department] > 0 && (best < 0 || logs[department] > logs[best]) {
                    best = department
                }
                decisions[index] = best
            }
        }
        return decisions
    }

    /// The discriminant of the samples summed in `sums` (departments without samples get no say).
    func model(from sums: Sums, at time: Timestamp) -> SurveyFit? {
        let width = nodes.count
        let classes = departments.count
        let present = (0..<classes).filter { sums.counts[$0] > 0 }
        let total = present.reduce(0) { $0 + sums.counts[$1] }
        guard total > present.count else { return nil }
        var means = [Double](repeating: 0, count: classes * width)
        for department in present {
            for index in 0..<width {
                means[department * width + index] = sums.sums[department * width + index] / Double(sums.counts[department])
            }
        }
        // Pooled within-department covariance: Σ x xᵀ − Σ n_k μ_k μ_kᵀ, over N − K, plus the shrinkage.
        var covariance = sums.products
        for department in present {
            let n = Double(sums.counts[department])
            for row in 0..<width {
                let meanRow = means[department * width + row]
                for column in 0..<width { covariance[row * width + column] -= n * meanRow * means[department * width + column] }
            }
        }
        let degrees = Double(total - present.count)
        for index in covariance.indices { covariance[index] /= degrees }
        for index in 0..<width { covariance[index * width + index] += Self.shrinkage }
        guard let inverse = SurveyMath.inverseOfPositiveDefinite(covariance, size: width) else { return nil }
        var weights = [Double](repeating: 0, count: classes * width)
        var biases = [Double](repeating: -1e9, count: classes)
        for department in present {
            var bias = 0.0
            for row in 0..<width {
                var sum = 0.0
                for column in 0..<width { sum += inverse[row * width + column] * means[department * width + column] }
                weights[department * width + row] = sum
                bias -= 0.5 * sum * means[department * width + row]
            }
            biases[department] = bias
        }
        return SurveyFit(
            store: store, nodes: nodes, departments: departments, weights: weights, biases: biases, means: means,
            inverseCovariance: inverse, fitnessLimit: 0, fittedAt: time, accuracy: 0, samples: total)
    }

    /// Per department, how many samples and the sum of their features; over all, the sum of outer products.
    struct Sums {
        var counts: [Int]
        var sums: [Double]
        var products: [Double]
        let width: Int

        init(features: [[Double]], labels: [Int], departments: Int, including: (Int) -> Bool) {
            width = features.first?.count ?? 0
            counts = [Int](repeating: 0, count: departments)
            sums = [Double](repeating: 0, count: departments * width)
            products = [Double](repeating: 0, count: width * width)
            for index in features.indices where including(index) { add(features[index], label: labels[index], sign: 1) }
        }

        mutating func remove(_ row: [Double], label: Int) { add(row, label: label, sign: -1) }

        private mutating func add(_ row: [Double], label: Int, sign: Double) {
            counts[label] += sign > 0 ? 1 : -1
            for index in 0..<width { sums[label * width + index] += sign * row[index] }
            for i in 0..<width where row[i] != 0 {
                let scaled = sign * row[i]
                for j in 0..<width { products[i * width + j] += scaled * row[j] }
            }
        }
    }
}

/// Why a survey could not be fitted: one line for the person surveying.
public enum SurveyFitError: Error, Equatable, CustomStringConvertible {
    case noSamples(store: UInt16)
    case tooFewSamples(store: UInt16, department: UInt16, seconds: Int)
    case singular(store: UInt16)
    /// The refit decides the truth gathered since the installed fit worse than the installed fit does.
    case worseThanInstalled(store: UInt16, RefitComparison)

    public var description: String {
        switch self {
        case .noSamples(let store): "store \(store) has no survey samples: walk it first (survey mark or survey import)"
        case .tooFewSamples(let store, let department, let seconds):
            "department \(department) of store \(store) has \(seconds) s of survey samples, fewer than \(SurveyTraining.minimumSeconds) s: walk it more"
        case .singular(let store): "the survey samples of store \(store) are too few or too alike to tell departments apart"
        case .worseThanInstalled(let store, let comparison):
            "keeping store \(store)'s installed fit: of the \(comparison.seconds) s of samples gathered since it was fitted, the refit decides \(Self.percent(comparison.refit)) right, the installed fit \(Self.percent(comparison.installed))"
        }
    }

    private static func percent(_ share: Double) -> String { "\(Int((share * 100).rounded())) %" }
}
