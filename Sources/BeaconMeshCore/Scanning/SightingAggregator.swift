/// Collects one node's beacon adverts and turns them into the contract's sighting batches.
///
/// Per beacon it keeps a smoothed RSSI, counts, and first/last-seen times. The caller decides when to flush:
/// `isFlushDue(at:)` says when the flush window has passed, and `isNewBeaconFlushDue(at:)` when beacons this node
/// has never reported should go out at once (the contract's rule) in a small early batch of their own.
/// Recording an advert of a known beacon allocates nothing.
public struct SightingAggregator: Sendable {
    /// What shapes the batches.
    public struct Configuration: Sendable, Equatable {
        /// How long adverts are collected before a batch goes out.
        public var flushInterval: Duration = .milliseconds(500)
        /// A beacon not heard for this long is reported in `lost` and forgotten.
        public var lostAfter: Duration = .seconds(10)
        /// Adverts weaker than this are dropped on arrival (dBm).
        public var minimumRSSI: Int8 = -127
        /// iBeacon UUIDs to keep; empty keeps every iBeacon (other kinds are always kept).
        public var allowedUUIDs: Set<BeaconUUID> = []
        /// RSSI → metres → proximity.
        public var distanceModel = DistanceModel()
        /// Also report each beacon's advertiser address, strongest reading and first-seen time (the contract's
        /// optional fields). Off by default: it makes batches larger, and a phone's address is personal data.
        public var includeDetails = false

        public init() {}
    }

    /// What became of one advert.
    public enum RecordOutcome: Sendable, Equatable {
        /// Filtered out (too weak, or an iBeacon UUID not on the allowlist).
        case ignored
        /// A beacon this node already knew.
        case updated
        /// A beacon new to this node: flush now.
        case newBeacon
    }

    /// One tracked beacon, in 56 bytes: a store's thousands of beacons are looked up after every advert, and each
    /// batch builds a sighting of each. Absent values are kept as sentinels (the optionals took 96 bytes).
    struct Track: Sendable {
        var filter = RSSIFilter()
        var rssiMax: Int8 = .min
        private var framePower: Int8 = 0
        private var hasFramePower = false
        /// Heard, but not yet in any batch.
        var isNew = true
        /// Eddystone-TLM battery in mV; 0 when none was heard.
        private var batteryMillivolts: UInt16 = 0
        /// Adverts since the last batch.
        private(set) var count: UInt32 = 0
        /// Adverts in the window before (at most 255): the RSSI filter smooths over these two windows.
        private(set) var previousCount: UInt8 = 0
        /// The advertiser's 48-bit address; all ones when none was given.
        private var addressValue = UInt64.max
        var firstSeen: Timestamp
        var lastSeen: Timestamp
        /// Eddystone-TLM temperature in °C; NaN when none was heard.
        private var temperatureCelsius = Double.nan

        init(firstSeen: Timestamp, lastSeen: Timestamp) {
            self.firstSeen = firstSeen
            self.lastSeen = lastSeen
        }

        /// The power at 1 m the beacon's frames last carried.
        var measuredPower: Int8? { hasFramePower ? framePower : nil }

        /// The address the beacon was last heard from.
        var address: BluetoothAddress? { addressValue == .max ? nil : BluetoothAddress(value: addressValue) }

        /// The last battery reading (mV, at most 65,535 as a TLM frame carries it).
        var battery: Int? {
            get { batteryMillivolts == 0 ? nil : Int(batteryMillivolts) }
            set { batteryMillivolts = newValue.map { UInt16(clamping: $0) } ?? 0 }
        }

        /// The last temperature reading (°C; a NaN reading counts as none).
        var temperature: Double? {
            get { temperatureCelsius.isNaN ? nil : temperatureCelsius }
            set { temperatureCelsius = newValue ?? .nan }
        }

        /// Starts the next batch's count.
        mutating func resetCount() {
            previousCount = UInt8(clamping: count)
            count = 0
        }

        /// The smoothed RSSI over the adverts of this window and the one before: the filter keeps at most 8 readings,
        /// and a beacon heard twice a second would otherwise be smoothed over 4 seconds.
        mutating func windowedRSSI() -> Double? {
            filter.keepLatest(Int(count) + Int(previousCount))
            return filter.smoothed
        }

        mutating func update(rssi: Int8, measuredPower: Int8?, address: BluetoothAddress?, at time: Timestamp) {
            if time.milliseconds - lastSeen.milliseconds > 5000 { filter.reset() }
            filter.add(rssi)
            if count < .max { count += 1 }
            if count == 1 || rssi > rssiMax { rssiMax = rssi }
            if let measuredPower {
                framePower = measuredPower
                hasFramePower = true
            }
            if let address { addressValue = address.value }
            if time > lastSeen { lastSeen = time }
        }
    }

