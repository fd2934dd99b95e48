import BeaconMeshCore

/// One short sentence per store event for the page's "recent events" list: "Ana Souza arrived in Clothing (visit 12)".
/// Times are left to the page, which shows them in the viewer's time zone.
public enum EventText {
    public static func describe(_ event: StoreEvent, departmentName: (UInt16) -> String) -> String {
        switch event.kind {
        case .arrived(let member, _, let department, let visit, _, _):
            return "\(member.name) arrived in \(department) (visit \(visit.number))"
        case .resumed(let member, _, let department, let visit, _):
            return "\(member.name) is back in \(department) (visit \(visit.number) goes on)"
        case .moved(let member, _, _, let from, let to, _):
            return "\(member.name) moved from \(from) to \(to)"
        case .left(let member, _, let seconds):
            return "\(member.name) left after \(duration(seconds: seconds))"
        case .promo(let member, _, let department, let promo):
            return "\(promo.title) offered to \(member.name) in \(department)"
        case .node(let department, let node, let state):
            return "Node \(node) of \(departmentName(department)) is \(state.rawValue)"
        case .checkin(let member, _, let department, _, let checkins, _):
            return "\(member.name) checked in at \(department) (check-in \(checkins))"
        case .checkinRefused(_, let member, let department, let reason):
            return "Check-in of \(member) at \(departmentName(department)) refused: \(reason.rawValue)"
        }
    }

    /// Why the coordinator decided an arrival or a move, with how sure it was: "92%: node a hears -61.0 dBm, …";
    /// `nil` for other events and for a coordinator that does not say.
    public static func why(_ event: StoreEvent) -> String? { event.evidence?.summary }

    /// `45s`, `3m 20s`, `1h 05m`.
    public static func duration(seconds: Int) -> String { DurationText.spoken(seconds: seconds) }
}
