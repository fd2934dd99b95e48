import BeaconMeshCore
import Foundation

/// The period `[from, to)` an analytics question covers, as `report --from/--to` and the dashboard's `from`/`to`
/// give it: each end epoch milliseconds or a local date `YYYY-MM-DD` or time `YYYY-MM-DDTHH:MM`; by default the 7
/// days before now. A period must be non-empty and at most `longest`.
public struct AnalyticsPeriod: Hashable, Sendable {
    public var from: Timestamp
    public var to: Timestamp

    /// The longest period one question may cover (a little over ten years of history).
    public static let longest: Duration = .seconds(3700 * 24 * 3600)
    /// The period when none is given: the 7 days up to now.
    public static let defaultLength: Duration = .seconds(7 * 24 * 3600)

    public init(from: Timestamp, to: Timestamp) {
        self.from = from
        self.to = to
    }

    /// The period of `from` and `to` (either may be missing) at `now`, in `timeZone`; an error in one line saying
    /// which value is wrong and what is expected.
    public static func parse(
        from fromText: String?, to toText: String?, now: Timestamp, timeZone: TimeZone = .current
    ) throws(RegistryFailure) -> AnalyticsPeriod {
        let to = try toText.map { text throws(RegistryFailure) in try time(text, named: "to", timeZone: timeZone) } ?? now
        let from =
            try fromText.map { text throws(RegistryFailure) in try time(text, named: "from", timeZone: timeZone) }
            ?? to - defaultLength
        guard from < to else {
            throw RegistryFailure(
                .invalidRequest, "the period is empty: 'from' (\(from.milliseconds)) must be before 'to' (\(to.milliseconds))")
        }
        guard to - from <= longest else {
            throw RegistryFailure(.invalidRequest, "the period is longer than 3,700 days; ask for a shorter one")
        }
        return AnalyticsPeriod(from: from, to: to)
    }

    /// One end of a period: epoch milliseconds, `YYYY-MM-DD` (local midnight) or `YYYY-MM-DDTHH:MM` (local time).
    public static func time(_ text: String, named name: String, timeZone: TimeZone = .current) throws(RegistryFailure) -> Timestamp {
        let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
        let problem = RegistryFailure(
            .invalidRequest, "'\(name)' must be epoch milliseconds or a local date YYYY-MM-DD[THH:MM] (found '\(shown)')")
        if !text.isEmpty, text.utf8.count <= 15, text.allSatisfy({ $0.isASCII && $0.isNumber }), let milliseconds = Int64(text) {
            return Timestamp(milliseconds: milliseconds)
        }
        let digits = text.utf8.map { $0 }
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= digits.count, range.allSatisfy({ (48...57).contains(digits[$0]) }) else { return nil }
            return range.reduce(0) { $0 * 10 + Int(digits[$1] - 48) }
        }
        guard digits.count == 10 || digits.count == 16, let year = number(0..<4), digits[4] == UInt8(ascii: "-"),
            let month = number(5..<7), digits[7] == UInt8(ascii: "-"), let day = number(8..<10),
            (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day)
        else { throw problem }
        var hour = 0
        var minute = 0
        if digits.count == 16 {
            guard digits[10] == UInt8(ascii: "T"), let h = number(11..<13), digits[13] == UInt8(ascii: ":"), let m = number(14..<16),
                h < 24, m < 60
            else { throw problem }
            hour = h
            minute = m
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute)
        // A day the month does not have (2025-02-30) would roll over into the next month: refused instead.
        guard let date = calendar.date(from: parts), calendar.component(.day, from: date) == day,
            calendar.component(.month, from: date) == month
        else { throw problem }
        return Timestamp(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }
}
