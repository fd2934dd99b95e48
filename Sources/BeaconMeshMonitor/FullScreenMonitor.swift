import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshWire
import Logging
import ServiceLifecycle

/// The monitor's full-screen mode: a live view of one store on the terminal, until `q`, SIGINT or SIGTERM.
///
/// It subscribes to the store's retained presence snapshot and its events and feeds them, the broker's connection
/// changes and a 100 ms tick into a `MonitorModel`. On each tick it reads the keys waiting (without blocking) and
/// redraws the `ScreenRenderer`'s frame. `q` ends the service normally (exit 0); a graceful shutdown does the same.
/// The terminal is given back on every way out, errors included.
public final class FullScreenMonitor: Service {
    /// How often keys are read and the screen is redrawn (clock, time in store, fading highlights).
    public static let tick: Duration = .milliseconds(100)

    private let store: UInt16
    private let client: any MQTTClientProtocol
    private let clock: any ServiceClock
    private let broker: String
    private let topics: Topics
    private let logger: Logger
    private let till: Till?

    /// A till's view: the department whose "near the till" list is shown, and the name its check-in requests carry.
    public struct Till: Sendable {
        public var department: UInt16
        public var name: String

        public init(department: UInt16, name: String) {
            self.department = department
            self.name = name
        }
    }

    /// A monitor for `store`; `broker` is how the status line names the broker (its URL); with `till`, the "near the
    /// till" panel, whose numbers send check-in requests. `client` is `MQTTClient` (an in-memory one in tests); `clock`
    /// gives the time shown and paces the redraws.
    public init(
        store: UInt16, client: any MQTTClientProtocol, broker: String, topicRoot: String = Topics.defaultRoot, till: Till? = nil,
        clock: any ServiceClock = WallClock(), logger: Logger
    ) {
        self.till = till
        self.store = store
        self.client = client
        self.clock = clock
        self.broker = broker
        self.topics = Topics(root: topicRoot)
        self.logger = logger
    }

    /// What the view reacts to, merged into one stream so a single task owns the model and the terminal.
    private enum Input: Sendable {
        case message(MQTTMessage)
        case connection(MQTTConnectionEvent)
        case tick
    }

    public func run() async throws {
        let terminal = try Terminal()
        defer { terminal.close() }
        let connectionEvents = client.connectionEvents()  // before start(), so the first connection is not missed
        do {
            try client.start()
            try client.subscribe(topics.presence(store: store), qos: .atLeastOnce)
            try client.subscribe(topics.events(store: store), qos: .atLeastOnce)
            try client.subscribe(topics.alerts(store: store), qos: .atLeastOnce)
        } catch {
            await client.disconnect(timeout: .seconds(1))
            throw error
        }

        let (inputs, feed) = AsyncStream.makeStream(of: Input.self)
        let messages = client.messages
        let clock = self.clock
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    for await message in messages { feed.yield(.message(message)) }
                }
                group.addTask {
                    for await event in connectionEvents { feed.yield(.connection(event)) }
                }
                group.addTask {
                    while !Task.isCancelled {
                        feed.yield(.tick)
                        try? await clock.sleep(for: Self.tick)
                    }
                }
                var model = MonitorModel(store: store, broker: broker, tillDepartment: till?.department)
                if client.isConnected { model.connection(changed: true, at: clock.now()) }
                var drops = DropCounter()
                inputLoop: for await input in inputs {
                    let now = clock.now()
                    switch input {
                    case .message(let message):
                        receive(message, into: &model, drops: &drops, at: now)
                    case .connection(.connected):
                        model.connection(changed: true, at: now)
                    case .connection(.disconnected(let reason)):
                        if reason != .requested { model.connection(changed: false, at: now) }
                    case .connection(.trouble(let trouble)):
                        BrokerEventLog.log(trouble, to: logger)
                    case .tick:
                        model.tick(at: now)
                        if handleKeys(terminal, model: model, at: now) { break inputLoop }
                        terminal.draw(ScreenRenderer.render(model, size: terminal.size, now: now))
                    }
                }
                group.cancelAll()
            }
        } onGracefulShutdown: {
            feed.finish()
        }
        terminal.close()
        for trouble in await client.disconnect(timeout: .seconds(2)) { BrokerEventLog.log(trouble, to: logger) }
    }

    /// Applies a presence snapshot or an event; anything unreadable is counted (and logged, throttled).
    private func receive(_ message: MQTTMessage, into model: inout MonitorModel, drops: inout DropCounter, at now: Timestamp) {
        do throws(WireError) {
            if message.topic == topics.presence(store: store) {
                if message.payload.isEmpty { return }  // a cleared retained snapshot: nothing to show yet
                model.apply(snapshot: try WireCodec.decodePresenceSnapshot(message.payload), at: now)
            } else if message.topic == topics.events(store: store) {
                model.apply(event: try WireCodec.decodeEvent(message.payload), at: now)
            } else if message.topic == topics.alerts(store: store) {
                model.apply(alert: try WireCodec.decodeAlert(message.payload), at: now)
            }
        } catch {
            model.noteDroppedMessage()
            drops.drop(reason: error.reason, topic: message.topic, detail: error.description, at: now, logger: logger)
        }
    }

    /// Reads every key waiting; `true` if one of them was `q`. A number checks in the member listed under it near
    /// the till. A resize needs nothing more: the next frame is drawn at the size curses now reports.
    private func handleKeys(_ terminal: Terminal, model: MonitorModel, at now: Timestamp) -> Bool {
        while let key = terminal.nextKey() {
            switch key {
            case .quit: return true
            case .digit(let number):
                guard let till, let member = model.till?.member(numbered: number) else { continue }
                let request = CheckinRequest(
                    id: RandomID.make(hexDigits: 16), member: member.id, department: till.department,
                    till: till.name, at: now)
                do {
                    try client.publish(
                        topic: topics.checkins(store: store), payload: WireCodec.encode(request), qos: .atLeastOnce,
                        retain: false)
                } catch {
                    logger.warning("could not send a check-in request", metadata: ["member": "\(member.id)", "error": "\(error)"])
                }
            case .resize, .other:
                continue
            }
        }
        return false
    }
}
