import BeaconMeshCore
import Logging

/// Counts dropped input per reason and logs each reason at most once a minute, with the topic and the detail.
public struct DropCounter: Sendable {
    public private(set) var counts: [String: UInt64] = [:]
    private var lastLogged: [String: Timestamp] = [:]
    private let logInterval: Duration

    public init(logInterval: Duration = .seconds(60)) {
        self.logInterval = logInterval
    }

    /// Counts one drop; logs it unless this reason was logged less than `logInterval` ago.
    public mutating func drop(reason: String, topic: String, detail: String, at now: Timestamp, logger: Logger) {
        counts[reason, default: 0] += 1
        if let last = lastLogged[reason], now - last < logInterval { return }
        lastLogged[reason] = now
        logger.warning(
            "dropped a message",
            metadata: [
                "topic": "\(topic)", "reason": "\(reason)", "detail": "\(detail)", "dropped.total": "\(counts[reason]!)",
            ])
    }

    public var total: UInt64 { counts.values.reduce(0, +) }
}
