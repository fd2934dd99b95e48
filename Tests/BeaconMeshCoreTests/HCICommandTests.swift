import BeaconMeshCore
import Testing

/// Hex of real command and event packets, copied from the shared captures (btsnoop H4 records):
/// `cnrd__yeelock` is a Bluetooth 4 controller driven with legacy scan commands, `crossnite__NovaX-Escooter` a
/// Bluetooth 5 controller driven with the extended scan and advertising commands.
private enum Recorded {
    static let reset = "01030c00"
    static let readFeatures = "01032000"
    static let yeelockFeaturesAnswer = "040e0c01032000ff00000000000000"
    static let crossniteFeaturesAnswer = "040e0c01032000ff7f00ff06000000"
    static let yeelockScanParameters = "010b200701120012000300"
    static let yeelockScanEnable = "010c20020100"
    static let yeelockScanParametersAnswer = "040e04010b2000"
    static let crossniteExtendedScanParameters = "0141200801000101c012c012"
    static let crossniteExtendedScanEnable = "01422006010000000000"
    static let crossniteExtendedScanDisable = "01422006000000000000"
    static let crossniteExtendedAdvertisingParameters = "01362019001000900100c2010007010000000000000000010100010000"
    static let crossniteExtendedAdvertisingParametersAnswer = "040e050136200001"
    static let crossniteExtendedAdvertisingData =
        "013720230003011f1e16f3fe4a17235531374a1132f8b3a31f0857ac32a6122b5958e0ac81985a"
    static let crossniteExtendedAdvertisingEnable = "01392006010100000000"
    static let yeelockCommandStatus = "040f0400010d20"
}

private func hex(_ bytes: [UInt8]) -> String { HexDigits.string(bytes) }
private func bytes(_ text: String) -> [UInt8] { HexDigits.bytes(text)! }

@Suite("HCI command packets")
struct HCICommandTests {
    @Test("opcodes split into OGF and OCF and name themselves")
    func opcodes() {
        #expect(HCIOpcode.leSetScanEnable.rawValue == 0x200C)
        #expect(HCIOpcode.leSetScanEnable.ogf == 0x08)
        #expect(HCIOpcode.leSetScanEnable.ocf == 0x00C)
        #expect(HCIOpcode.reset.rawValue == 0x0C03)
        #expect(HCIOpcode(ogf: 0x08, ocf: 0x041) == .leSetExtendedScanParameters)
        #expect(HCIOpcode.leSetScanEnable.description == "LE Set Scan Enable (0x200C)")
        #expect(HCIOpcode(rawValue: 0xFD57).description == "HCI command (0xFD57)")
    }

    @Test("Reset and LE Read Local Supported Features match a real host's bytes")
    func parameterlessCommands() {
        #expect(hex(HCICommand.reset.packet) == Recorded.reset)
        #expect(hex(HCICommand.leReadLocalSupportedFeatures.packet) == Recorded.readFeatures)
    }

    @Test("legacy scan parameters: type, interval, window, own address type, filter policy, little-endian")
    func legacyScanParameters() throws {
        let recorded = try ScanSettings(interval: .microseconds(11_250), window: .microseconds(11_250), mode: .active)
        #expect(hex(HCICommand.leSetScanParameters(recorded, ownAddressType: 3).packet) == Recorded.yeelockScanParameters)
        // Our defaults: passive, 100 ms / 100 ms (160 = 0x00A0 units), public address, accept all.
        #expect(hex(HCICommand.leSetScanParameters(ScanSettings()).packet) == "010b200700a000a0000000")
    }

    @Test("legacy scan enable turns duplicate filtering off; disable sends zeros")
    func legacyScanEnable() {
        #expect(hex(HCICommand.leSetScanEnable(true).packet) == Recorded.yeelockScanEnable)
        #expect(hex(HCICommand.leSetScanEnable(false).packet) == "010c20020000")
        #expect(hex(HCICommand.leSetScanEnable(true, filterDuplicates: true).packet) == "010c20020101")
    }

