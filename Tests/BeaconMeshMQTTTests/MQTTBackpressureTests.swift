import BeaconMeshMQTT
import BeaconMeshTesting
import Testing

@Suite("MQTT client backpressure", .timeLimit(.minutes(2)))
struct MQTTBackpressureTests {
    @Test("a consumer far behind a fast QoS 1 stream loses nothing and sees it in order")
    func slowConsumerLosesNothing() async throws {
        let broker = try await MosquittoBroker.start(extraConfiguration: ["max_queued_messages 0", "max_inflight_messages 0"])
        defer { Task { await broker.stop() } }
        let consumer = try makeClient(broker.url, clientID: "slow-consumer", cleanSession: false) { $0.incomingBufferLimit = 50 }
        try await startAndConnect(consumer)
        try await subscribeAndWait(consumer, "flood/#", qos: .atLeastOnce)
        let producer = try makeClient(broker.url)
        try await startAndConnect(producer)
        let total = 5_000
        for index in 0..<total {
            try producer.publish(topic: "flood/\(index % 7)", payload: Array("\(index)".utf8), qos: .atLeastOnce)
        }
        var received: [Int] = []
        for await message in consumer.messages {
            received.append(Int(message.payloadString) ?? -1)
            if received.count % 500 == 0 { try await Task.sleep(for: .milliseconds(100)) }
            if received.count == total { break }
        }
        #expect(received == Array(0..<total))
        await consumer.disconnect(timeout: .seconds(2))
        await producer.disconnect(timeout: .seconds(2))
    }

    @Test("disconnect returns while the network thread waits for room")
    func disconnectWhileFull() async throws {
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let consumer = try makeClient(broker.url) { $0.incomingBufferLimit = 1 }
        try await startAndConnect(consumer)
        try await subscribeAndWait(consumer, "full/#")
        let producer = try makeClient(broker.url)
        try await startAndConnect(producer)
        for index in 0..<100 { try producer.publish(topic: "full/x", payload: [UInt8(index)], qos: .atLeastOnce) }
        try await Task.sleep(for: .milliseconds(300))
        let clock = ContinuousClock()
        let took = await clock.measure { await consumer.disconnect(timeout: .seconds(2)) }
        #expect(took < .seconds(4))
        await producer.disconnect(timeout: .seconds(2))
    }
}
