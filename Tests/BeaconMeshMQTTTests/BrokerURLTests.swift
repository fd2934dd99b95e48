import BeaconMeshMQTT
import Logging
import Testing

@Suite("Broker URLs")
struct BrokerURLTests {
    @Test("mqtt:// and mqtts:// parse, with default ports 1883 and 8883")
    func parsesValidURLs() throws {
        let plain = try BrokerURL("mqtt://127.0.0.1:1884")
        #expect(plain.scheme == .mqtt && plain.host == "127.0.0.1" && plain.port == 1884 && !plain.usesTLS)
        #expect(try BrokerURL("mqtt://broker.local").port == 1883)
        let tls = try BrokerURL("mqtts://mqtt.example.com")
        #expect(tls.usesTLS && tls.port == 8883)
        #expect(try BrokerURL("MQTTS://h:9000/").port == 9000)
        let v6 = try BrokerURL("mqtt://[::1]:1885")
        #expect(v6.host == "::1" && v6.port == 1885 && v6.description == "mqtt://[::1]:1885")
        #expect(try BrokerURL("mqtt://h").description == "mqtt://h:1883")
    }

    @Test(
        "a bad broker URL is an error naming the URL and what is wrong",
        arguments: [
            ("http://h:1883", "unknown scheme"),
            ("127.0.0.1:1883", "scheme is missing"),
            ("mqtt://:1883", "host is missing"),
            ("mqtt://h:", "port after"),
            ("mqtt://h:abc", "not a number"),
            ("mqtt://h:0", "outside 1…65535"),
            ("mqtt://h:70000", "outside 1…65535"),
            ("mqtt://user:pw@h:1883", "do not belong in the URL"),
            ("mqtt://h:1883/topic", "no path"),
            ("mqtt://[::1:1883", "closing"),
            ("mqtt://h ost", "white space"),
        ])
    func rejectsBadURLs(url: String, problem: String) {
        do {
            _ = try BrokerURL(url)
            Issue.record("\(url) was accepted")
        } catch {
            let message = error.description
            #expect(message.contains("\"\(url)\""), "message should name the URL: \(message)")
            #expect(message.contains(problem), "message should say \(problem): \(message)")
            #expect(!message.contains("\n"))
        }
    }
}

@Suite("Configuration and topic filters")
struct ConfigurationTests {
    @Test("a persistent session without a fixed client id is rejected")
    func persistentSessionNeedsClientID() throws {
        let configuration = MQTTConfiguration(broker: try BrokerURL("mqtt://127.0.0.1:1"), cleanSession: false)
        #expect(throws: MQTTError.invalidConfiguration("a persistent session (clean session off) needs a fixed client id")) {
            try configuration.validate()
        }
    }

    @Test("impossible settings name the setting")
    func invalidSettings() throws {
        let broker = try BrokerURL("mqtt://127.0.0.1:1")
        let cases: [(MQTTConfiguration, String)] = [
            (MQTTConfiguration(broker: broker, password: "secret"), "password was given without a user name"),
            (MQTTConfiguration(broker: broker, caFile: "/etc/ssl/ca.pem"), "not a TLS URL"),
            (MQTTConfiguration(broker: broker, keepAlive: .seconds(2)), "keep-alive"),
            (MQTTConfiguration(broker: broker, reconnectDelayMin: .seconds(5), reconnectDelayMax: .seconds(2)), "maximum reconnect delay"),
            (MQTTConfiguration(broker: broker, lastWill: MQTTLastWill(topic: "a/#", payload: [])), "last will topic"),
        ]
        for (configuration, expected) in cases {
            do {
                try configuration.validate()
                Issue.record("accepted: \(configuration)")
            } catch {
                #expect(error.description.contains(expected), "\(error)")
            }
        }
    }

    @Test("the password never shows in the configuration's description")
    func passwordIsMasked() throws {
        let configuration = MQTTConfiguration(
            broker: try BrokerURL("mqtts://h"), username: "scanner", password: "hunter2")
        #expect(!configuration.description.contains("hunter2"))
        #expect(configuration.description.contains("username: scanner"))
    }

    @Test("a CA file that cannot be read is reported by path")
    func unreadableCAFile() throws {
        let configuration = MQTTConfiguration(broker: try BrokerURL("mqtts://h"), caFile: "/nonexistent/ca.pem")
        do {
            _ = try MQTTClient(configuration: configuration, logger: .init(label: "test"))
            Issue.record("accepted a missing CA file")
        } catch {
            #expect(error.description.contains("/nonexistent/ca.pem"))
            #expect(error.description.contains("No such file") || error.description.contains("no such file"))
        }
    }

    @Test("+ matches one level, # matches the rest")
    func topicFilters() throws {
        let events = try MQTTTopicFilter("beaconmesh/v1/stores/+/events")
        #expect(events.matches(topic: "beaconmesh/v1/stores/1/events"))
        #expect(!events.matches(topic: "beaconmesh/v1/stores/1/departments/10/events"))
        let store = try MQTTTopicFilter("beaconmesh/v1/stores/1/#")
        #expect(store.matches(topic: "beaconmesh/v1/stores/1/departments/10/nodes/a/sightings"))
        #expect(store.matches(topic: "beaconmesh/v1/stores/1"))
        #expect(!store.matches(topic: "beaconmesh/v1/stores/2/events"))
        #expect(throws: MQTTError.self) { try MQTTTopicFilter("a/#/b") }
        #expect(throws: MQTTError.self) { try MQTTTopicFilter("a/b+") }
        #expect(throws: MQTTError.self) { try MQTTTopicFilter("") }
    }
}
