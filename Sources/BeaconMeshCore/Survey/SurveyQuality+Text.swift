extension SurveyQuality {
    /// The quality report as a person reads it: seconds and stretches per department, the share right by
    /// leave-one-stretch-out, the confusion matrix (rows: where the surveyor was; columns: what the fit decided),
    /// and what to walk again.
    public var text: String {
        let count = departments.count
        let right = PresenceEngine.oneDecimal(accuracy * 100)
        var lines = ["accuracy by leave-one-stretch-out: \(right) % of \(confusion.reduce(0, +)) s"]
        lines.append("department | seconds | stretches | right")
        for (index, department) in departments.enumerated() {
            lines.append("\(department) | \(samples[index]) | \(stretches[index]) | \(PresenceEngine.oneDecimal(recall[index] * 100)) %")
        }
        lines.append("")
        lines.append("walked \\ decided | " + departments.map(String.init).joined(separator: " | "))
        for (row, department) in departments.enumerated() {
            lines.append("\(department) | " + (0..<count).map { String(confusion[row * count + $0]) }.joined(separator: " | "))
        }
        let walk = needsWalking
        lines.append("")
        if walk.isEmpty {
            lines.append("every department is walked enough")
        } else {
            for item in walk { lines.append("walk department \(item.department) again: \(item.why)") }
        }
        return lines.joined(separator: "\n")
    }
}
