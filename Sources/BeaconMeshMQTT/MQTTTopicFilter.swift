import CMosquitto

/// A subscription filter such as `beaconmesh/v1/stores/+/events` or `beaconmesh/v1/#`, checked when it is made.
///
/// `+` matches exactly one level, `#` (last level only) matches that level and everything below it.
/// Matching uses libmosquitto's own `mosquitto_topic_matches_sub`, so it agrees with the broker.
public struct MQTTTopicFilter: Sendable, Hashable, CustomStringConvertible {
    /// The filter text.
    public let filter: String

    /// A filter; throws `MQTTError.invalidConfiguration` if it is not a valid MQTT subscription (`a/#/b`, `a+`, empty).
    public init(_ filter: String) throws(MQTTError) {
        try Self.validateFilter(filter)
        self.filter = filter
    }

    /// Whether a concrete `topic` is covered by this filter.
    public func matches(topic: String) -> Bool {
        var result = false
        let code = mosquitto_topic_matches_sub(filter, topic, &result)
        return code == MOSQ_ERR_SUCCESS.rawValue && result
    }

    public var description: String { filter }

    /// Throws unless `filter` is a valid subscription filter.
    public static func validateFilter(_ filter: String) throws(MQTTError) {
        guard mosquitto_sub_topic_check(filter) == MOSQ_ERR_SUCCESS.rawValue, !filter.isEmpty else {
            throw .invalidConfiguration(
                "topic filter \"\(filter)\" is not valid (\"+\" and \"#\" must fill a whole level; \"#\" only at the end)")
        }
    }

    /// Throws unless `topic` is a valid topic to publish to (non-empty, no wildcards).
    public static func validatePublishTopic(_ topic: String, what: String = "topic") throws(MQTTError) {
        guard mosquitto_pub_topic_check(topic) == MOSQ_ERR_SUCCESS.rawValue, !topic.isEmpty else {
            throw .invalidConfiguration("\(what) \"\(topic)\" is not valid (empty, or contains \"+\" or \"#\")")
        }
    }
}
