import BeaconMeshCoordinator
import BeaconMeshCore
import Foundation

/// Renders a store's survey as plain text for `survey fit` and `survey show` (without `--json`): what the person
/// who walked it needs to read — seconds per department, how often the fit was right, where it was wrong, and which
/// departments to walk again.
enum SurveyTable {
    /// `survey fit`: the quality of the fit learnt at `fittedAt`.
    static func render(_ quality: SurveyQuality, fittedAt: Timestamp, timeZone: TimeZone = .current) -> String {
        let departments = quality.departments
        let count = departments.count
        let recall = quality.recall
        var lines = [
            "Store \(quality.store): fit learnt \(time(fittedAt, timeZone)) from \(quality.samples.reduce(0, +)) s of samples in \(count) departments",
            "Right as the decisions will run, each 15 s left out and decided by the others: \(percent(quality.accuracy)) of the seconds",
            "",
            TextColumns.render(
                ["DEPARTMENT", "SECONDS", "STRETCHES", "RIGHT"],
                departments.indices.map {
                    [String(departments[$0]), String(quality.samples[$0]), String(quality.stretches[$0]), percent(recall[$0])]
                }),
            "",
            "Seconds by where the surveyor was (rows) and what was decided (columns):",
            TextColumns.render(
                ["WAS \\ DECIDED"] + departments.map(String.init),
                departments.indices.map { truth in
                    [String(departments[truth])] + (0..<count).map { String(quality.confusion[truth * count + $0]) }
                }),
            "",
        ]
        let walk = quality.needsWalking
        if walk.isEmpty {
            lines.append("No department needs more walking.")
        } else {
            lines.append("Walk again:")
            lines += walk.map { "  \($0.department): \($0.why)" }
        }
        return lines.joined(separator: "\n")
    }

    /// `survey show`: the seconds kept per department and the fit, if any.
    static func render(store: UInt16, seconds: [UInt16: Int], fit: SurveyFit?, timeZone: TimeZone = .current) -> String {
        let sorted = seconds.sorted { $0.key < $1.key }
        var lines = [
            "Store \(store): \(sorted.reduce(0) { $0 + $1.value }) s of survey samples in \(sorted.count) departments",
            TextColumns.render(["DEPARTMENT", "SECONDS"], sorted.map { [String($0.key), String($0.value)] }),
        ]
        if let fit {
            lines.append(
                "Fit: learnt \(time(fit.fittedAt, timeZone)) from \(fit.samples) s; \(percent(fit.accuracy)) right as estimated when fitted"
            )
        } else {
            lines.append("Fit: none (the store is decided without a survey; run survey fit)")
        }
        return lines.joined(separator: "\n")
    }

    private static func time(_ timestamp: Timestamp, _ timeZone: TimeZone) -> String {
        let formatter = DateFormatter()
        formatter.timeZone = timeZone
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: Double(timestamp.milliseconds) / 1000))
    }

    private static func percent(_ share: Double) -> String {
        String(format: "%.1f %%", share * 100)
    }

}