    @Test("extended scan parameters: 1M PHY only, per-PHY type, interval and window")
    func extendedScanParameters() throws {
        let recorded = try ScanSettings(interval: .seconds(3), window: .seconds(3), mode: .active)
        #expect(
            hex(HCICommand.leSetExtendedScanParameters(recorded, ownAddressType: 1).packet)
                == Recorded.crossniteExtendedScanParameters)
        #expect(hex(HCICommand.leSetExtendedScanParameters(ScanSettings()).packet) == "0141200800000100a000a000")
    }

    @Test("extended scan enable: no duplicate filter, no duration, no period")
    func extendedScanEnable() {
        #expect(hex(HCICommand.leSetExtendedScanEnable(true).packet) == Recorded.crossniteExtendedScanEnable)
        #expect(hex(HCICommand.leSetExtendedScanEnable(false).packet) == Recorded.crossniteExtendedScanDisable)
    }

    @Test("legacy advertising parameters: ADV_NONCONN_IND every 100 ms on all channels")
    func legacyAdvertisingParameters() {
        #expect(hex(HCICommand.leSetAdvertisingParameters().packet) == "0106200fa000a0000300000000000000000700")
    }

    @Test("iBeacon advertising data: length, the 30 iBeacon bytes, one byte of padding to 31")
    func iBeaconAdvertisingData() throws {
        let uuid = try #require(BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020"))
        let beacon = IBeaconAdvertisingData(uuid: uuid, major: 9, minor: 6, measuredPower: -59)
        let command = HCICommand.leSetAdvertisingData(beacon.bytes)
        #expect(
            hex(command.packet)
                == "01082020" + "1e" + "0201061aff4c000215" + "0cf052c297ca407c84f8b62aac4e9020" + "0009" + "0006" + "c5" + "00")
        #expect(command.packet.count == 4 + 32)
    }

    @Test("advertise enable and disable")
    func advertiseEnable() {
        #expect(hex(HCICommand.leSetAdvertiseEnable(true).packet) == "010a200101")
        #expect(hex(HCICommand.leSetAdvertiseEnable(false).packet) == "010a200100")
    }

    @Test("extended advertising parameters, data and enable match a real Bluetooth 5 host's bytes")
    func extendedAdvertising() throws {
        let settings = try AdvertisingSettings(minimumInterval: .milliseconds(250), maximumInterval: .microseconds(281_250))
        #expect(
            hex(HCICommand.leSetExtendedAdvertisingParameters(handle: 0, settings, ownAddressType: 1, txPower: 1).packet)
                == Recorded.crossniteExtendedAdvertisingParameters)
        let recordedData = Array(bytes(Recorded.crossniteExtendedAdvertisingData)[8...])
        #expect(
            hex(HCICommand.leSetExtendedAdvertisingData(handle: 0, recordedData).packet)
                == Recorded.crossniteExtendedAdvertisingData)
        #expect(
            hex(HCICommand.leSetExtendedAdvertisingEnable(true, handle: 0).packet)
                == Recorded.crossniteExtendedAdvertisingEnable)
        // Our defaults: set 0x0A, legacy ADV_NONCONN_IND PDUs, 100 ms, public address, no TX power preference.
        #expect(
            hex(HCICommand.leSetExtendedAdvertisingParameters(handle: 0x0A).packet)
                == "01362019" + "0a" + "1000" + "a00000" + "a00000" + "07" + "00" + "00" + "000000000000" + "00" + "7f"
                + "01" + "00" + "01" + "00" + "00")
        #expect(hex(HCICommand.leSetExtendedAdvertisingEnable(false, handle: 0x0A).packet) == "013920060001" + "0a000000")
    }
}

@Suite("HCI command answers")
struct HCICommandResponseTests {
    @Test("a real Command Complete for LE Read Local Supported Features: Bluetooth 4 controller, no extended advertising")
    func bluetooth4Features() throws {
        let response = try #require(HCICommandResponse(h4Packet: bytes(Recorded.yeelockFeaturesAnswer)))
        #expect(response.kind == .complete)
        #expect(response.opcode == .leReadLocalSupportedFeatures)
        #expect(response.status == .success)
        #expect(response.isFinal)
        let features = try #require(LESupportedFeatures(response))
        #expect(features.rawValue == 0xFF)
        #expect(!features.supportsExtendedAdvertising)
    }

    @Test("a real Command Complete for LE Read Local Supported Features: Bluetooth 5 controller, bit 12 set")
    func bluetooth5Features() throws {
        let response = try #require(HCICommandResponse(h4Packet: bytes(Recorded.crossniteFeaturesAnswer)))
        let features = try #require(LESupportedFeatures(response))
        #expect(features.supportsExtendedAdvertising)
        #expect(features.contains(bit: 0))
        #expect(!features.contains(bit: 64))
    }

    @Test("Command Complete with return parameters after the status")
    func returnParameters() throws {
        let response = try #require(HCICommandResponse(h4Packet: bytes(Recorded.crossniteExtendedAdvertisingParametersAnswer)))
        #expect(response.opcode == .leSetExtendedAdvertisingParameters)
        #expect(response.status.isSuccess)
        #expect(response.returnParameters == [0x01])  // selected TX power, 1 dBm
        let plain = try #require(HCICommandResponse(h4Packet: bytes(Recorded.yeelockScanParametersAnswer)))
        #expect(plain.opcode == .leSetScanParameters && plain.returnParameters.isEmpty)
    }

