import BeaconMeshCore
import Foundation

/// Visits per local hour of the day: today's, against the average of the same weekday in the weeks before — the
/// analytics page's first chart. Made from the hourly rows the database computed (at most 24 × 29 of them).
struct HourOfDayProfile: Equatable {
    /// How many earlier weeks the average covers.
    static let weeks = 4

    /// Visits (members and guests) started in each local hour of today.
    var today: [Double]
    /// The average over the same weekday of the `weeks` weeks before.
    var sameWeekdayAverage: [Double]
    /// The weekday's name ("Monday").
    var weekday: String

    /// The start of today and of the `weeks` weeks before it, in `calendar`, at `now`.
    static func periods(at now: Timestamp, calendar: Calendar) -> (today: AnalyticsPeriodBounds, before: AnalyticsPeriodBounds) {
        let date = Date(timeIntervalSince1970: Double(now.milliseconds) / 1000)
        let start = calendar.startOfDay(for: date)
        let end = calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400)
        let earlier = calendar.date(byAdding: .day, value: -7 * weeks, to: start) ?? start.addingTimeInterval(-7 * 86_400 * Double(weeks))
        return ((stamp(start), stamp(end)), (stamp(earlier), stamp(start)))
    }

    /// The profile of `today`'s hourly rows against `before`'s (the `weeks` weeks before), in `calendar`.
    init(today: [StoreAnalytics.Hour], before: [StoreAnalytics.Hour], at now: Timestamp, calendar: Calendar) {
        func hourAndWeekday(_ time: Timestamp) -> (hour: Int, weekday: Int) {
            let parts = calendar.dateComponents([.hour, .weekday], from: Date(timeIntervalSince1970: Double(time.milliseconds) / 1000))
            return (parts.hour ?? 0, parts.weekday ?? 1)
        }
        let weekday = hourAndWeekday(now).weekday
        var todayCounts = Array(repeating: 0.0, count: 24)
        for row in today { todayCounts[hourAndWeekday(row.hour).hour] += Double(row.members + row.guests) }
        var past = Array(repeating: 0.0, count: 24)
        for row in before {
            let (hour, day) = hourAndWeekday(row.hour)
            if day == weekday { past[hour] += Double(row.members + row.guests) }
        }
        self.today = todayCounts
        sameWeekdayAverage = past.map { $0 / Double(Self.weeks) }
        let names = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
        self.weekday = names.indices.contains(weekday - 1) ? names[weekday - 1] : "weekday"
    }

    private static func stamp(_ date: Date) -> Timestamp { Timestamp(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded())) }
}

/// A period's two ends.
typealias AnalyticsPeriodBounds = (from: Timestamp, to: Timestamp)
