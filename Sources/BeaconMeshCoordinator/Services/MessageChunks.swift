import BeaconMeshMQTT

/// Where the coordinator's decoding side takes its messages from, a chunk at a time, in arrival order.
protocol MessageChunks: Sendable {
    /// Up to `limit` of the messages waiting now, without waiting (none if none wait).
    func waiting(upTo limit: Int) -> [MQTTMessage]
    /// All that wait now up to `limit`, or the next to arrive; `nil` once there will be no more.
    func next(upTo limit: Int) async -> [MQTTMessage]?
}

extension MQTTMessages: MessageChunks {}
