/// Smooths one beacon's RSSI as heard by one node: the mean of the last 8 readings after rejecting outliers
/// that stray from their median by more than 3 scaled median absolute deviations (at least 6 dB).
///
/// A median-based filter, as mature presence systems use: one reflected burst or a body blocking the phone for a
/// moment moves the result little, while a real move (a steady shift of many dB) comes through within a few
/// readings. Fixed size, no allocation: adding a reading costs a few instructions.
public struct RSSIFilter: Sendable, Equatable {
    /// How many recent readings the filter keeps.
    public static let capacity = 8

    private var samples = SIMD8<Int8>(repeating: 0)
    private var stored: UInt8 = 0
    private var next: UInt8 = 0

    public init() {}

    /// Whether no reading has been added since the start or the last `reset()`.
    public var isEmpty: Bool { stored == 0 }

    /// Adds one raw reading (dBm).
    public mutating func add(_ rssi: Int8) {
        samples[Int(next)] = rssi
        next = (next + 1) & UInt8(RSSIFilter.capacity - 1)
        if stored < RSSIFilter.capacity { stored += 1 }
    }

    /// Forgets all readings (a beacon heard again after a long silence starts afresh).
    public mutating func reset() {
        stored = 0
        next = 0
    }

    /// The smoothed RSSI rounded to 0.1 dB, or `nil` without readings.
    ///
    /// A scanner asks this of every beacon in every batch (thousands, twice a second), so both sorts are a fixed
    /// network of 19 compare-exchanges on registers, without branches; the readings past `count` are padded with a
    /// value above any reading so that they sort last.
    public var smoothed: Double? {
        guard stored > 0 else { return nil }
        let count = Int(stored)
        // Lane by lane with constant indices: Swift's SIMD masks (`.<`, `replacing(with:where:)`) compile to a
        // store per lane and a reload of the whole vector here, which stalls.
        @inline(__always) func reading(_ lane: Int) -> Int16 { lane < count ? Int16(samples[lane]) : RSSIFilter.padding }
        let sorted = RSSIFilter.sortedLanes(
            SIMD8(reading(0), reading(1), reading(2), reading(3), reading(4), reading(5), reading(6), reading(7)))
        let median = RSSIFilter.median(of: sorted, count: count)

        // Deviations from the rounded median, at most 127 as an Int8 holds them (a reading is -128…127).
        let center = Int16(median.rounded())
        @inline(__always) func deviation(_ lane: Int) -> Int16 {
            lane < count ? min(abs(sorted[lane] - center), 127) : RSSIFilter.padding
        }
        let deviations = RSSIFilter.sortedLanes(
            SIMD8(deviation(0), deviation(1), deviation(2), deviation(3), deviation(4), deviation(5), deviation(6), deviation(7)))
        let spread = RSSIFilter.median(of: deviations, count: count) * 1.4826
        let limit = max(3 * spread, 6)

        var sum = 0.0
        var kept = 0
        for index in 0..<count where abs(Double(sorted[index]) - median) <= limit {
            sum += Double(sorted[index])
            kept += 1
        }
        let mean = kept > 0 ? sum / Double(kept) : median
        return (mean * 10).rounded() / 10
    }

    /// Above any reading or deviation: fills the lanes past `count` so that they sort last.
    private static let padding: Int16 = 1000

    /// The 8 lanes in ascending order (Batcher's optimal 19-comparator network).
    @inline(__always)
    static func sortedLanes(_ lanes: SIMD8<Int16>) -> SIMD8<Int16> {
        var (a0, a1, a2, a3, a4, a5, a6, a7) = (lanes[0], lanes[1], lanes[2], lanes[3], lanes[4], lanes[5], lanes[6], lanes[7])
        @inline(__always) func order(_ low: inout Int16, _ high: inout Int16) {
            let smaller = min(low, high)
            high = max(low, high)
            low = smaller
        }
        order(&a0, &a2)
        order(&a1, &a3)
        order(&a4, &a6)
        order(&a5, &a7)
        order(&a0, &a4)
        order(&a1, &a5)
        order(&a2, &a6)
        order(&a3, &a7)
        order(&a0, &a1)
        order(&a2, &a3)
        order(&a4, &a5)
        order(&a6, &a7)
        order(&a2, &a4)
        order(&a3, &a5)
        order(&a1, &a4)
        order(&a3, &a6)
        order(&a1, &a2)
        order(&a3, &a4)
        order(&a5, &a6)
        return SIMD8(a0, a1, a2, a3, a4, a5, a6, a7)
    }

    private static func median(of sorted: SIMD8<Int16>, count: Int) -> Double {
        if count % 2 == 1 { return Double(sorted[count / 2]) }
        return (Double(sorted[count / 2 - 1]) + Double(sorted[count / 2])) / 2
    }
}
