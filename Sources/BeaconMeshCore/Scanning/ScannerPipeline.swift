/// Everything a scanner node does between the radio and the broker, without I/O: HCI event bytes in,
/// sighting batches out.
///
/// `handle(h4Event:at:)` parses the event's advertising reports, decodes their beacon frames and feeds the
/// aggregator; it returns a batch when a beacon new to this node was heard (the contract sends those at once).
/// `tick(at:)` returns the batch of a flush window that has passed. An iBeacon advert of a known beacon costs no
/// allocation on this path.
public struct ScannerPipeline: Sendable {
    public private(set) var aggregator: SightingAggregator
    /// Counters for the node's health report.
    public private(set) var counters = Counters()

    /// What the pipeline has seen.
    public struct Counters: Sendable, Equatable {
        /// Advertising reports read from HCI events.
        public var adverts: UInt64 = 0
        /// Beacon frames that identified a beacon.
        public var beaconFrames: UInt64 = 0
        /// Reports dropped because their event was malformed.
        public var malformedReports: UInt64 = 0
        /// Beacon frames of a known kind with the wrong length (an Eddystone-EID frame not of 12 bytes), dropped.
        public var malformedFrames: UInt64 = 0
        /// Batches made.
        public var batches: UInt64 = 0
        public init() {}
    }

    public init(aggregator: SightingAggregator) {
        self.aggregator = aggregator
    }

    /// Batches and filters as `configuration` says from now on (head office's node config, applied live); the beacons
    /// tracked so far are kept.
    public mutating func reconfigure(_ configuration: SightingAggregator.Configuration) {
        aggregator.configuration = configuration
    }

    /// Takes one H4 packet (`04 3E …`; other packets are ignored) heard at `time`.
    /// Returns a batch to send now when the packet introduced a beacon new to this node (at most one such early
    /// batch per `SightingAggregator.newBeaconSpacing`; later newcomers wait for `tick`).
    public mutating func handle(h4Event packet: UnsafeRawBufferPointer, at time: Timestamp) -> SightingBatch? {
        var sawNewBeacon = false
        let summary = HCIEventParser.forEachReport(inH4Packet: packet) { header, data in
            counters.adverts += 1
            if let iBeacon = ScannerPipeline.plainIBeacon(data) {
                counters.beaconFrames += 1
                let outcome = aggregator.record(
                    iBeacon.key, rssi: header.rssi, measuredPower: iBeacon.measuredPower,
                    address: header.address, at: time)
                if outcome == .newBeacon { sawNewBeacon = true }
                return
            }
            let malformed = BeaconFrameDecoder.forEachFrame(inAdvertisingData: data) { frame in
                if let key = frame.key {
                    counters.beaconFrames += 1
                    let outcome = aggregator.record(
                        key, rssi: header.rssi, measuredPower: frame.measuredPower,
                        address: header.address, at: time)
                    if outcome == .newBeacon { sawNewBeacon = true }
                } else if case .eddystoneTLM(_, let battery, let temperature, _, _) = frame {
                    _ = aggregator.recordTelemetry(address: header.address, batteryMillivolts: Int(battery), temperature: temperature)
                }
            }
            counters.malformedFrames += UInt64(malformed)
        }
        counters.malformedReports += UInt64(max(0, summary.droppedReports))
        guard sawNewBeacon, aggregator.isNewBeaconFlushDue(at: time) else { return nil }
        return counted(aggregator.flushNewBeacons(at: time))
    }

    /// The advert nearly every phone and fob sends — a flags structure and one iBeacon, exactly 30 bytes
    /// (`02 01 xx 1A FF 4C 00 02 15 uuid major minor power`) — read in place; `nil` for anything else, which the full
    /// decoder then handles. Gives exactly what `BeaconFrameDecoder` gives for such data (a test checks).
    static func plainIBeacon(_ data: UnsafeRawBufferPointer) -> (key: BeaconKey, measuredPower: Int8)? {
        guard data.count == 30, data[0] == 0x02, data[1] == 0x01, data[3] == 0x1A, data[4] == 0xFF, data[5] == 0x4C,
            data[6] == 0x00, data[7] == 0x02, data[8] == 0x15
        else { return nil }
        let major = UInt16(data[25]) << 8 | UInt16(data[26])
        let minor = UInt16(data[27]) << 8 | UInt16(data[28])
        return (.iBeacon(uuid: BeaconUUID(bytes: data, offset: 9), major: major, minor: minor), Int8(bitPattern: data[29]))
    }

    /// Convenience for callers holding an array.
    public mutating func handle(h4Event packet: [UInt8], at time: Timestamp) -> SightingBatch? {
        packet.withUnsafeBytes { handle(h4Event: $0, at: time) }
    }

    /// The batch due at `time`, if any: the flush window's, or an early one of new beacons.
    public mutating func tick(at time: Timestamp) -> SightingBatch? {
        if aggregator.isFlushDue(at: time) { return flush(at: time) }
        if aggregator.isNewBeaconFlushDue(at: time) { return counted(aggregator.flushNewBeacons(at: time)) }
        return nil
    }

    /// Makes a batch now whatever the window (used at shutdown).
    public mutating func flush(at time: Timestamp) -> SightingBatch? {
        counted(aggregator.flush(at: time))
    }

    private mutating func counted(_ batch: SightingBatch?) -> SightingBatch? {
        if batch != nil { counters.batches += 1 }
        return batch
    }
}
