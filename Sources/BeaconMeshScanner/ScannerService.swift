import BeaconMeshBLE
import BeaconMeshCaptures
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshThreads
import BeaconMeshWire
import Logging
import ServiceLifecycle
import Synchronization

/// A scanner node: hears adverts from its source, turns them into sighting batches and publishes them, with its
/// retained status (and `offline` last will) and periodic health.
///
/// Batches wait in a bounded queue until the broker acknowledges them, so a broker restart loses none. One loop owns
/// all state; sources and the MQTT client only feed it inputs.
public final class ScannerService: Service {
    let configuration: ScannerConfiguration
    let client: any MQTTClientProtocol
    /// Ticks, health, the drain's deadline and the simulation read and wait on this clock (a manual one in tests).
    private let clock: any ServiceClock
    /// The logger, whose level head office's node config may change while the scanner runs.
    let loggerInForce: Mutex<Logger>
    var logger: Logger { loggerInForce.withLock { $0 } }
    let topics: Topics
    let boot: String
    let startedAt: Timestamp
    private let openAdapter: AdapterOpener

    /// How often flush windows, the queue and health are looked after.
    static let tickInterval: Duration = .milliseconds(50)
    /// How often the loop asks the client about acknowledgements while a replay waits for the broker to take batches.
    static let brokerPollInterval: Duration = .milliseconds(2)
    /// How long a shutdown waits for the broker to take the queued batches (reconnecting if it is away).
    static let drainTimeout: Duration = .seconds(15)
    /// How many chunks of replayed or radio packets may wait for the scanner loop; beyond that the capture reader
    /// waits and the radio gathers (up to its buffer).
    static let replayChunksAhead = 4
    /// … and how many bytes of them (their buffers). A replayed chunk takes 16 kB, so four fit; a radio chunk
    /// gathered while the loop was busy can take hundreds of kB, and then comes alone.
    static let chunkBytesAhead = 64 << 10
    /// A replay waits while this many batches are not yet acknowledged (sent or waiting: a slow or absent broker),
    /// instead of piling them up or dropping them. Batches of a busy capture run to hundreds of kB each, so the
    /// figure is small; 16 in flight keep a local broker busy.
    static let replayQueueHighWater = 16
    /// … and while the batches not yet acknowledged hold this many bytes. A capture with thousands of beacons in view
    /// makes batches of most of a megabyte, each held three times until the broker takes it (the queue's copy,
    /// libmosquitto's message and the packet it writes): so such batches go one at a time, and the next is made only
    /// once the previous one is acknowledged. Small batches (a few hundred beacons) still go many at a time.
    static let replayQueueBytes = 128 << 10

    /// Opens the socket of an `hciN` source's adapter (`hci0`; `true` when it must carry LE advertising events).
    public typealias AdapterOpener = @Sendable (_ adapter: String, _ leEvents: Bool) throws(HCIError) -> HCISocket

    /// A scanner of `boot` publishing through `client`; `startedAt` is the start time its statuses report (the same
    /// as in `mqttConfiguration`; default: `clock`'s now). `openAdapter` is how an `hciN` source is reached: the
    /// adapter's raw HCI socket, unless a benchmark gives a fake controller's socketpair.
    public init(
        configuration: ScannerConfiguration, client: any MQTTClientProtocol, boot: String, startedAt: Timestamp? = nil,
        logger: Logger, clock: any ServiceClock = WallClock(),
        openAdapter: @escaping AdapterOpener = { adapter, leEvents throws(HCIError) in
            try HCISocket.open(adapter: adapter, leEvents: leEvents)
        }
    ) {
        self.openAdapter = openAdapter
        self.configuration = configuration
        self.client = client
        self.clock = clock
        self.loggerInForce = Mutex(logger)
        self.topics = Topics(root: configuration.topicRoot)
        self.boot = boot
        self.startedAt = startedAt ?? clock.now()
    }

