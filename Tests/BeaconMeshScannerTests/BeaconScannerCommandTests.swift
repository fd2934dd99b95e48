import ArgumentParser
import BeaconMeshCore
import BeaconMeshScanner
import BeaconMeshService
import Foundation
import Logging
import Testing

@testable import beacon_scanner

@Suite("beacon-scanner command line")
struct BeaconScannerCommandTests {
    @Test("a realistic command line parses into typed settings without running")
    func parsesTypedValues() throws {
        let command = try BeaconScanner.parse([
            "--store", "1", "--department", "10", "--node", "door-2", "--broker", "mqtts://broker.local:8883",
            "--username", "node-1-10-door-2", "--password-file", "/etc/beaconmesh/node.pass", "--cafile", "/etc/ca.pem",
            "--source", "btsnoop:/var/lib/capture.log", "--speed", "max",
            "--uuid", "0cf052c2-97ca-407c-84f8-b62aac4e9020", "--uuid", "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6",
            "--flush", "250ms", "--lost-after", "20s", "--min-rssi=-90", "--qos", "0", "--queue-size", "500",
            "--details", "--scan-interval", "200ms", "--scan-window", "100ms", "--active-scan", "--log-level", "debug",
        ])
        let options = command.options
        #expect(options.store == 1 && options.department == 10)
        #expect(options.node?.id == "door-2")
        #expect(options.source == .capture(path: "/var/lib/capture.log"))
        #expect(options.speed == .maximum)
        #expect(
            options.uuids == [BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!, BeaconUUID("2f234454-cf6d-4a0f-adf2-f4911ba9ffa6")!])
        #expect(options.flush?.duration == .milliseconds(250))
        #expect(options.qos == .atMostOnce)
        #expect(options.logLevel == .debug)

