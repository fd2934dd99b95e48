import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshWire
import Logging
import ServiceLifecycle

/// The monitor's line-per-event mode: subscribes to one store's events and alerts and prints each as a line on
/// standard output.
public final class PlainMonitor: Service {
    private let store: UInt16
    private let client: any MQTTClientProtocol
    private let clock: any ServiceClock
    private let topics: Topics
    private let logger: Logger
    private let write: @Sendable (String) -> Void

    /// A monitor of `store` through `client` (`MQTTClient`, or an in-memory one in tests) that hands each line to
    /// `write`; `clock` dates the messages it drops.
    public init(
        store: UInt16, client: any MQTTClientProtocol, topicRoot: String = Topics.defaultRoot, clock: any ServiceClock = WallClock(),
        logger: Logger, write: @escaping @Sendable (String) -> Void
    ) {
        self.store = store
        self.client = client
        self.clock = clock
        self.topics = Topics(root: topicRoot)
        self.logger = logger
        self.write = write
    }

    public func run() async throws {
        let connectionEvents = client.connectionEvents()  // before start(), so the first connection is not missed
        try client.start()
        try client.subscribe(topics.events(store: store), qos: .atLeastOnce)
        try client.subscribe(topics.alerts(store: store), qos: .atLeastOnce)
        let messages = client.messages
        let (write, clock, logger, alerts) = (self.write, self.clock, self.logger, topics.alerts(store: store))
        async let brokerEventsLogged: Void = BrokerEventLog.follow(connectionEvents, logger: logger)
        // Shutdown cancels the reading (the messages end when their reader is cancelled); then the client disconnects.
        await cancelWhenGracefulShutdown {
            var drops = DropCounter()
            for await message in messages {
                do throws(WireError) {
                    if message.topic == alerts {
                        write(EventLine.format(try WireCodec.decodeAlert(message.payload)))
                    } else {
                        write(EventLine.format(try WireCodec.decodeEvent(message.payload)))
                    }
                } catch {
                    drops.drop(reason: error.reason, topic: message.topic, detail: error.description, at: clock.now(), logger: logger)
                }
            }
        }
        let troubles = await client.disconnect(timeout: .seconds(2))
        await brokerEventsLogged
        for trouble in troubles { BrokerEventLog.log(trouble, to: logger) }
    }
}