    /// The node status this scanner publishes (`online` while running, `offline` as last will and at shutdown).
    static func status(
        _ state: LinkState, of configuration: ScannerConfiguration, boot: String, startedAt: Timestamp,
        config: NodeConfigReports = NodeConfigReports()
    ) -> NodeStatus {
        NodeStatus(
            state: state, version: configuration.version, boot: boot, source: configuration.source.description,
            startedAt: startedAt, config: config)
    }

    /// The client configuration a scanner uses: a client id of its own, a retained `offline` last will, and its
    /// retained `online` status as the announcement, so that every reconnection after a lost connection (when the
    /// broker has published the will) says `online` again, ahead of the batches queued meanwhile.
    public static func mqttConfiguration(
        for configuration: ScannerConfiguration, boot: String, startedAt: Timestamp
    ) throws(BrokerConnection.Failure) -> MQTTConfiguration {
        let topics = Topics(root: configuration.topicRoot)
        let offline = status(.offline, of: configuration, boot: boot, startedAt: startedAt)
        let online = status(.online, of: configuration, boot: boot, startedAt: startedAt)
        let will = MQTTLastWill(
            topic: topics.nodeStatus(configuration.node), payload: WireCodec.encode(offline),
            qos: .atLeastOnce, retain: true)
        let node = configuration.node
        var mqtt = try configuration.broker.mqttConfiguration(
            clientID: "beaconmesh-scanner-\(node.store)-\(node.department)-\(node.node)", cleanSession: true, lastWill: will)
        mqtt.announcement = MQTTMessage(
            topic: topics.nodeStatus(configuration.node), payload: WireCodec.encode(online),
            qos: .atLeastOnce, retained: true)
        return mqtt
    }

    enum Input: Sendable {
        case packets(HCIEventChunk)
        /// Packets from a capture replay, each chunk held in the `ScannerInbox` until the queue has room (a replay
        /// runs no faster than the broker takes its batches).
        case replayedPackets(HCIEventChunk)
        /// Packets from the radio, each chunk held in the `ScannerInbox` until it is processed (the
        /// air does not wait for a broker: while it is away, batches queue and the oldest are dropped).
        case radioPackets(HCIEventChunk)
        case sourceFinished
        case sourceFailed(String)
        case tick
        /// A retained node config of the store (`.store`) or of this node (`.node`), as received.
        case nodeConfig(NodeConfigLevel, [UInt8])
    }

