/// A member's phone walking a store's route, as its app would range the department beacons: pure, a function of the
/// time since the walk began and a random source.
///
/// The phone stays `dwell` in each department of `route`, in order. Where it stands it ranges that department's
/// beacon strongly (about −60 dBm, ±`jitter`: `near`, or `immediate` on a strong reading) and the route's
/// neighbouring departments faintly (about −82 dBm: `far`), as CoreLocation reports them — nearest first. After the
/// route it has left the store and ranges nothing; with `away` set it comes back after that long and walks again.
public struct PhoneWalk: Sendable, Equatable {
    /// The departments the phone walks through, in order (a department may come back).
    public var route: [UInt16]
    /// How long the phone stays in each department.
    public var dwell: Duration
    /// How long the phone stays out of the store between walks; `nil`: it walks once and stays out.
    public var away: Duration?
    /// Up to this many dB are added to or taken from each reading.
    public var jitter: Double
    /// What a reading means in metres and proximity (the phone's own estimate, CoreLocation's `accuracy`).
    public var distance: DistanceModel

    /// The RSSI around which the phone hears the department it stands in (dBm).
    public static let hereRSSI = -60.0
    /// The RSSI around which the phone hears a neighbouring department of the route (dBm).
    public static let neighbourRSSI = -82.0

    public init(route: [UInt16], dwell: Duration = .seconds(20), away: Duration? = nil, jitter: Double = 4) {
        self.route = route
        self.dwell = dwell
        self.away = away
        self.jitter = jitter
        self.distance = DistanceModel()
    }

    /// The position in `route` of the department the phone stands in `elapsed` after the walk began; `nil` when it
    /// is out of the store (before the start, after the route, or away between two walks).
    public func step(at elapsed: Duration) -> Int? {
        let milliseconds = elapsed.wholeMilliseconds
        let dwellMilliseconds = max(dwell.wholeMilliseconds, 1)
        guard !route.isEmpty, milliseconds >= 0 else { return nil }
        var position = milliseconds
        if let away {
            let cycle = dwellMilliseconds * Int64(route.count) + max(away.wholeMilliseconds, 0)
            position = milliseconds % cycle
        }
        let step = position / dwellMilliseconds
        return step < Int64(route.count) ? Int(step) : nil
    }

    /// Whether the walk is over for good: no `away`, and the route is behind the phone.
    public func isFinished(at elapsed: Duration) -> Bool {
        away == nil && elapsed.wholeMilliseconds >= max(dwell.wholeMilliseconds, 1) * Int64(route.count)
    }

    /// The department beacons the phone ranges `elapsed` after the walk began, nearest first; empty out of the store.
    public func beacons(at elapsed: Duration, using random: inout some RandomNumberGenerator) -> [RangingReport.RangedBeacon] {
        guard let step = step(at: elapsed) else { return [] }
        let here = route[step]
        var beacons = [ranged(here, around: Self.hereRSSI, using: &random)]
        var neighbours: [UInt16] = []
        for index in [step - 1, step + 1] where route.indices.contains(index) {
            let department = route[index]
            if department != here && !neighbours.contains(department) { neighbours.append(department) }
        }
        for department in neighbours { beacons.append(ranged(department, around: Self.neighbourRSSI, using: &random)) }
        return beacons.sorted { ($0.accuracy ?? .infinity) < ($1.accuracy ?? .infinity) }
    }

    private func ranged(_ department: UInt16, around rssi: Double, using random: inout some RandomNumberGenerator)
        -> RangingReport.RangedBeacon
    {
        let spread = max(jitter, 0)
        let reading = (rssi + Double.random(in: -spread...spread, using: &random)).rounded()
        let metres = distance.distance(rssi: reading, measuredPower: distance.defaultMeasuredPower)
        let accuracy = metres.map { ($0 * 100).rounded() / 100 }
        return RangingReport.RangedBeacon(
            department: department, proximity: distance.proximity(distance: metres),
            rssi: reading, accuracy: accuracy)
    }
}
