/// What a store's survey learnt: how each department sounds to the store's nodes, as a linear discriminant (each
/// department a mean pattern of relative readings, one covariance shared by all, equal priors).
///
/// `logPosteriors` gives, for one pattern of readings, the log-probability of each department; deciding it costs
/// one multiply-add per node and department. `fitness` says how well a pattern fits the department it is decided
/// in (a Mahalanobis distance), against what the survey's own samples gave (`fitnessLimit`).
public struct SurveyFit: Hashable, Sendable {
    public var store: UInt16
    /// The nodes whose readings the fit compares, in the order of its features.
    public var nodes: [SurveyNode]
    /// The departments it tells apart, ascending.
    public var departments: [UInt16]
    /// Per department, its discriminant weights (`departments.count × nodes.count`, row by row).
    public var weights: [Double]
    /// Per department, its discriminant's constant.
    public var biases: [Double]
    /// Per department, its mean pattern (`departments.count × nodes.count`).
    public var means: [Double]
    /// The shared covariance's inverse (`nodes.count × nodes.count`).
    public var inverseCovariance: [Double]
    /// The squared distance to its department's mean that 99 % of the survey's samples stay within.
    public var fitnessLimit: Double
    public var fittedAt: Timestamp
    /// The share of seconds right as estimated when it was fitted (`SurveyTraining+Estimate`).
    public var accuracy: Double
    public var samples: Int

    public init(
        store: UInt16, nodes: [SurveyNode], departments: [UInt16], weights: [Double], biases: [Double], means: [Double],
        inverseCovariance: [Double], fitnessLimit: Double, fittedAt: Timestamp, accuracy: Double, samples: Int
    ) {
        self.store = store
        self.nodes = nodes
        self.departments = departments
        self.weights = weights
        self.biases = biases
        self.means = means
        self.inverseCovariance = inverseCovariance
        self.fitnessLimit = fitnessLimit
        self.fittedAt = fittedAt
        self.accuracy = accuracy
        self.samples = samples
    }

    /// The feature index of `node`, if the survey heard it.
    public func index(of node: SurveyNode) -> Int? { nodes.firstIndex(of: node) }

    /// Fills `result` with each department's log-probability (natural log; the largest ≤ 0, they sum to 1 as
    /// probabilities) for the readings pattern `features`.
    @inlinable
    public func logPosteriors(_ features: [Double], into result: inout [Double]) {
        let width = nodes.count
        if result.count != departments.count { result = [Double](repeating: 0, count: departments.count) }
        weights.withUnsafeBufferPointer { weights in
            features.withUnsafeBufferPointer { features in
                result.withUnsafeMutableBufferPointer { result in
                    for department in 0..<departments.count {
                        var score = biases[department]
                        let row = department * width
                        for index in 0..<width { score += weights[row + index] * features[index] }
                        result[department] = score
                    }
                    Self.normalise(result)
                }
            }
        }
    }

    /// Turns discriminant scores into log-probabilities (natural log; the largest ≤ 0, they sum to 1 as
    /// probabilities), in place.
    @inlinable
    static func normalise(_ scores: UnsafeMutableBufferPointer<Double>) {
        var largest = -Double.infinity
        for score in scores { largest = max(largest, score) }
        var total = 0.0
        for index in scores.indices {
            scores[index] -= largest
            // e^-40 is below a double's precision next to the largest's 1: no need to work it out.
            if scores[index] > -40 { total += SurveyMath.exp(scores[index]) }
        }
        let logTotal = SurveyMath.log(total)
        for index in scores.indices { scores[index] -= logTotal }
    }

    /// The probability of each department for `readings` (RSSI by node; nodes the survey does not know are left
    /// out); empty when no node of the survey hears anything.
    public func probabilities(_ readings: [SurveyNode: Double]) -> [UInt16: Double] {
        var features = [Double](repeating: 0, count: nodes.count)
        let pairs = readings.map { (index: index(of: $0.key) ?? -1, rssi: $0.value) }
        guard SurveyFeatures.fill(&features, from: pairs) else { return [:] }
        var logs: [Double] = []
        logPosteriors(features, into: &logs)
        return Dictionary(uniqueKeysWithValues: zip(departments, logs.map { SurveyMath.exp($0) }))
    }

    /// The squared Mahalanobis distance of `features` from the mean pattern of the department at `department`
    /// (an index into `departments`): how unlike that department's survey the readings are.
    public func fitness(_ features: [Double], department: Int) -> Double {
        let width = nodes.count
        var difference = [Double](repeating: 0, count: width)
        for index in 0..<width { difference[index] = features[index] - means[department * width + index] }
        var total = 0.0
        for row in 0..<width {
            var sum = 0.0
            for column in 0..<width { sum += inverseCovariance[row * width + column] * difference[column] }
            total += difference[row] * sum
        }
        return total
    }
}
