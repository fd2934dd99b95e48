import ArgumentParser
import BeaconMeshCore
import BeaconMeshService
import Testing

@testable import BeaconMeshScanner

@Suite("Scanner settings and config file")
struct ScannerSettingsTests {
    private func file(_ text: String) throws -> ScannerConfigFile {
        try ScannerConfigFile(text: text, path: "node.yaml", allowedKeys: ScannerOptions.configKeys)
    }

    /// The settings of a command line (`flags`) and a config file (`text`), checked.
    private func resolve(flags: [String] = [], file text: String) throws -> ScannerConfiguration {
        try ScannerSettings(commandLine: try ScannerOptions.parse(flags), file: try file(text)).resolve()
    }

    @Test("a config file can hold every flag; lists inline or as items")
    func fullFile() throws {
        let config = try file(
            """
            # Department 10 of San Francisco
            store: 1
            department: 10
            node: "door-2"
            broker: 'mqtts://broker.local:8883'
            source: hci1
            uuid:
              - 0cf052c2-97ca-407c-84f8-b62aac4e9020
              - 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6
            flush: 250ms   # faster batches
            qos: 0
            details: true
            username: node-1-10-door-2
            passwordFile: /etc/beaconmesh/node.pass
            cafile: /etc/beaconmesh/ca.crt
            simRoute: [10, 20]
            """)
        let configuration = try ScannerSettings(commandLine: try ScannerOptions.parse([]), file: config).resolve()
        #expect(configuration.node == NodeAddress(store: 1, department: 10, node: "door-2"))
        #expect(
            configuration.broker
                == BrokerConnection(
                    url: "mqtts://broker.local:8883", username: "node-1-10-door-2",
                    passwordFile: "/etc/beaconmesh/node.pass", caFile: "/etc/beaconmesh/ca.crt"))
        #expect(configuration.source == .adapter(index: 1))
        #expect(configuration.aggregation.allowedUUIDs.count == 2)
        #expect(configuration.aggregation.flushInterval == .milliseconds(250))
        #expect(configuration.sightingsQoS == 0)
        #expect(configuration.aggregation.includeDetails)
        #expect(configuration.advertisedUUID == BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020"))
        #expect(configuration.simulationRoute == [10, 20])
    }

    @Test("flags win over the file")
    func flagsWin() throws {
        #expect(try resolve(flags: ["--department", "30"], file: "store: 1\ndepartment: 10\n").node.department == 30)
    }

    @Test(
        "config mistakes name the file, line and key",
        arguments: [
            ("store: 1\ndepartment: 10\ncolor: red\n", "node.yaml:3: unknown key 'color'"),
            ("store: 1\ndepartment: 10\nstore: 2\n", "node.yaml:3: 'store' is set twice"),
            ("store: 1\n  department: 10\n", "node.yaml:2: unexpected indentation"),
            ("store: 1\ndepartment: 10\nbroker: \"mqtt://x\n", "node.yaml:3: the quoted value is not closed"),
            ("- 10\n", "node.yaml:1: a list item must be indented"),
        ])
    func fileErrors(text: String, message: String) {
        #expect {
            _ = try file(text)
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }

    @Test(
        "bad values name where they came from",
        arguments: [
            ("store: 70000\ndepartment: 10\n", "node.yaml:1: store '70000' must be a whole number"),
            ("store: 1\ndepartment: 10\nflush: soon\n", "node.yaml:3: flush 'soon' must be a duration"),
            ("store: 1\ndepartment: 10\nqos: 2\n", "node.yaml:3: qos '2' must be 0 or 1"),
            ("store: 1\ndepartment: 10\nsource: usb\n", "node.yaml:3: source 'usb' must be hci0"),
            ("store: 1\ndepartment: 10\nadvertise: yes\nsource: sim\n", "node.yaml:3: advertise needs an hciN source"),
            ("department: 10\n", "--store is required"),
            ("store: 1\ndepartment: 10\nimmediateBelow: 2\nnearBelow: 1\n", "node.yaml:4: nearBelow '1.0' must be farther"),
        ])
    func valueErrors(text: String, message: String) throws {
        #expect {
            _ = try resolve(file: text)
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }

    @Test(
        "a bad flag names the flag",
        arguments: [
            (["--store", "1", "--department", "2", "--lost-after", "0s"], "The value '0s' is invalid for '--lost-after <DURATION>'"),
            (["--store", "1", "--department", "2", "--min-rssi", "30"], "--min-rssi '30' must be between -127 and 20"),
            (
                ["--store", "1", "--department", "2", "--advertise", "--source", "sim"],
                "--advertise needs an hciN source: a replay or simulation has no radio"
            ),
        ])
    func flagError(flags: [String], message: String) {
        #expect {
            _ = try ScannerSettings(commandLine: try ScannerOptions.parse(flags)).resolve()
        } throws: { error in
            (error as? UsageError)?.description ?? ScannerOptions.message(for: error) == message
        }
    }

    @Test("a file value the command line also gives is not even read: flags win, also over a bad file value")
    func flagWinsOverBadFileValue() throws {
        #expect(
            try resolve(flags: ["--flush", "1s"], file: "store: 1\ndepartment: 10\nflush: soon\n").aggregation.flushInterval == .seconds(1))
    }

    @Test("nothing given: every default comes from ScannerConfiguration")
    func defaults() throws {
        let configuration = try resolve(file: "store: 1\ndepartment: 10\n")
        let defaults = ScannerOptions.defaults
        #expect(configuration.node.node == "a")
        #expect(configuration.broker.url == "mqtt://127.0.0.1:1883")
        #expect(configuration.source == .adapter(index: 0))
        #expect(configuration.speed == .factor(1))
        #expect(configuration.sightingsQoS == 1)
        #expect(configuration.queueCapacity == defaults.queueCapacity)
        #expect(configuration.aggregation == defaults.aggregation)
        #expect(configuration.healthInterval == .seconds(30))
        #expect(configuration.topicRoot == "beaconmesh")
        #expect(configuration.simulationOutside == .seconds(60))
        #expect(configuration.scanSettings == (try ScanSettings(interval: .milliseconds(100), window: .milliseconds(100), mode: .passive)))
        #expect(configuration.advertisedUUID == nil && !configuration.advertise)
    }

    @Test("every flag of --help is a config key in camelCase, and every key but the file-only ones is a flag")
    func configKeysMatchFlags() {
        let help = ScannerOptions.helpMessage(columns: 200)
        let flags = Set(
            help.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "," })
                .filter { $0.hasPrefix("--") && $0 != "--help" }
                .map { flag in
                    var key = ""
                    var upper = false
                    for character in flag.dropFirst(2) {
                        if character == "-" {
                            upper = true
                        } else {
                            key += upper ? character.uppercased() : String(character)
                            upper = false
                        }
                    }
                    return key
                })
        #expect(flags.count > 25)
        #expect(flags.subtracting(["config"]) == ScannerOptions.configKeys.subtracting(["healthInterval", "topicRoot"]))
    }
}