    /// Why the scanner stopped with an error: its source could not be used (a missing adapter, a broken capture…).
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public func run() async throws {
        let startedAt = self.startedAt
        let aggregator = SightingAggregator(node: configuration.node, boot: boot, configuration: configuration.aggregation)
        var state = ScannerState(
            pipeline: ScannerPipeline(aggregator: aggregator),
            queue: OutboundQueue(capacity: configuration.queueCapacity, maximumInFlight: 64, weigh: \.count),
            startedAt: startedAt)

        // Head office's node configs, retained: the store's and this node's own, applied as they come (again after
        // every reconnection, when the broker sends them anew).
        var configBook = NodeConfigBook(
            base: configuration.liveSettings, restartKeys: ScannerConfiguration.restartKeys,
            refusedValues: { [configuration] key, value in configuration.refusal(of: key, value) })
        var inForce = configuration
        try client.subscribe(topics.storeNodeConfig(store: configuration.node.store), qos: .atLeastOnce)
        try client.subscribe(topics.nodeConfig(configuration.node), qos: .atLeastOnce)
        // What the client meets (a refused or lost connection, OpenSSL's reason for a certificate), logged as it comes.
        let connectionEvents = client.connectionEvents()
        async let brokerEventsLogged: Void = BrokerEventLog.follow(connectionEvents, logger: logger)
        try client.start()
        if client.configuration.announcement == nil {
            // A client made without the scanner's announcement: say `online` once, at least.
            let online = Self.status(.online, of: configuration, boot: boot, startedAt: startedAt)
            try client.publish(
                topic: topics.nodeStatus(configuration.node), payload: WireCodec.encode(online), qos: .atLeastOnce, retain: true)
        }
        logger.info(
            "scanner running",
            metadata: [
                "node": "\(configuration.node)", "source": "\(configuration.source)", "boot": "\(boot)",
                "broker": "\(configuration.broker.url)",
            ])

        // The source and the ticker feed one mailbox (`ScannerInbox`); the loop below owns all state. A capture
        // replay and the radio are bounded by the chunks and bytes they may hold (the replay waits for the loop and
        // the broker, the radio gathers and in the end drops), the simulation by its pace, ticks by time.
        // Acknowledgements are not inputs: the loop asks the client about its in-flight batches each time it wakes.
        let inbox = ScannerInbox(ScannerInputs(chunkLimit: Self.replayChunksAhead, byteLimit: Self.chunkBytesAhead))
        let advertising = AdvertisingControl()
        var heldChunks = ChunkHold()
        let waitingForBroker = BrokerWait()
        let clock = self.clock
        let recorder: BTSnoopRecorder?
        do {
            recorder = try configuration.recordPath.map { path throws(BTSnoopError) in try BTSnoopRecorder(path: path) }
        } catch {
            throw Failure(description: error.description)
        }
        // The radio records through its own scanner (commands too); replays and simulations are recorded here.
        let recordsHere: BTSnoopRecorder? = {
            if case .adapter = configuration.source { return nil }
            return recorder
        }()

        var failure: String?
        var finishedEarly = false
        await withDiscardingTaskGroup { group in
            group.addTask {
                while !Task.isCancelled {
                    let waiting = waitingForBroker.flag.load(ordering: .relaxed)
                    try? await clock.sleep(for: waiting ? ScannerService.brokerPollInterval : ScannerService.tickInterval)
                    guard inbox.put({ $0.append(.tick) }) else { return }
                }
            }
            group.addTask { [self] in
                await runSource(into: inbox, start: startedAt, recorder: recorder, advertising: advertising)
            }
            group.addTask { [client, topics] in
                for await message in client.messages {
                    let level: NodeConfigLevel
                    switch topics.parse(message.topic) {
                    case .storeNodeConfig?: level = .store
                    case .nodeConfig?: level = .node
                    default: continue
                    }
                    guard inbox.put({ $0.append(.nodeConfig(level, message.payload)) }) else { return }
                }
            }
            await withGracefulShutdownHandler {
                while let input = await inbox.take({ $0.next() }) {
                    switch input {
                    case .packets(let chunk), .replayedPackets(let chunk), .radioPackets(let chunk):
                        chunk.forEach { packet, timestampMicroseconds in
                            let time = Timestamp(milliseconds: timestampMicroseconds / 1000)
                            recordsHere?.record(h4Packet: packet, timestampMicroseconds: time.milliseconds * 1000, received: true)
                            if let batch = state.pipeline.handle(h4Event: packet, at: time) { state.enqueue(batch) }
                            if let batch = state.pipeline.tick(at: time) { state.enqueue(batch) }
                        }
                        if case .replayedPackets = input { heldChunks += ChunkHold(chunk) }
                        if case .radioPackets = input { inbox.update { $0.giveBack(ChunkHold(chunk)) } }
                    case .tick:
                        let now = clock.now()
                        if let batch = state.pipeline.tick(at: now) { state.enqueue(batch) }
                        if now - state.lastHealth >= inForce.healthInterval { publishHealth(&state, at: now) }
                    case .nodeConfig(let level, let payload):
                        let outcome = configBook.receive(WireCodec.decodeNodeConfig(payload), level: level)
                        if let refusal = outcome.refusalToLog {
                            logger.warning("node config refused", metadata: ["level": "\(level.rawValue)", "reason": "\(refusal)"])
                        }
                        if outcome.changed {
                            inForce = configuration.applying(configBook.effective)
                            apply(inForce, to: &state, advertising: advertising)
                        }
                        publishStatus(config: configBook.reports)
                    case .sourceFinished:
                        finishedEarly = true
                        inbox.close()
                    case .sourceFailed(let message):
                        failure = message
                        inbox.close()
                    }
                    state.acknowledgeDelivered(client: client)
                    pump(&state)
                    // Backpressure: the replay gets its chunks back only while the queue has room.
                    if !heldChunks.isEmpty && state.queue.count < Self.replayQueueHighWater
                        && state.queue.weight < Self.replayQueueBytes
                    {
                        inbox.update { [heldChunks] in $0.giveBack(heldChunks) }
                        heldChunks = ChunkHold()
                    }
                    waitingForBroker.flag.store(!heldChunks.isEmpty, ordering: .relaxed)
                }
            } onGracefulShutdown: {
                inbox.close()
            }
            // The source stops (the radio switches scanning off) and the ticker ends before the queue is drained.
            inbox.close()
            advertising.finish()
            group.cancelAll()
        }
        if let recorder {
            do {
                try recorder.close()
                logger.info("recorded", metadata: ["file": "\(recorder.path)", "records": "\(recorder.recordCount)"])
            } catch {
                logger.error("the recording is incomplete", metadata: ["error": "\(error)"])
            }
        }

        // Shutdown: last batch, wait (bounded) for the broker to take the queue, then `offline` and disconnect.
        // A source that failed to start has nothing worth waiting for.
        if let batch = state.pipeline.flush(at: state.lastPacketTime ?? clock.now()) { state.enqueue(batch) }
        if failure == nil { await drain(&state) }
        let offline = Self.status(.offline, of: configuration, boot: boot, startedAt: startedAt, config: configBook.reports)
        let troubles = await client.disconnect(
            timeout: client.isConnected ? .seconds(5) : .milliseconds(200),
            finalMessage: MQTTMessage(
                topic: topics.nodeStatus(configuration.node), payload: WireCodec.encode(offline), qos: .atLeastOnce, retained: true))
        await brokerEventsLogged
        for trouble in troubles { BrokerEventLog.log(trouble, to: logger) }
        logger.info(
            "scanner stopped",
            metadata: [
                "adverts": "\(state.pipeline.counters.adverts)", "batches": "\(state.pipeline.counters.batches)",
                "unsent": "\(state.queue.count)", "dropped": "\(state.queue.dropped)", "replayFinished": "\(finishedEarly)",
            ])
        if let failure { throw Failure(description: failure) }
        if !state.queue.isEmpty {
            throw UndeliveredBatches(count: state.queue.count, broker: configuration.broker.url)
        }
    }

