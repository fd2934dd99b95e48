import BeaconMeshMQTT
import Logging

/// How the programs log what their MQTT clients report: a lost or refused connection and every trouble as a warning
/// (the MQTT module logs at info or lower and leaves it to its caller to say what matters).
public enum BrokerEventLog {
    /// Logs `event` (a connection accepted is logged by the client itself, at info).
    public static func log(_ event: MQTTConnectionEvent, to logger: Logger) {
        switch event {
        case .connected, .disconnected(.requested):
            break
        case .disconnected(.refused(let reason)):
            logger.warning("broker refused the connection", metadata: ["mqtt.reason": "\(reason)"])
        case .disconnected(.connectionLost(let reason)):
            logger.warning("lost the connection to the broker; reconnecting", metadata: ["mqtt.reason": "\(reason)"])
        case .trouble(let trouble):
            log(trouble, to: logger)
        }
    }

    /// Logs what a client met (`disconnect` returns these too).
    public static func log(_ trouble: MQTTTrouble, to logger: Logger) {
        switch trouble {
        case .library(let line): logger.warning("\(line)", metadata: ["source": "libmosquitto"])
        default: logger.warning("\(trouble)")
        }
    }

    /// The last reason the connection ended, was refused or went wrong (`nil` if it never did), once `events` end:
    /// what a command line says when it could not reach the broker.
    public static func lastProblem(_ events: AsyncStream<MQTTConnectionEvent>) async -> String? {
        var last: String?
        for await event in events {
            switch event {
            case .disconnected(let reason) where reason != .requested: last = reason.description
            case .trouble(let trouble): last = trouble.description
            default: break
            }
        }
        return last
    }

    /// Logs every event of `events` until the stream ends (the client disconnected) or the task is cancelled. Take
    /// the stream before the client's `start()`, so that the first connection's troubles are not missed.
    public static func follow(_ events: AsyncStream<MQTTConnectionEvent>, logger: Logger) async {
        for await event in events { log(event, to: logger) }
    }
}