    @Test("Command Status: a success only says the command started; a refusal is final")
    func commandStatus() throws {
        let started = try #require(HCICommandResponse(h4Packet: bytes(Recorded.yeelockCommandStatus)))
        #expect(started.kind == .status)
        #expect(started.opcode == HCIOpcode(rawValue: 0x200D))
        #expect(started.status.isSuccess)
        #expect(!started.isFinal)
        let refused = try #require(HCICommandResponse(h4Packet: bytes("040f040c010c20")))
        #expect(refused.status == .commandDisallowed)
        #expect(refused.isFinal)
        #expect(refused.status.description == "command disallowed (status 0x0c)")
    }

    @Test("a refusal in Command Complete carries its status")
    func refusedComplete() throws {
        let response = try #require(HCICommandResponse(h4Packet: bytes("040e04010c200c")))
        #expect(response.opcode == .leSetScanEnable)
        #expect(response.status == .commandDisallowed)
    }

    @Test("other events, short events and events whose length lies are no answer")
    func notAnswers() {
        #expect(HCICommandResponse(h4Packet: bytes("043e0c0201")) == nil)  // LE Meta
        #expect(HCICommandResponse(h4Packet: bytes("040e0c01032000ff")) == nil)  // length says 12, 5 present
        #expect(HCICommandResponse(h4Packet: bytes("040e020103")) == nil)  // too short for an opcode
        #expect(HCICommandResponse(h4Packet: bytes("040f03000100")) == nil)
        #expect(HCICommandResponse(h4Packet: bytes("010c20020100")) == nil)  // a command, not an event
        #expect(HCICommandResponse(h4Packet: []) == nil)
    }

    @Test("features need a successful, complete answer to the right command")
    func featuresNeedTheRightAnswer() throws {
        let wrongCommand = try #require(HCICommandResponse(h4Packet: bytes("040e0c01022000ff00000000000000")))
        #expect(LESupportedFeatures(wrongCommand) == nil)
        let refused = try #require(HCICommandResponse(h4Packet: bytes("040e040103200c")))
        #expect(LESupportedFeatures(refused) == nil)
    }
}

@Suite("Scan and advertising settings")
struct ScanSettingsTests {
    @Test("defaults: listen all the time (100 ms window in a 100 ms interval), passively")
    func defaults() throws {
        let settings = ScanSettings()
        #expect(settings.intervalUnits == 160 && settings.windowUnits == 160)
        #expect(settings.interval == .milliseconds(100) && settings.window == .milliseconds(100))
        #expect(settings.mode == .passive)
        #expect(try ScanSettings() == ScanSettings(interval: .milliseconds(100)))
    }

    @Test("durations round to the controller's 0.625 ms unit")
    func rounding() throws {
        #expect(try ScanSettings(interval: .milliseconds(30), window: .milliseconds(30)).intervalUnits == 48)
        #expect(try ScanSettings(interval: .microseconds(2500), window: .microseconds(2500)).intervalUnits == 4)
        #expect(try ScanSettings(interval: .milliseconds(10_240), window: .milliseconds(10)).intervalUnits == 0x4000)
    }

    @Test("out-of-range times and a window longer than the interval are refused in plain words")
    func refusals() {
        #expect(throws: ScanSettingsError(message: "scan interval 1ms is out of range: it must be between 2.5ms and 10.24s")) {
            try ScanSettings(interval: .milliseconds(1), window: .milliseconds(1))
        }
        #expect(throws: ScanSettingsError(message: "scan window 20s is out of range: it must be between 2.5ms and 10.24s")) {
            try ScanSettings(interval: .seconds(5), window: .seconds(20))
        }
        #expect(
            throws: ScanSettingsError(
                message: "scan window 200ms is longer than the scan interval 100ms; make the window at most as long as the interval")
        ) {
            try ScanSettings(interval: .milliseconds(100), window: .milliseconds(200))
        }
        #expect(
            throws: ScanSettingsError(
                message: "advertising interval 20ms is out of range: it must be between 100ms and 10.24s")
        ) {
            try AdvertisingSettings(interval: .milliseconds(20))
        }
    }

    @Test("advertising defaults to every 100 ms")
    func advertisingDefaults() throws {
        #expect(AdvertisingSettings().minimumIntervalUnits == 0xA0)
        #expect(try AdvertisingSettings(interval: .milliseconds(100)) == AdvertisingSettings())
    }
}