    /// The scanner stopped with batches the broker never acknowledged (unreachable, or refusing this node).
    public struct UndeliveredBatches: Error, CustomStringConvertible {
        public var count: Int
        public var broker: String
        public var description: String {
            "\(count) sighting batches were not delivered: the broker \(broker) was unreachable or refused this node (check the URL, user, password and ACL)"
        }
    }

    /// Feeds `inbox` from the configured source until it ends, fails or the task is cancelled.
    private func runSource(
        into inbox: ScannerInbox, start: Timestamp, recorder: BTSnoopRecorder?, advertising: AdvertisingControl
    ) async {
        switch configuration.source {
        case .capture(let path):
            let replay = CaptureReplay(path: path, speed: configuration.speed)
            do {
                // Reads ahead at most `replayChunksAhead` chunks (`chunkBytesAhead` bytes): however big the capture,
                // memory stays flat.
                try await replay.run(start: start) { chunk in
                    _ = await inbox.putWhenRoom { $0.append(.replayedPackets(chunk)) }
                }
                if Task.isCancelled { return }
                inbox.put { $0.append(.sourceFinished) }
            } catch is CancellationError {
            } catch {
                inbox.put { $0.append(.sourceFailed("\(error)")) }
            }
        case .simulation:
            let simulation = ShopperSimulation(
                route: configuration.simulationRoute.isEmpty ? [configuration.node.department] : configuration.simulationRoute,
                shoppers: ShopperSimulation.demoShoppers(store: configuration.node.store),
                outside: configuration.simulationOutside)
            let department = configuration.node.department
            var random = SystemRandomNumberGenerator()
            while !Task.isCancelled {
                let now = clock.now()
                var packets = HCIEventChunk()
                for (index, shopper) in simulation.shoppers.enumerated() {
                    guard let rssi = simulation.rssi(ofShopper: index, heardBy: department, at: now, random: &random) else { continue }
                    let bytes = LEAdvertisingReportEvent.make(address: shopper.address, rssi: rssi, data: shopper.beacon.bytes)
                    packets.append(bytes, timestampMicroseconds: now.milliseconds * 1000)
                }
                if !packets.isEmpty { inbox.put { $0.append(.packets(packets)) } }
                try? await clock.sleep(for: .milliseconds(125))
            }
        case .adapter(let index):
            await RadioSource.run(
                adapter: index, configuration: configuration, recorder: recorder, logger: logger, open: openAdapter,
                inbox: inbox, advertising: advertising)
        }
    }

