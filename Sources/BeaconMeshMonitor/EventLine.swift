import BeaconMeshCore

#if canImport(Glibc)
    import Glibc
#endif

/// One readable line per store event, as `beacon-monitor --plain` prints it:
/// `14:03:07  arrived  Ana Souza       Clothing     visit 12 · Welcome back, Ana! The usual Flat white?`;
/// an arrival or a move ends with how sure and why: `(92%: node a hears -61.0 dBm, …, for 3.0 s)`.
public enum EventLine {
    /// The line for `event`; local wall-clock time of the event first.
    public static func format(_ event: StoreEvent) -> String {
        let time = clockTime(event.at)
        let type = TerminalWidth.fit(event.type, columns: 7)
        switch event.kind {
        case .arrived(let member, _, let departmentName, let visit, let greeting, let evidence):
            return
                "\(time)  \(type)  \(name(member))  \(TerminalWidth.fit(departmentName, columns: 12))  visit \(visit.number) · \(greeting)"
                + why(evidence)
        case .resumed(let member, _, let departmentName, let visit, let evidence):
            return
                "\(time)  \(type)  \(name(member))  \(TerminalWidth.fit(departmentName, columns: 12))  visit \(visit.number) goes on"
                + why(evidence)
        case .moved(let member, _, _, let fromName, let toName, let evidence):
            return "\(time)  \(type)  \(name(member))  \(fromName) → \(toName)" + why(evidence)
        case .left(let member, _, let dwellSeconds):
            return "\(time)  \(type)  \(name(member))  after \(duration(seconds: dwellSeconds))"
        case .promo(let member, _, let departmentName, let promo):
            return "\(time)  \(type)  \(name(member))  \(TerminalWidth.fit(departmentName, columns: 12))  \(promo.title) — \(promo.message)"
        case .node(let department, let node, let state):
            return "\(time)  \(type)  node \(node) of department \(department) is \(state.rawValue)"
        case .checkin(let member, _, let departmentName, _, let checkins, _):
            return "\(time)  \(type)  \(name(member))  \(TerminalWidth.fit(departmentName, columns: 12))  check-in \(checkins)"
        case .checkinRefused(_, let member, let department, let reason):
            return "\(time)  refused  \(TerminalWidth.fit(member, columns: 16))  department \(department): \(reason.rawValue)"
        }
    }

    /// `14:03:07  ALERT    Ana Souza (tier vip) arrived in Womenswear` (the alert's rule in brackets at the end).
    public static func format(_ alert: Alert) -> String {
        "\(clockTime(alert.at))  ALERT    \(alert.text)  [\(alert.rule)]"
    }

    private static func name(_ member: MemberProfile) -> String { TerminalWidth.fit(member.name, columns: 16) }

    /// ` (92%: reason)`, or nothing for an event from a coordinator that does not say.
    private static func why(_ evidence: DecisionEvidence?) -> String { evidence.map { " (\($0.summary))" } ?? "" }

    /// `HH:MM:SS` in the local time zone.
    public static func clockTime(_ timestamp: Timestamp) -> String {
        var seconds = time_t(timestamp.milliseconds / 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }

    /// `45s`, `3m 20s`, `1h 05m`.
    public static func duration(seconds: Int) -> String { DurationText.spoken(seconds: seconds) }
}