        let configuration = try command.settings().resolve()
        #expect(configuration.node == NodeAddress(store: 1, department: 10, node: "door-2"))
        #expect(
            configuration.broker
                == BrokerConnection(
                    url: "mqtts://broker.local:8883", username: "node-1-10-door-2",
                    passwordFile: "/etc/beaconmesh/node.pass", caFile: "/etc/ca.pem"))
        #expect(configuration.aggregation.lostAfter == .seconds(20))
        #expect(configuration.aggregation.minimumRSSI == -90)
        #expect(configuration.sightingsQoS == 0 && configuration.queueCapacity == 500)
        #expect(configuration.aggregation.includeDetails)
        #expect(configuration.scanSettings == (try ScanSettings(interval: .milliseconds(200), window: .milliseconds(100), mode: .active)))
        #expect(configuration.advertisedUUID == BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020"))
    }

    @Test("--config fills what the flags leave out")
    func configFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("scanner-\(UUID().uuidString).yaml").path
        try "store: 1\ndepartment: 10\nflush: 2s\nqos: 0\ntopicRoot: test\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let configuration = try BeaconScanner.parse(["--config", path, "--qos", "1"]).settings().resolve()
        #expect(configuration.node.department == 10)
        #expect(configuration.aggregation.flushInterval == .seconds(2))
        #expect(configuration.sightingsQoS == 1)
        #expect(configuration.topicRoot == "test")
    }

    @Test(
        "a wrong value is refused with one line naming the flag",
        arguments: [
            (["--store", "1", "--department", "10", "--flush", "soon"], "The value 'soon' is invalid for '--flush <DURATION>'"),
            (["--store", "1", "--department", "10", "--speed", "0"], "The value '0' is invalid for '--speed <X|max>'"),
            (["--store", "70000", "--department", "10"], "The value '70000' is invalid for '--store <N>'"),
            (["--store", "1", "--department", "10", "--queue-size", "0"], "--queue-size '0' must be at least 1"),
            (["--department", "10"], "--store is required (on the command line or in --config)"),
            (["--store", "1", "--department", "10", "--colour", "red"], "Unknown option '--colour'"),
        ])
    func wrongValue(arguments: [String], message: String) {
        do {
            _ = try BeaconScanner.parse(arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            let text = (error as? UsageError)?.description ?? BeaconScanner.message(for: error)
            #expect(text == message)
            #expect(!text.contains("\n"))
        }
    }

    @Test("--help is pinned")
    func help() {
        #expect(BeaconScanner.helpMessage(columns: 120) == Self.help + "\n")
    }

    static let help = #"""
        OVERVIEW: Listen to Bluetooth LE beacons in one department and publish batched sightings to the MQTT broker.

        A node is named by the iBeacon convention: --store is the major, --department the minor.
        Sources: hci0 (a local adapter; needs CAP_NET_RAW and CAP_NET_ADMIN), btsnoop:PATH (replay a capture written by btmon
        -w or an Android HCI snoop log), sim (simulated shoppers).
        Every flag can also be set in a YAML --config file, by its long name in camelCase (store: 1, passwordFile:
        /etc/beaconmesh/node.pass, uuid: [...]); flags win over the file.
        The broker password comes from --password-file or the BEACONMESH_PASSWORD environment variable.

        USAGE: beacon-scanner <options>

        OPTIONS:
          --config <FILE>         A YAML file holding any of these settings.
          --store <N>             Store number (0-65535): the iBeacon major of this store.
          --department <N>        Department number (0-65535): the iBeacon minor of this department.
          --node <ID>             Node id within the department: 1-32 of a-z, 0-9, - (default a).
          --broker <URL>          Broker URL: mqtt://host:port or mqtts://host:port (default mqtt://127.0.0.1:1883).
          --username <U>          Broker user name.
          --password-file <F>     File holding the broker password (or set BEACONMESH_PASSWORD).
          --cafile <F>            CA certificate file to verify an mqtts:// broker (default: the system store).
          --source <SOURCE>       Where to hear adverts: hci0 (any hciN; the default), btsnoop:PATH or sim.
          --speed <X|max>         Replay pace for btsnoop: sources: a factor (1 = recorded pace, the default) or max.
          --uuid <UUID>           Only report iBeacons with this UUID (repeatable; default: all). The first is also the one
                                  --advertise sends.
          --flush <DURATION>      Flush window: how long adverts are collected into one batch (default 500ms).
          --lost-after <DURATION> A beacon not heard for this long is reported as lost (default 10s).
          --min-rssi <DBM>        Ignore adverts weaker than this (dBm, default -127).
          --qos <0|1>             QoS of sighting batches: 1 (at least once; the default) or 0.
          --queue-size <N>        Batches kept while the broker is unreachable; the oldest are dropped beyond (default 10000).
          --details               Also report each beacon's advertiser address, strongest reading and first-seen time.
          --advertise             Also broadcast this department's iBeacon (UUID, major = store, minor = department).
          --measured-power <DBM>  Measured power at 1 m that --advertise announces (dBm, default -59).
          --record <PATH>         Write what the radio hears to a btsnoop file (opens in btmon -r and Wireshark).
          --scan-interval <DURATION>
                                  LE scan interval (default 100ms).
          --scan-window <DURATION>
                                  LE scan window, at most the interval (default: the interval).
          --active-scan           Scan actively (ask for scan responses) instead of passively.
          --path-loss-exponent <N>
                                  Path-loss exponent of the distance model (2 in free space, 2.5-4 indoors; default 2).
          --rssi-adjustment <DB>  Added to every reading of this node to calibrate its antenna (dB).
          --immediate-below <M>   Closer than this is immediate (metres, default 0.5).
          --near-below <M>        Closer than this is near, farther is far (metres, default 3).
          --default-tx-power <DBM>
                                  Measured power at 1 m for beacons whose frames carry none (dBm, default -59).
          --sim-route <10,20,30>  Departments the simulated shoppers walk through, in order (sim only).
          --sim-outside <DURATION>
                                  How long simulated shoppers stay away between walks (sim only; default 60s, 0s: never leave).
          --log-level <LEVEL>     Log level: trace, debug, info (default), notice, warning, error or critical.
          --version               Show the version.
          -h, --help              Show help information.
        """#
}
