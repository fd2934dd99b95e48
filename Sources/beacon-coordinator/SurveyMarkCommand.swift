import ArgumentParser
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshWire
import Logging

/// `beacon-coordinator survey mark --store N --beacon KEY|member:ID --department D|none|stop`: publishes one survey mark to the
/// store's survey topic at QoS 1 and exits 0 once the broker has acknowledged it; 1 with one line when the broker
/// cannot be reached or does not acknowledge in time, 2 with one line for a bad flag or beacon key.
struct SurveyMarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mark",
        abstract: "Publish one survey mark: where the surveyor carrying a beacon is now.",
        discussion: """
            The store's coordinators keep the beacon's readings as samples of the marked department until the next mark \
            of that beacon: mark each department as you walk into it, none between departments, stop at the end. The \
            command exits 0 once the broker has acknowledged the mark (QoS 1; it prints the topic and the payload), and \
            1 when the broker cannot be reached or does not acknowledge it within 10 s. The broker password comes from \
            --password-file or the BEACONMESH_PASSWORD environment variable.
            """)

    /// How long to wait for the broker: first to accept the connection, then to acknowledge the mark (the messages
    /// say 10 s).
    static let brokerTimeout: Duration = .seconds(10)

    @Option(help: ArgumentHelp("The store being surveyed (0-65535).", valueName: "N"))
    var store: UInt16

    @Option(
        help: ArgumentHelp(
            "The beacon the surveyor carries: ibeacon:<uuid>:<major>:<minor>, altbeacon:…, eddystone:… or eddystone-eid:…; or member:ID for the beacons the registry gives that member (EID fobs included).",
            valueName: "KEY|member:ID"),
        transform: { text throws(ValidationError) in
            if text.hasPrefix("member:") {
                let member = String(text.dropFirst("member:".count))
                guard (1...64).contains(member.count) else { throw ValidationError("member:ID needs a member id of 1-64 characters") }
                return .member(member)
            }
            guard let key = BeaconKey(text.lowercased()) else {
                throw ValidationError(
                    "not a beacon key (ibeacon:<uuid>:<major>:<minor>, altbeacon:<id1>:<id2>:<id3>, eddystone:<namespace>:<instance> or eddystone-eid:<id>) nor member:ID"
                )
            }
            return .beacon(key)
        })
    var beacon: SurveyMark.Carried

    @Option(
        help: ArgumentHelp(
            "Where the surveyor is now: a department number, none (between departments) or stop (the survey of this beacon ends).",
            valueName: "D|none|stop"))
    var department: SurveyPlace

    @OptionGroup var brokerOptions: BrokerOptions

    func run() async throws {
        CommandLineProgram.bootstrapLogging(level: .error)
        let logger = Logger(label: "beacon-coordinator")
        let mqtt: MQTTConfiguration
        do {
            mqtt = try brokerOptions.connection.mqttConfiguration(clientID: nil, cleanSession: true, lastWill: nil)
        } catch {
            throw UsageError(error.description)
        }
        MQTTLibrary.initialize()
        let client = try MQTTClient(configuration: mqtt, logger: logger)
        let topic = Topics().survey(store: store)
        let payload = WireCodec.encode(department.mark(of: beacon, at: WallClock.now()))
        // Why the broker could not be reached, should it not be (the events end when the client disconnects).
        let events = client.connectionEvents()
        async let problem = BrokerEventLog.lastProblem(events)
        let id: MQTTMessageID
        do {
            try client.start()
            id = try client.publish(topic: topic, payload: payload, qos: .atLeastOnce, retain: false)
        } catch {
            await client.disconnect(timeout: .seconds(1))
            throw SurveyMarkFailure("cannot publish the mark: \(error)")
        }
        let connected = await client.waitUntilConnected(timeout: Self.brokerTimeout)
        var acknowledged = false
        if connected { acknowledged = await client.waitForAcknowledgement(of: id, timeout: Self.brokerTimeout) }
        await client.disconnect(timeout: .seconds(2))
        let why = (await problem).map { " (\($0))" } ?? ""
        guard connected else {
            throw SurveyMarkFailure("cannot reach the broker at \(mqtt.broker) within 10 s\(why): nothing was marked")
        }
        guard acknowledged else {
            throw SurveyMarkFailure("the broker at \(mqtt.broker) did not acknowledge the mark within 10 s")
        }
        CommandLineProgram.printLine("\(topic) \(String(decoding: payload, as: UTF8.self))")
    }

}

/// Why a mark was not published, in one line (exit 1).
struct SurveyMarkFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
