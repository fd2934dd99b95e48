import BeaconMeshCore
import Foundation

/// A store's local calendar, for promo dates and daily hours and alerts' quiet hours: its `timeZone:`, or the
/// coordinator's (the system time zone).
public enum LocalCalendar {
    /// The local day and the minute after local midnight of `time` in `timeZone`.
    public static func dayAndMinute(of time: Timestamp, in timeZone: TimeZone = .current) -> (PromoWindow.Day, Int) {
        let date = Date(timeIntervalSince1970: Double(time.milliseconds) / 1000)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return (
            PromoWindow.Day(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1),
            (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        )
    }
}
