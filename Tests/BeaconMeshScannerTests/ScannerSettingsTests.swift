import BeaconMeshCore
import BeaconMeshService
import Testing
@testable import BeaconMeshScanner

@Suite("Scanner settings and config file")
struct ScannerSettingsTests {
    private func file(_ text: String) throws -> ScannerConfigFile {
        try ScannerConfigFile(text: text, path: "node.yaml", allowedKeys: ScannerSettings.keys)
    }

    @Test("a config file can hold every flag; lists inline or as items")
    func fullFile() throws {
        let config = try file("""
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
        var settings = ScannerSettings()
        settings.add(config)
        let configuration = try settings.resolve()
        #expect(configuration.node == NodeAddress(store: 1, department: 10, node: "door-2"))
        #expect(configuration.broker == BrokerConnection(url: "mqtts://broker.local:8883", username: "node-1-10-door-2",
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
        var settings = ScannerSettings()
        settings.flag("department", "30")
        settings.add(try file("store: 1\ndepartment: 10\n"))
        #expect(try settings.resolve().node.department == 30)
    }

    @Test("config mistakes name the file, line and key", arguments: [
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

    @Test("bad values name where they came from", arguments: [
        ("store: 70000\ndepartment: 10\n", "node.yaml:1: store '70000' must be a whole number"),
        ("store: 1\ndepartment: 10\nflush: soon\n", "node.yaml:3: flush 'soon' must be a duration"),
        ("store: 1\ndepartment: 10\nqos: 2\n", "node.yaml:3: qos '2' must be 0 or 1"),
        ("store: 1\ndepartment: 10\nsource: usb\n", "node.yaml:3: source 'usb' must be hci0"),
        ("store: 1\ndepartment: 10\nadvertise: yes\nsource: sim\n", "node.yaml:3: advertise needs an hciN source"),
        ("department: 10\n", "--store is required"),
        ("store: 1\ndepartment: 10\nimmediateBelow: 2\nnearBelow: 1\n", "node.yaml:4: nearBelow '1.0' must be farther"),
    ])
    func valueErrors(text: String, message: String) throws {
        var settings = ScannerSettings()
        settings.add(try file(text))
        #expect {
            _ = try settings.resolve()
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }

    @Test("a bad flag names the flag")
    func flagError() {
        var settings = ScannerSettings()
        settings.flag("store", "1")
        settings.flag("department", "2")
        settings.flag("lostAfter", "0s")
        #expect {
            _ = try settings.resolve()
        } throws: { error in
            "\(error)" == "--lost-after '0s' must be a duration such as 250ms, 5s or 1m"
        }
    }
}
