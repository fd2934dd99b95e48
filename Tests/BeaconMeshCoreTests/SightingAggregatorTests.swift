import Testing

@testable import BeaconMeshCore

@Suite("Sighting aggregator")
struct SightingAggregatorTests {
    private let node = NodeAddress(store: 1, department: 10, node: "a")!
    private let uuid = BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!
    private let start = Timestamp(milliseconds: 1_000_000)

    private func key(_ minor: UInt16) -> BeaconKey { .iBeacon(uuid: uuid, major: 1, minor: minor) }

    @Test("a beacon new to the node goes out at once, on its own; known ones wait for the window")
    func newBeaconAtOnce() {
        var aggregator = SightingAggregator(node: node, boot: "b")
        #expect(aggregator.record(key(1), rssi: -60, measuredPower: -59, address: nil, at: start) == .newBeacon)
        #expect(aggregator.isNewBeaconFlushDue(at: start))
        let early = aggregator.flushNewBeacons(at: start)
        #expect(early?.sightings.map(\.beacon) == [key(1)])
        #expect(early?.seq == 1)
        #expect(aggregator.record(key(1), rssi: -61, measuredPower: -59, address: nil, at: start + .milliseconds(100)) == .updated)
        #expect(aggregator.record(key(2), rssi: -70, measuredPower: -59, address: nil, at: start + .milliseconds(150)) == .newBeacon)
        #expect(aggregator.isNewBeaconFlushDue(at: start + .milliseconds(150)))
        let second = aggregator.flushNewBeacons(at: start + .milliseconds(150))
        #expect(second?.sightings.map(\.beacon) == [key(2)], "only the newcomer; beacon 1 waits for its window")
        let window = aggregator.flush(at: start + .milliseconds(500))
        #expect(window?.sightings.map(\.beacon) == [key(1)])
        #expect(window?.seq == 3)
    }

    @Test("a crowd of new beacons shares early batches at most every 100 ms")
    func crowdIsCoalesced() {
        var aggregator = SightingAggregator(node: node, boot: "b")
        _ = aggregator.record(key(1), rssi: -60, measuredPower: nil, address: nil, at: start)
        _ = aggregator.flushNewBeacons(at: start)
        for minor in 2..<50 {
            _ = aggregator.record(key(UInt16(minor)), rssi: -60, measuredPower: nil, address: nil, at: start + .milliseconds(10))
        }
        #expect(!aggregator.isNewBeaconFlushDue(at: start + .milliseconds(50)))
        #expect(aggregator.isNewBeaconFlushDue(at: start + .milliseconds(100)))
        #expect(aggregator.flushNewBeacons(at: start + .milliseconds(100))?.sightings.count == 48)
    }

    @Test("the flush window is the configured one, also when the configuration changes after the start")
    func flushWindow() {
        var aggregator = SightingAggregator(node: node, boot: "b")
        _ = aggregator.record(key(1), rssi: -60, measuredPower: nil, address: nil, at: start)
        #expect(!aggregator.isFlushDue(at: start + .milliseconds(499)))
        #expect(aggregator.isFlushDue(at: start + .milliseconds(500)))
        aggregator.configuration.flushInterval = .milliseconds(2_000)
        #expect(!aggregator.isFlushDue(at: start + .milliseconds(1_999)))
        #expect(aggregator.isFlushDue(at: start + .milliseconds(2_000)))
        aggregator.configuration.flushInterval = .milliseconds(50)
        #expect(aggregator.isFlushDue(at: start + .milliseconds(50)))
    }

    @Test("count, smoothed RSSI and distance describe the window")
    func sightingFields() throws {
        var aggregator = SightingAggregator(node: node, boot: "b")
        for (index, rssi) in ([-59, -60, -58, -59] as [Int8]).enumerated() {
            _ = aggregator.record(key(1), rssi: rssi, measuredPower: -59, address: nil, at: start + .milliseconds(Int64(index * 100)))
        }
        let sighting = try #require(aggregator.flush(at: start + .milliseconds(500))?.sightings.first)
        #expect(sighting.count == 4)
        #expect(sighting.rssi == -59)
        #expect(sighting.txPower == -59)
        #expect(sighting.distance == 1)
        #expect(sighting.proximity == .near)
        #expect(sighting.lastSeen == start + .milliseconds(300))
    }

