/// How good a store's fit is, for the person who walked the survey: samples per department, seconds right by
/// leaving out each block of seconds and deciding it as the coordinator will (`SurveyTraining+Estimate`), the confusion matrix, and which departments to walk again.
public struct SurveyQuality: Hashable, Sendable {
    public var store: UInt16
    public var departments: [UInt16]
    /// Seconds of samples per department (in `departments` order).
    public var samples: [Int]
    /// Separate stretches walked per department.
    public var stretches: [Int]
    /// `confusion[truth × count + decided]`: held-out seconds of each department decided as each.
    public var confusion: [Int]
    public var accuracy: Double

    public init(store: UInt16, departments: [UInt16], samples: [Int], stretches: [Int], confusion: [Int], accuracy: Double) {
        self.store = store
        self.departments = departments
        self.samples = samples
        self.stretches = stretches
        self.confusion = confusion
        self.accuracy = accuracy
    }

    /// Per department, the share of its held-out seconds decided right.
    public var recall: [Double] {
        departments.indices.map { row in
            let total = departments.indices.reduce(0) { $0 + confusion[row * departments.count + $1] }
            return total > 0 ? Double(confusion[row * departments.count + row]) / Double(total) : 0
        }
    }

    /// Departments to walk again, with why: under a minute, or under 90 % of its held-out seconds right (the
    /// estimate decides each department as the coordinator will, so a department walked once that decides well is
    /// not named: issue 51).
    public var needsWalking: [(department: UInt16, why: String)] {
        departments.indices.compactMap { index in
            let department = departments[index]
            if samples[index] < 60 { return (department, "only \(samples[index]) s: walk it for a minute or more") }
            let right = recall[index]
            if right < 0.9 {
                return (department, "\(Int((right * 100).rounded())) % of its seconds decided right: walk its corners and edges")
            }
            return nil
        }
    }
}
