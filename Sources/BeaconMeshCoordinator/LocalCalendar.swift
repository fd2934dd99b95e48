import BeaconMeshCore
import Foundation

/// The coordinator's local calendar (the system time zone), for promo dates and daily hours.
public enum LocalCalendar {
    /// The local day and the minute after local midnight of `time`.
    public static func dayAndMinute(of time: Timestamp) -> (PromoWindow.Day, Int) {
        let date = Date(timeIntervalSince1970: Double(time.milliseconds) / 1000)
        let parts = Calendar.current.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return (
            PromoWindow.Day(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1),
            (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        )
    }
}