    @Test("a beacon silent for lostAfter is reported lost once and forgotten")
    func lost() {
        var configuration = SightingAggregator.Configuration()
        configuration.lostAfter = .seconds(2)
        var aggregator = SightingAggregator(node: node, boot: "b", configuration: configuration)
        _ = aggregator.record(key(1), rssi: -60, measuredPower: nil, address: nil, at: start)
        _ = aggregator.flush(at: start + .milliseconds(500))
        #expect(aggregator.flush(at: start + .seconds(1)) == nil, "nothing heard, nothing lost yet: no batch")
        #expect(aggregator.flush(at: start + .seconds(2))?.lost == [key(1)])
        #expect(aggregator.trackedBeacons == 0)
        #expect(aggregator.record(key(1), rssi: -60, measuredPower: nil, address: nil, at: start + .seconds(3)) == .newBeacon)
    }

    private func address(_ value: UInt64) -> BluetoothAddress { BluetoothAddress(value: 0xC0_0000_0000 | value) }

    /// Eddystone-TLM telemetry heard from `address`: whether it found its beacon (`#expect` cannot call a mutating
    /// method itself).
    private func telemetry(
        _ aggregator: inout SightingAggregator, from address: BluetoothAddress, battery: Int, temperature: Double? = nil
    ) -> Bool {
        aggregator.recordTelemetry(address: address, batteryMillivolts: battery, temperature: temperature)
    }

    @Test("Eddystone-TLM telemetry goes to the beacon heard from its address, and out in that beacon's sighting")
    func telemetryFollowsTheAddress() throws {
        var aggregator = SightingAggregator(node: node, boot: "b")
        _ = aggregator.record(key(1), rssi: -60, measuredPower: nil, address: address(1), at: start)
        _ = aggregator.record(key(2), rssi: -60, measuredPower: nil, address: address(2), at: start)
        #expect(telemetry(&aggregator, from: address(2), battery: 2_900, temperature: 21.5))
        #expect(!telemetry(&aggregator, from: address(3), battery: 2_800, temperature: 20))
        let sightings = try #require(aggregator.flush(at: start + .milliseconds(500))?.sightings)
        #expect(sightings.map(\.beacon) == [key(1), key(2)])
        #expect(sightings.map(\.battery) == [nil, 2_900])
        #expect(sightings.map(\.temperature) == [nil, 21.5])
    }

