import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshWire

/// One broker message as the coordinator's decisions take it: already read by json-c and checked against its topic,
/// or refused with the reason the drop is counted under.
///
/// Making inputs needs no shared state, so the shell reads many messages at once, on several cores
/// (`CoordinatorInput.decode(_:topics:)`), and hands the inputs to the decisions in arrival order.
enum CoordinatorInput: Sendable {
    /// A node's sighting batch (its `node` is the topic's).
    case sightings(SightingBatch)
    /// A member's phone's ranging report (its `member` is the topic's).
    case ranging(RangingReport, store: UInt16)
    /// A till's check-in request.
    case checkin(CheckinRequest, store: UInt16)
    /// A node's status; `retained` when it is the broker's stored copy (delivered on subscribing), not a change.
    case nodeStatus(NodeAddress, NodeStatus, retained: Bool)
    /// A surveyor's mark in a store.
    case surveyMark(SurveyMark, store: UInt16)
    /// Nothing to decide (an empty retained status: a node's status cleared).
    case ignored
    /// A message that is dropped, counted by `reason` and logged once per reason.
    case refused(reason: String, topic: String, detail: String)

    /// Reads `message` by its topic: a sighting batch, a ranging report, a check-in request or a node status; anything
    /// else is refused with its reason (`bad-topic`, `topic-mismatch`, or the `WireError`'s reason).
    static func decode(_ message: MQTTMessage, topics: Topics) -> CoordinatorInput {
        do throws(WireError) {
            switch topics.parse(message.topic) {
            case .sightings(let node)?:
                let batch = try WireCodec.decodeSightingBatch(message.payload)
                guard batch.node == node else {
                    return .refused(
                        reason: "topic-mismatch", topic: message.topic, detail: "the body says \(batch.node), the topic \(node)")
                }
                return .sightings(batch)
            case .ranging(let store, let member)?:
                let report = try WireCodec.decodeRangingReport(message.payload)
                guard report.member == member else {
                    return .refused(
                        reason: "topic-mismatch", topic: message.topic,
                        detail: "the body says member \(report.member), the topic \(member)")
                }
                return .ranging(report, store: store)
            case .storeCheckins(let store)?:
                return .checkin(try WireCodec.decodeCheckinRequest(message.payload), store: store)
            case .survey(let store)?:
                return .surveyMark(try WireCodec.decodeSurveyMark(message.payload), store: store)
            case .nodeStatus(let node)?:
                if message.payload.isEmpty { return .ignored }
                return .nodeStatus(node, try WireCodec.decodeNodeStatus(message.payload), retained: message.retained)
            default:
                return .refused(reason: "bad-topic", topic: message.topic, detail: "not a topic of the contract")
            }
        } catch {
            return .refused(reason: error.reason, topic: message.topic, detail: error.description)
        }
    }

    /// The store the input concerns, if any (a refused message concerns none).
    var store: UInt16? {
        switch self {
        case .sightings(let batch): batch.node.store
        case .ranging(_, let store), .checkin(_, let store), .surveyMark(_, let store): store
        case .nodeStatus(let node, _, _): node.store
        case .ignored, .refused: nil
        }
    }
}
