import BeaconMeshCore
import Testing

@Suite("iBeacon advertising data")
struct IBeaconAdvertisingDataTests {
    private let advertisement = IBeaconAdvertisingData(
        uuid: BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!, major: 9, minor: 0x0106, measuredPower: -59)

    @Test("the advertising data is flags 02 01 06, then 1A FF 4C 00 02 15 uuid major minor power: 30 bytes")
    func bytes() {
        #expect(
            HexDigits.string(advertisement.bytes)
                == "020106" + "1aff4c000215" + "0cf052c297ca407c84f8b62aac4e9020" + "0009" + "0106" + "c5")
        #expect(advertisement.bytes.count == 30)
    }

    @Test("the decoder reads back exactly the iBeacon that was built")
    func decodesBack() {
        #expect(
            BeaconFrameDecoder.frames(inAdvertisingData: advertisement.bytes) == [
                .iBeacon(uuid: advertisement.uuid, major: 9, minor: 0x0106, measuredPower: -59)
            ])
    }

    @Test("extreme values survive the round trip")
    func extremes() {
        let extreme = IBeaconAdvertisingData(
            uuid: BeaconUUID(high: .max, low: 0), major: .max, minor: 0, measuredPower: .min)
        #expect(
            BeaconFrameDecoder.frames(inAdvertisingData: extreme.bytes) == [
                .iBeacon(uuid: extreme.uuid, major: .max, minor: 0, measuredPower: .min)
            ])
    }
}
