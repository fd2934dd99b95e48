import BeaconMeshCore
import BeaconMeshWire

#if canImport(Glibc)
    import Glibc
#endif

/// The one readable line the phone prints for a message on its own `offers` or `checkins` topic:
/// `14:03:07  offer     Housewares  Voucher de Desconto! — Kit de cozinha com 20% de desconto…` or
/// `14:03:09  check-in  at Counter (#3)`; a payload that cannot be read is a `WireError`.
public enum PhoneMessageLine {
    /// The line for an offer payload (time of the offer, local clock).
    public static func offer(_ payload: [UInt8]) throws(WireError) -> String {
        let offer = try WireCodec.decodeOffer(payload)
        let department = offer.departmentName ?? "department \(offer.department)"
        return "\(clockTime(offer.at))  offer     \(department)  \(offer.promo.title) — \(offer.promo.message)"
    }

    /// The line for a payload of the member's `checkins` topic: the `checkin` event (or a refusal).
    public static func checkin(_ payload: [UInt8]) throws(WireError) -> String {
        let event = try WireCodec.decodeEvent(payload)
        let time = clockTime(event.at)
        switch event.kind {
        case .checkin(_, let department, let departmentName, _, let checkins, _):
            let place = departmentName.isEmpty ? "department \(department)" : departmentName
            return "\(time)  check-in  at \(place) (#\(checkins))"
        case .checkinRefused(_, _, let department, let reason):
            return "\(time)  check-in  refused at department \(department): \(reason.rawValue)"
        default:
            return "\(time)  \(event.type)"
        }
    }

    /// `HH:MM:SS` of `timestamp` in the local time zone.
    static func clockTime(_ timestamp: Timestamp) -> String {
        var seconds = time_t(timestamp.milliseconds / 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }
}
