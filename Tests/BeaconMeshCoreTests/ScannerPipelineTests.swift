import Testing

@testable import BeaconMeshCore

@Suite("Scanner pipeline")
struct ScannerPipelineTests {
    private let uuid = BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!

    @Test("the direct reading of a plain iBeacon advert agrees with the full decoder on every one-byte change")
    func fastPathAgreesWithDecoder() {
        let original = IBeaconAdvertisingData(uuid: uuid, major: 513, minor: 4097, measuredPower: -59).bytes
        #expect(original.count == 30)
        var variants = [original]
        for index in original.indices {
            for value: UInt8 in [0x00, 0x01, 0x02, 0x15, 0x1A, 0x4C, 0xFF, original[index] &+ 1] where value != original[index] {
                var variant = original
                variant[index] = value
                variants.append(variant)
            }
        }
        variants.append(Array(original.dropLast()))
        variants.append(original + [0x00])
        for data in variants {
            let direct = data.withUnsafeBytes { ScannerPipeline.plainIBeacon($0) }
            let decoded = BeaconFrameDecoder.frames(inAdvertisingData: data).compactMap { frame -> (BeaconKey, Int8)? in
                guard case .iBeacon = frame, let key = frame.key, let power = frame.measuredPower else { return nil }
                return (key, power)
            }
            if let direct {
                #expect(decoded.count == 1 && decoded[0].0 == direct.key && decoded[0].1 == direct.measuredPower, "\(data)")
            }
        }
        let direct = original.withUnsafeBytes { ScannerPipeline.plainIBeacon($0) }
        #expect(direct?.key == .iBeacon(uuid: uuid, major: 513, minor: 4097))
    }

    @Test("an H4 event of a simulated phone becomes a batch at once, then waits for the window")
    func eventsBecomeBatches() {
        let node = NodeAddress(store: 1, department: 10, node: "a")!
        var pipeline = ScannerPipeline(aggregator: SightingAggregator(node: node, boot: "b"))
        let event = LEAdvertisingReportEvent.make(
            address: BluetoothAddress(value: 0xC0FF_EE00_0001), rssi: -61,
            data: IBeaconAdvertisingData(uuid: uuid, major: 1, minor: 1, measuredPower: -59).bytes)
        let start = Timestamp(milliseconds: 1_000_000)
        let first = pipeline.handle(h4Event: event, at: start)
        #expect(first?.sightings.first?.beacon == .iBeacon(uuid: uuid, major: 1, minor: 1))
        #expect(pipeline.handle(h4Event: event, at: start + .milliseconds(100)) == nil)
        #expect(pipeline.tick(at: start + .milliseconds(200)) == nil)
        #expect(pipeline.tick(at: start + .milliseconds(500))?.sightings.first?.count == 1)
        #expect(pipeline.counters.adverts == 2 && pipeline.counters.beaconFrames == 2)
    }

    @Test("an Eddystone-EID fob is a sighting of the id it advertises; an EID frame of the wrong length is dropped and counted")
    func eddystoneEIDFrames() {
        let node = NodeAddress(store: 1, department: 10, node: "a")!
        var pipeline = ScannerPipeline(aggregator: SightingAggregator(node: node, boot: "b"))
        let frame: [UInt8] = [0x30, 0xF4, 0xA9, 0xB7, 0x6A, 0x71, 0xC5, 0xF8, 0x92, 0x90]
        func advert(_ frame: [UInt8]) -> [UInt8] {
            LEAdvertisingReportEvent.make(
                address: BluetoothAddress(value: 0xC0FF_EE00_0002), rssi: -70,
                data: [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, UInt8(frame.count + 3), 0x16, 0xAA, 0xFE] + frame)
        }
        let start = Timestamp(milliseconds: 1_000_000)
        let batch = pipeline.handle(h4Event: advert(frame), at: start)
        #expect(batch?.sightings.map(\.beacon.description) == ["eddystone-eid:a9b76a71c5f89290"])
        #expect(pipeline.counters.malformedFrames == 0)
        _ = pipeline.handle(h4Event: advert(frame + [0x00]), at: start + .milliseconds(10))
        _ = pipeline.handle(h4Event: advert(Array(frame.dropLast())), at: start + .milliseconds(20))
        #expect(pipeline.counters.malformedFrames == 2 && pipeline.counters.beaconFrames == 1 && pipeline.counters.adverts == 3)
        #expect(pipeline.aggregator.trackedBeacons == 1)
    }
}
