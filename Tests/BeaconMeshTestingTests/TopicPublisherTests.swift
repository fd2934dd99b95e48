import BeaconMeshTesting
import Foundation
import Testing

/// The long-lived `mosquitto_pub -l` a simulated node publishes through, against a real mosquitto.
@Suite("A node's long-lived publisher")
struct TopicPublisherTests {
    @Test("each line sent is one message, in order, all there once stopped; sending after the stop fails without a signal")
    func linesInOrder() async throws {
        let broker = try await MosquittoBroker.start()
        let subscription = try await MosquittoClients.subscribe(port: broker.port, filter: "node/#", qos: 1)
        let publisher = try await TopicPublisher(port: broker.port, topic: "node/a/sightings")
        for number in 1...200 { try publisher.send(#"{"seq":\#(number)}"#) }
        // Published as they are sent, not when the publisher stops.
        let early = await subscription.waitForLine(timeout: .seconds(10)) { $0 == #"node/a/sightings {"seq":200}"# }
        #expect(early != nil, "\(subscription.lines.suffix(3))")
        await publisher.stop()
        #expect(subscription.lines == (1...200).map { #"node/a/sightings {"seq":\#($0)}"# })
        #expect(throws: TestSupportError.self) { try publisher.send("late") }
        await subscription.stop()
        await broker.stop()
    }
}
