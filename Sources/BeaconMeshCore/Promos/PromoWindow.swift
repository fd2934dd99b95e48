/// When a promo may fire, in the store's local calendar: between two dates (inclusive) and within daily hours.
public struct PromoWindow: Hashable, Sendable {
    /// A calendar day, `YYYY-MM-DD`.
    public struct Day: Hashable, Comparable, Sendable, CustomStringConvertible {
        public var year: Int
        public var month: Int
        public var day: Int

        public init(year: Int, month: Int, day: Int) {
            self.year = year
            self.month = month
            self.day = day
        }

        /// Parses `YYYY-MM-DD`; `nil` for anything else or an impossible date.
        public init?(_ text: String) {
            let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
                let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
                (1...12).contains(month), (1...Day.days(inMonth: month, year: year)).contains(day)
            else { return nil }
            self.init(year: year, month: month, day: day)
        }

        static func days(inMonth month: Int, year: Int) -> Int {
            switch month {
            case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
            case 4, 6, 9, 11: return 30
            default: return 31
            }
        }

        public static func < (lhs: Day, rhs: Day) -> Bool { (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day) }

        public var description: String {
            func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
            return "\(year)-\(two(month))-\(two(day))"
        }
    }

    /// Daily hours, minutes after midnight, `start` inclusive and `end` exclusive; `end < start` spans midnight.
    public struct Hours: Hashable, Sendable, CustomStringConvertible {
        public var start: Int
        public var end: Int

        /// Parses `HH:MM-HH:MM`; `nil` for anything else.
        public init?(_ text: String) {
            let halves = text.split(separator: "-")
            guard halves.count == 2, let start = Hours.minutes(halves[0]), let end = Hours.minutes(halves[1]), start != end
            else { return nil }
            self.start = start
            self.end = end
        }

        private static func minutes(_ text: Substring) -> Int? {
            let parts = text.trimmingSpaces.split(separator: ":")
            guard parts.count == 2, parts[1].count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]),
                (0...24).contains(hour), (0...59).contains(minute), hour * 60 + minute <= 24 * 60
            else { return nil }
            return hour * 60 + minute
        }

        /// Whether `minute` (after midnight) falls within these hours.
        public func contains(minute: Int) -> Bool {
            start < end ? (start..<end).contains(minute) : minute >= start || minute < end
        }

        public var description: String {
            func clock(_ minutes: Int) -> String {
                let hour = minutes / 60
                let minute = minutes % 60
                return "\(hour < 10 ? "0" : "")\(hour):\(minute < 10 ? "0" : "")\(minute)"
            }
            return "\(clock(start))-\(clock(end))"
        }
    }

    public var from: Day?
    public var until: Day?
    public var hours: Hours?

    public init(from: Day? = nil, until: Day? = nil, hours: Hours? = nil) {
        self.from = from
        self.until = until
        self.hours = hours
    }

    /// Whether the promo may fire on `day` at `minute` after midnight (local time); if not, why, in words.
    public func check(day: Day, minute: Int) -> (open: Bool, reason: String) {
        if let from, day < from { return (false, "starts on \(from)") }
        if let until, until < day { return (false, "ended on \(until)") }
        if let hours, !hours.contains(minute: minute) { return (false, "only \(hours)") }
        return (true, hours.map { "open \($0)" } ?? "open all day")
    }
}

/// Who a promo is for: members with at least `minVisits` visits (a reward on the 10th visit), at least
/// `minCheckins` check-ins at a till, and/or a list of ids.
public struct PromoAudience: Hashable, Sendable {
    public var minVisits: Int?
    public var minCheckins: Int?
    public var members: Set<String>?

    public init(minVisits: Int? = nil, minCheckins: Int? = nil, members: Set<String>? = nil) {
        self.minVisits = minVisits
        self.minCheckins = minCheckins
        self.members = members
    }

    /// Whether `member` (with `visits` visits, the current one included, and `checkins` check-ins) is in the audience.
    public func includes(member: String, visits: Int, checkins: Int = 0) -> Bool {
        if let minVisits, visits < minVisits { return false }
        if let minCheckins, checkins < minCheckins { return false }
        if let members, !members.contains(member) { return false }
        return true
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
