import BeaconMeshCore
import BeaconMeshWire
import Testing

@Suite("Node config and status payloads")
struct NodeConfigCodecTests {
    @Test("a node config is written as the contract shows and read back with its settings as sent")
    func roundTrip() throws {
        var settings = NodeSettings()
        settings.rssiAdjustment = -3
        settings.flush = .milliseconds(250)
        settings.uuid = [BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!]
        settings.advertise = false
        let config = NodeConfig(revision: 7, at: Timestamp(milliseconds: 1_763_769_600_000), settings: settings)
        let text = String(decoding: WireCodec.encode(config), as: UTF8.self)
        #expect(
            text
                == #"{"v":1,"revision":7,"at":1763769600000,"settings":{"rssiAdjustment":-3,"uuid":["0cf052c2-97ca-407c-84f8-b62aac4e9020"],"advertise":false,"flush":"250ms"}}"#
        )
        let document = try WireCodec.decodeNodeConfigDocument(Array(text.utf8))
        #expect(try document.checked() == config)
    }

    @Test("zero bytes delete a level; bad JSON, an unknown v or a missing revision are unreadable, with the reason")
    func messages() {
        #expect(WireCodec.decodeNodeConfig([]) == .removed)
        guard case .unreadable(_, nil) = WireCodec.decodeNodeConfig(Array("{nope".utf8)) else {
            Issue.record("bad JSON read as a config")
            return
        }
        guard case .unreadable(let reason, _) = WireCodec.decodeNodeConfig(Array(#"{"v":2,"revision":3,"at":1,"settings":{}}"#.utf8))
        else {
            Issue.record("v 2 read as a config")
            return
        }
        #expect(reason.contains("unknown payload version"))
        guard case .unreadable(let missing, nil) = WireCodec.decodeNodeConfig(Array(#"{"v":1,"at":1,"settings":{}}"#.utf8)) else {
            Issue.record("a config without a revision read")
            return
        }
        #expect(missing.contains("revision"))
        guard case .document(let document) = WireCodec.decodeNodeConfig(Array(#"{"v":1,"revision":2,"at":1,"settings":{"x":{}}}"#.utf8))
        else {
            Issue.record("a config with an odd value not read")
            return
        }
        #expect(document.settings == [NodeConfigDocument.Entry(key: "x", value: nil)])
    }

    @Test("the node status carries config per level, null for a level without one, and reads back")
    func statusConfig() throws {
        let status = NodeStatus(
            state: .online, version: "1.2.0", boot: "b", source: "sim", startedAt: Timestamp(milliseconds: 5),
            config: NodeConfigReports(store: NodeConfigReport(revision: 7, state: .refused, error: "colour is not a node config setting")))
        let text = String(decoding: WireCodec.encode(status), as: UTF8.self)
        #expect(
            text.hasSuffix(
                #""config":{"store":{"revision":7,"state":"refused","error":"colour is not a node config setting"},"node":null}}"#))
        #expect(try WireCodec.decodeNodeStatus(Array(text.utf8)) == status)
        // An older node's status has no config at all.
        #expect(try WireCodec.decodeNodeStatus(Array(#"{"v":1,"state":"offline"}"#.utf8)).config == NodeConfigReports())
    }
}
