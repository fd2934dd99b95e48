import BeaconMeshCore
import Foundation

/// Renders the analytics object as readable plain text for `report` (without `--json`): the period, the visits,
/// then one table per section.
public enum AnalyticsTable {
    public static func render(_ analytics: StoreAnalytics, timeZone: TimeZone = .current) -> String {
        let formatter = DateFormatter()
        formatter.timeZone = timeZone
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        func time(_ timestamp: Timestamp) -> String {
            formatter.string(from: Date(timeIntervalSince1970: Double(timestamp.milliseconds) / 1000))
        }
        let visits = analytics.visits
        var lines = [
            "Store \(analytics.store), \(time(analytics.from)) to \(time(analytics.to))",
            "Members: \(visits.members) (new \(visits.newMembers), repeat \(visits.repeatMembers)); guest visits: \(visits.guests)",
            "Visit length: median \(DurationText.spoken(seconds: analytics.dwell.median)), p90 \(DurationText.spoken(seconds: analytics.dwell.p90))",
            "Check-ins: \(analytics.checkins.count) in \(analytics.checkins.visitsWithCheckin) visits",
        ]
        lines.append("")
        lines.append(
            TextColumns.render(
                ["HOUR", "MEMBER VISITS", "GUEST VISITS"],
                analytics.hourly.map { [time($0.hour), String($0.members), String($0.guests)] }))
        lines.append("")
        lines.append(
            TextColumns.render(
                ["DEPARTMENT", "NAME", "VISITS", "MEDIAN", "P90", "TOTAL"],
                analytics.departments.map {
                    [
                        String($0.department), $0.name, String($0.visits), DurationText.spoken(seconds: $0.dwell.median),
                        DurationText.spoken(seconds: $0.dwell.p90), DurationText.spoken(seconds: $0.dwell.total ?? 0),
                    ]
                }))
        lines.append("")
        lines.append(
            TextColumns.render(["FROM", "TO", "WALKS"], analytics.flows.map { [String($0.from), String($0.to), String($0.count)] }))
        lines.append("")
        lines.append(
            TextColumns.render(
                ["PROMO", "DEPARTMENT", "OFFERS", "CHECK-IN AFTER"],
                analytics.promos.map { [$0.id, String($0.department), String($0.offers), String($0.visitsWithCheckinAfter)] }))
        return lines.joined(separator: "\n")
    }
}