    public let node: NodeAddress
    public let boot: String
    public var configuration: Configuration {
        didSet { flushMilliseconds = configuration.flushInterval.wholeMilliseconds }
    }
    /// `configuration.flushInterval` in milliseconds, asked after every advert (a `Duration`'s are 128-bit sums).
    private var flushMilliseconds: Int64
    private var tracks = BeaconTable<Track>()
    private var lastSequence: UInt64 = 0
    private var lastFlush: Timestamp?
    private var lastNewFlush: Timestamp?
    /// Beacons heard but never reported yet.
    private var newBeacons = 0
    /// The table positions of those beacons, ascending (the table's order), so that an early batch looks at them
    /// alone and costs nothing per beacon already reported. Rebuilt after a window's batch, which may move positions.
    private var newPositions: [Int32] = []
    /// How many tracked beacons the last batch looked at (tests check that early batches look at new ones only).
    private(set) var tracksVisitedByLastBatch = 0
    /// Where telemetry heard from an address went: the beacon found heard from it, used again while it is still
    /// tracked with that address, so that a beacon's every TLM frame does not look through all tracked beacons.
    private var telemetryTargets: [BluetoothAddress: BeaconKey] = [:]
    /// Addresses whose telemetry found no beacon heard from them (an Eddystone-URL beacon's TLM frames, say): not
    /// looked for again until a beacon is heard from one of them.
    private var addressesWithoutBeacon: Set<BluetoothAddress> = []
    /// How many tracked beacons telemetry has looked through, in all (tests check that it does so once per address).
    private(set) var tracksVisitedForTelemetry = 0

    public init(node: NodeAddress, boot: String, configuration: Configuration = Configuration()) {
        self.node = node
        self.boot = boot
        self.configuration = configuration
        self.flushMilliseconds = configuration.flushInterval.wholeMilliseconds
    }

    /// How many beacons this node currently tracks.
    public var trackedBeacons: Int { tracks.count }

    /// The number of the last batch made (0 before the first).
    public var sequence: UInt64 { lastSequence }

    /// Takes one advert of `beacon` heard at `time`.
    public mutating func record(
        _ beacon: BeaconKey, rssi: Int8, measuredPower: Int8?, address: BluetoothAddress?, at time: Timestamp
    ) -> RecordOutcome {
        guard rssi >= configuration.minimumRSSI, rssi < 20 else { return .ignored }
        if lastFlush == nil { lastFlush = time }  // the first window starts with the first advert heard
        if !configuration.allowedUUIDs.isEmpty, case .iBeacon(let uuid, _, _) = beacon,
            !configuration.allowedUUIDs.contains(uuid)
        {
            return .ignored
        }
        if let position = tracks.position(of: beacon) {
            if !addressesWithoutBeacon.isEmpty, let address, tracks.values[position].address != address {
                addressesWithoutBeacon.remove(address)
            }
            tracks.values[position].update(rssi: rssi, measuredPower: measuredPower, address: address, at: time)
            return .updated
        }
        if !addressesWithoutBeacon.isEmpty, let address { addressesWithoutBeacon.remove(address) }
        var track = Track(firstSeen: time, lastSeen: time)
        track.update(rssi: rssi, measuredPower: measuredPower, address: address, at: time)
        newPositions.append(Int32(tracks.insert(beacon, track)))
        newBeacons += 1
        return .newBeacon
    }

    /// Attaches Eddystone-TLM telemetry to a beacon heard from `address` (the one its earlier telemetry went to, while
    /// that one is still heard from it); `false` if no tracked beacon was heard from `address`.
    public mutating func recordTelemetry(address: BluetoothAddress, batteryMillivolts: Int?, temperature: Double?) -> Bool {
        guard let index = telemetryTarget(of: address) else { return false }
        if let batteryMillivolts, batteryMillivolts > 0 { tracks.values[index].battery = batteryMillivolts }
        if let temperature { tracks.values[index].temperature = temperature }
        return true
    }

    /// The table position of the beacon telemetry from `address` goes to: the remembered one if it is still tracked
    /// with that address, else the first tracked beacon heard from it (remembered), else `nil` (remembered too).
    private mutating func telemetryTarget(of address: BluetoothAddress) -> Int? {
        if let key = telemetryTargets[address], let position = tracks.position(of: key), tracks.values[position].address == address {
            return position
        }
        if addressesWithoutBeacon.contains(address) { return nil }
        // Entries for addresses and beacons long gone: forget them all now and then, to stay within the table's size.
        if telemetryTargets.count + addressesWithoutBeacon.count > 2 * tracks.count + 1_024 {
            telemetryTargets.removeAll()
            addressesWithoutBeacon.removeAll()
        }
        tracksVisitedForTelemetry += tracks.count
        guard let position = tracks.values.firstIndex(where: { $0.address == address }) else {
            telemetryTargets[address] = nil
            addressesWithoutBeacon.insert(address)
            return nil
        }
        telemetryTargets[address] = tracks.keys[position]
        return position
    }

