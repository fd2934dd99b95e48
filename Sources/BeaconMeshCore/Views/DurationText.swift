/// Reads and writes durations as the config spells them: `250ms`, `5s`, `1.5s`, `20m`, `24h`, `7d`.
public enum DurationText {
    /// Parses `text`; `nil` unless it is a non-negative number followed by one of `ms`, `s`, `m`, `h`, `d`.
    public static func parse(_ text: String) -> Duration? {
        let units: [(suffix: String, milliseconds: Double)] = [
            ("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000),
        ]
        for unit in units where text.hasSuffix(unit.suffix) {
            let number = text.dropLast(unit.suffix.count)
            guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                let value = Double(number), value.isFinite
            else { continue }
            return .milliseconds(Int64((value * unit.milliseconds).rounded()))
        }
        return nil
    }

    /// A length of time as people read it: `45s`, `3m 20s`, `1h 05m`.
    public static func spoken(seconds: Int) -> String {
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return "\(seconds / 60)m \(seconds % 60 < 10 ? "0" : "")\(seconds % 60)s" }
        let minutes = (seconds % 3600) / 60
        return "\(seconds / 3600)h \(minutes < 10 ? "0" : "")\(minutes)m"
    }

    /// The shortest exact spelling of `duration` (whole milliseconds).
    public static func format(_ duration: Duration) -> String {
        let milliseconds = duration.wholeMilliseconds
        for (suffix, size) in [("h", Int64(3_600_000)), ("m", 60_000), ("s", 1000)]
        where milliseconds != 0 && milliseconds % size == 0 {
            return "\(milliseconds / size)\(suffix)"
        }
        return milliseconds == 0 ? "0s" : "\(milliseconds)ms"
    }
}