    /// Hands waiting batches to the client while it is connected and the in-flight window has room.
    private func pump(_ state: inout ScannerState) {
        guard client.isConnected else { return }
        let qos: MQTTQoS = configuration.sightingsQoS == 0 ? .atMostOnce : .atLeastOnce
        while let payload = state.queue.nextToSend() {
            do {
                let id = try client.publish(topic: topics.sightings(configuration.node), payload: payload, qos: qos, retain: false)
                state.queue.sent(id: id.rawValue)
                if qos == .atMostOnce || client.isAcknowledged(id) { state.queue.acknowledge(id: id.rawValue) }
            } catch {
                logger.debug("publish deferred", metadata: ["error": "\(error)"])
                return
            }
        }
    }

    /// Keeps pumping until the queue is empty or the drain timeout passes.
    private func drain(_ state: inout ScannerState) async {
        let deadline = clock.now() + ScannerService.drainTimeout
        while !state.queue.isEmpty && clock.now() < deadline {
            state.acknowledgeDelivered(client: client)
            pump(&state)
            if state.queue.isEmpty { break }
            try? await clock.sleep(for: .milliseconds(20))
        }
        if !state.queue.isEmpty {
            logger.warning("stopping with unsent batches", metadata: ["unsent": "\(state.queue.count)"])
        }
    }

    private func publishHealth(_ state: inout ScannerState, at now: Timestamp) {
        let counters = state.pipeline.counters
        let elapsed = max((now - state.lastHealth).inSeconds, 0.001)
        let health = NodeHealth(
            uptimeSeconds: (now - state.startedAt).wholeMilliseconds / 1000, adverts: counters.adverts,
            advertsPerSecond: Double(counters.adverts - state.advertsAtLastHealth) / elapsed,
            beacons: state.pipeline.aggregator.trackedBeacons, batches: counters.batches, dropped: state.queue.dropped,
            queued: state.queue.count, rssBytes: ProcessMemory.residentBytes(), malformedFrames: counters.malformedFrames)
        state.lastHealth = now
        state.advertsAtLastHealth = counters.adverts
        do {
            try client.publish(
                topic: topics.nodeHealth(configuration.node), payload: WireCodec.encode(health), qos: .atMostOnce, retain: false)
        } catch {
            logger.debug("health not sent", metadata: ["error": "\(error)"])
        }
    }
}

/// Set while a capture replay waits for the broker to take its batches: then the ticks come often, to see the
/// acknowledgements soon.
private final class BrokerWait: Sendable {
    let flag = Atomic(false)
}

/// The scanner loop's state.
struct ScannerState {
    var pipeline: ScannerPipeline
    var queue: OutboundQueue<[UInt8]>
    let startedAt: Timestamp
    var lastHealth: Timestamp
    var advertsAtLastHealth: UInt64 = 0
    var lastPacketTime: Timestamp?

    init(pipeline: ScannerPipeline, queue: OutboundQueue<[UInt8]>, startedAt: Timestamp) {
        self.pipeline = pipeline
        self.queue = queue
        self.startedAt = startedAt
        self.lastHealth = startedAt
    }

    mutating func enqueue(_ batch: SightingBatch) {
        queue.enqueue(WireCodec.encode(batch))
        lastPacketTime = batch.sentAt
    }

    /// Acknowledges every in-flight message the client no longer waits for.
    mutating func acknowledgeDelivered(client: any MQTTClientProtocol) {
        queue.acknowledgeAll { client.isAcknowledged(MQTTMessageID(rawValue: $0)) }
    }
}