    /// Whether the flush window that started with the previous batch has passed at `time`.
    public func isFlushDue(at time: Timestamp) -> Bool {
        guard let lastFlush else { return !tracks.isEmpty }
        return time.milliseconds - lastFlush.milliseconds >= flushMilliseconds
    }

    /// Whether beacons new to this node wait to be sent, and the previous early batch is at least
    /// `newBeaconSpacing` old: new beacons go out at once, but a crowd arriving together shares one batch.
    public func isNewBeaconFlushDue(at time: Timestamp) -> Bool {
        guard newBeacons > 0 else { return false }
        guard let lastNewFlush else { return true }
        return time.milliseconds - lastNewFlush.milliseconds >= SightingAggregator.newBeaconSpacingMilliseconds
    }

    /// The shortest time between two early batches of new beacons.
    public static let newBeaconSpacing: Duration = .milliseconds(newBeaconSpacingMilliseconds)
    private static let newBeaconSpacingMilliseconds: Int64 = 100

    /// Makes the next batch at `time`: every beacon heard since the previous batch, and the ones lost since.
    /// Returns `nil` (and uses no sequence number) when there is nothing to say.
    public mutating func flush(at time: Timestamp) -> SightingBatch? {
        lastFlush = time
        return makeBatch(at: time, onlyNew: false)
    }

    /// Makes an early batch at `time` of the beacons this node has never reported before; the others wait for
    /// their window.
    public mutating func flushNewBeacons(at time: Timestamp) -> SightingBatch? {
        lastNewFlush = time
        return makeBatch(at: time, onlyNew: true)
    }

    private mutating func makeBatch(at time: Timestamp, onlyNew: Bool) -> SightingBatch? {
        var sightings: [Sighting] = []
        sightings.reserveCapacity(onlyNew ? newBeacons : tracks.count)
        var lost: [BeaconKey] = []
        let now = time.milliseconds
        let lostAfter = configuration.lostAfter.wholeMilliseconds
        let model = configuration.distanceModel
        let details = configuration.includeDetails
        if onlyNew {
            // Only the new beacons' positions, in table order; any not reportable yet keep their place in the list.
            var kept = 0
            for slot in newPositions.indices {
                let index = Int(newPositions[slot])
                if !report(index, model: model, details: details, into: &sightings) {
                    newPositions[kept] = newPositions[slot]
                    kept += 1
                }
            }
            tracksVisitedByLastBatch = newPositions.count
            newPositions.removeLast(newPositions.count - kept)
        } else {
            for index in 0..<tracks.count {
                if now - tracks.values[index].lastSeen.milliseconds >= lostAfter {
                    lost.append(tracks.keys[index])
                    continue
                }
                _ = report(index, model: model, details: details, into: &sightings)
            }
            tracksVisitedByLastBatch = tracks.count
            for beacon in lost {
                if tracks.remove(beacon)?.isNew == true { newBeacons -= 1 }
            }
            // Removals move positions: list the beacons still unreported afresh (normally none are left).
            newPositions.removeAll(keepingCapacity: true)
            if newBeacons > 0 {
                for index in 0..<tracks.count where tracks.values[index].isNew { newPositions.append(Int32(index)) }
            }
        }
        guard !sightings.isEmpty || !lost.isEmpty else { return nil }
        // Sightings keep the tracking table's order: sorting thousands of them twice a second costs more than the
        // whole radio path, and no receiver relies on an order.
        lost.sort()
        lastSequence += 1
        return SightingBatch(node: node, boot: boot, seq: lastSequence, sentAt: time, sightings: sightings, lost: lost)
    }

    /// Appends the sighting of the beacon at `index` since its last batch and starts its next count; `false` (and
    /// nothing appended) if it has no reading to report.
    private mutating func report(
        _ index: Int, model: DistanceModel, details: Bool, into sightings: inout [Sighting]
    ) -> Bool {
        guard tracks.values[index].count > 0, let rssi = tracks.values[index].windowedRSSI() else { return false }
        let track = tracks.values[index]
        let power = model.measuredPower(fromFrame: track.measuredPower.map(Int.init))
        let distance = model.distance(rssi: rssi, measuredPower: power).map { ($0 * 100).rounded() / 100 }
        sightings.append(
            Sighting(
                beacon: tracks.keys[index], rssi: rssi, count: Int(track.count), txPower: power, distance: distance,
                proximity: model.proximity(distance: distance), lastSeen: track.lastSeen,
                address: details ? track.address : nil, rssiMax: details ? Int(track.rssiMax) : nil,
                firstSeen: details ? track.firstSeen : nil, battery: track.battery, temperature: track.temperature))
        tracks.values[index].resetCount()
        if track.isNew {
            tracks.values[index].isNew = false
            newBeacons -= 1
        }
        return true
    }
}