    @Test("telemetry looks through the tracked beacons once per address, not once per frame")
    func telemetryLooksOncePerAddress() {
        var aggregator = SightingAggregator(node: node, boot: "b")
        for minor in 0..<2_000 {
            _ = aggregator.record(key(UInt16(minor)), rssi: -60, measuredPower: nil, address: address(UInt64(minor)), at: start)
        }
        for _ in 0..<100 { #expect(telemetry(&aggregator, from: address(1_500), battery: 3_000)) }
        #expect(aggregator.tracksVisitedForTelemetry == 2_000)
        // An address no beacon is heard from (an Eddystone-URL beacon's TLM frames): looked for once.
        for _ in 0..<100 { #expect(!telemetry(&aggregator, from: address(9_999), battery: 3_000)) }
        #expect(aggregator.tracksVisitedForTelemetry == 4_000)
        // Until a beacon is heard from it.
        _ = aggregator.record(key(1), rssi: -60, measuredPower: nil, address: address(9_999), at: start)
        #expect(telemetry(&aggregator, from: address(9_999), battery: 3_000))
        #expect(aggregator.tracksVisitedForTelemetry == 6_000)
    }

    @Test("telemetry no longer goes to a beacon that moved to another address or was lost")
    func telemetryAfterMoveAndLoss() throws {
        var configuration = SightingAggregator.Configuration()
        configuration.lostAfter = .seconds(2)
        var aggregator = SightingAggregator(node: node, boot: "b", configuration: configuration)
        _ = aggregator.record(key(1), rssi: -60, measuredPower: nil, address: address(1), at: start)
        #expect(telemetry(&aggregator, from: address(1), battery: 2_000))
        _ = aggregator.record(key(1), rssi: -60, measuredPower: nil, address: address(7), at: start + .milliseconds(10))
        #expect(!telemetry(&aggregator, from: address(1), battery: 2_100))
        _ = aggregator.record(key(2), rssi: -60, measuredPower: nil, address: address(1), at: start + .milliseconds(20))
        #expect(telemetry(&aggregator, from: address(1), battery: 2_200))
        let sightings = try #require(aggregator.flush(at: start + .milliseconds(500))?.sightings)
        #expect(sightings.map(\.battery) == [2_000, 2_200], "beacon 1 keeps what it had; beacon 2 gets the new reading")
        _ = aggregator.record(key(1), rssi: -60, measuredPower: nil, address: address(7), at: start + .seconds(2))
        #expect(aggregator.flush(at: start + .milliseconds(2_500))?.lost == [key(2)])
        #expect(!telemetry(&aggregator, from: address(1), battery: 2_300))
        #expect(telemetry(&aggregator, from: address(7), battery: 2_400))
    }

    @Test("a tracked beacon's state fits in 56 bytes, and keeps what it was told: power, address, telemetry, first and last seen")
    func compactTrack() throws {
        #expect(MemoryLayout<SightingAggregator.Track>.stride <= 56)
        var configuration = SightingAggregator.Configuration()
        configuration.includeDetails = true
        var aggregator = SightingAggregator(node: node, boot: "b", configuration: configuration)
        _ = aggregator.record(key(1), rssi: -70, measuredPower: nil, address: nil, at: start)
        _ = aggregator.record(key(2), rssi: -70, measuredPower: -65, address: address(0xFF_FFFF), at: start)
        _ = aggregator.record(key(2), rssi: -60, measuredPower: nil, address: nil, at: start + .milliseconds(200))
        #expect(telemetry(&aggregator, from: address(0xFF_FFFF), battery: 70_000, temperature: -12.25))
        let sightings = try #require(aggregator.flush(at: start + .milliseconds(500))?.sightings)
        #expect(sightings.map(\.txPower) == [-59, -65], "the default power without one from the frame; the frame's kept")
        #expect(sightings.map(\.address) == [nil, address(0xFF_FFFF)])
        #expect(sightings.map(\.rssiMax) == [-70, -60])
        #expect(sightings.map(\.count) == [1, 2])
        #expect(sightings.map(\.firstSeen) == [start, start])
        #expect(sightings.map(\.lastSeen) == [start, start + .milliseconds(200)])
        #expect(sightings.map(\.battery) == [nil, 65_535], "a battery reading is at most 16 bits, as a TLM frame has it")
        #expect(sightings.map(\.temperature) == [nil, -12.25])
        _ = aggregator.record(key(2), rssi: -80, measuredPower: nil, address: nil, at: start + .milliseconds(600))
        let next = try #require(aggregator.flush(at: start + .milliseconds(1_000))?.sightings)
        #expect(next.map(\.count) == [1] && next.map(\.rssiMax) == [-80], "count and strongest reading start again per batch")
        #expect(next.map(\.battery) == [65_535] && next.map(\.temperature) == [-12.25], "telemetry stays with the beacon")
    }

    @Test("the UUID allowlist and the minimum RSSI drop adverts before they are tracked")
    func filters() {
        var configuration = SightingAggregator.Configuration()
        configuration.allowedUUIDs = [uuid]
        configuration.minimumRSSI = -90
        var aggregator = SightingAggregator(node: node, boot: "b", configuration: configuration)
        let stranger = BeaconKey.iBeacon(uuid: BeaconUUID(high: 1, low: 2), major: 1, minor: 1)
        #expect(aggregator.record(stranger, rssi: -60, measuredPower: nil, address: nil, at: start) == .ignored)
        #expect(aggregator.record(key(1), rssi: -95, measuredPower: nil, address: nil, at: start) == .ignored)
        #expect(aggregator.record(key(1), rssi: -80, measuredPower: nil, address: nil, at: start) == .newBeacon)
        #expect(aggregator.trackedBeacons == 1)
    }

    @Test("an early batch looks at the new beacons only, however many beacons are tracked")
    func earlyBatchCostFollowsNewcomers() {
        var aggregator = SightingAggregator(node: node, boot: "b")
        for minor in 0..<5_000 { _ = aggregator.record(key(UInt16(minor)), rssi: -60, measuredPower: nil, address: nil, at: start) }
        #expect(aggregator.flush(at: start + .milliseconds(500))?.sightings.count == 5_000)
        #expect(aggregator.tracksVisitedByLastBatch == 5_000)
        for minor in 5_000..<5_003 {
            _ = aggregator.record(key(UInt16(minor)), rssi: -60, measuredPower: nil, address: nil, at: start + .milliseconds(600))
        }
        let early = aggregator.flushNewBeacons(at: start + .milliseconds(600))
        #expect(early?.sightings.map(\.beacon) == [key(5_000), key(5_001), key(5_002)])
        #expect(aggregator.tracksVisitedByLastBatch == 3, "an early batch must not walk the 5,000 known beacons")
        #expect(aggregator.flushNewBeacons(at: start + .milliseconds(700)) == nil)
        #expect(aggregator.tracksVisitedByLastBatch == 0)
    }

    @Test(
        "early batches carry exactly the beacons never reported, in the order first heard, through windows and losses",
        arguments: [1, 2, 3] as [UInt64])
    func earlyBatchesMatchAModel(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var configuration = SightingAggregator.Configuration()
        configuration.lostAfter = .seconds(2)
        var aggregator = SightingAggregator(node: node, boot: "b", configuration: configuration)
        var unreported: [BeaconKey] = []  // first heard first
        var everReported: Set<BeaconKey> = []
        var lastHeard: [BeaconKey: Timestamp] = [:]
        var time = start
        for _ in 0..<4_000 {
            time = time + .milliseconds(Int64(random.next() % 7))
            let beacon = key(UInt16(random.next() % 300))
            let outcome = aggregator.record(beacon, rssi: -60, measuredPower: nil, address: nil, at: time)
            #expect(outcome == (lastHeard[beacon] == nil ? .newBeacon : .updated))
            if outcome == .newBeacon {
                unreported.append(beacon)
                everReported.remove(beacon)
            }
            lastHeard[beacon] = time
            if aggregator.isFlushDue(at: time) {
                let batch = aggregator.flush(at: time)
                let gone = Set(batch?.lost ?? [])
                for beacon in gone { lastHeard[beacon] = nil }
                let reported = Set(batch?.sightings.map(\.beacon) ?? [])
                #expect(Set(unreported).subtracting(gone).isSubset(of: reported), "a window's batch reports every newcomer")
                everReported.formUnion(reported)
                unreported = []
            } else if aggregator.isNewBeaconFlushDue(at: time) {
                let batch = aggregator.flushNewBeacons(at: time)
                #expect(batch?.sightings.map(\.beacon) == unreported, "an early batch: the unreported beacons, first heard first")
                #expect(batch?.lost == [])
                #expect(everReported.isDisjoint(with: unreported))
                everReported.formUnion(unreported)
                unreported = []
            }
        }
        #expect(everReported.count > 100, "the walk should have reported many beacons")
    }

    @Test("the RSSI filter shrugs off a single reflected burst")
    func outlierRejection() {
        var filter = RSSIFilter()
        for rssi in [-70, -71, -69, -70, -40, -70, -71, -70] as [Int8] { filter.add(rssi) }
        #expect(filter.smoothed.map { abs($0 - -70.1) < 0.2 } == true, "\(String(describing: filter.smoothed))")
    }
}
