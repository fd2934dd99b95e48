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

    /// Keeps only the latest `count` readings (at least one, when there are any): the filter then smooths over a span
    /// of time rather than a number of readings, so that a beacon heard twice a second does not lag by four seconds.
    public mutating func keepLatest(_ count: Int) {
        let kept = UInt8(clamping: max(1, min(count, Int(stored))))
        guard kept < stored else { return }
        var compacted = SIMD8<Int8>(repeating: 0)
        let capacity = UInt8(RSSIFilter.capacity)
        for index in 0..<kept {
            // The latest reading is just before `next`; the kept ones go to lanes 0… in the order they came.
            let lane = (next &+ capacity &- kept &+ index) & (capacity &- 1)
            compacted[Int(index)] = samples[Int(lane)]
        }
        samples = compacted
        stored = kept
        next = kept & (capacity &- 1)
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
    /// value above any reading so that they sort last. Integer work is done with wrapping operators: no value here
    /// comes near the limits (readings are -128…127).
    public var smoothed: Double? {
        guard stored > 0 else { return nil }
        let count = Int(stored)
        let padding = RSSIFilter.padding
        let raw = samples
        var sorted = Lanes(
            0 < count ? Int(raw[0]) : padding, 1 < count ? Int(raw[1]) : padding, 2 < count ? Int(raw[2]) : padding,
            3 < count ? Int(raw[3]) : padding, 4 < count ? Int(raw[4]) : padding, 5 < count ? Int(raw[5]) : padding,
            6 < count ? Int(raw[6]) : padding, 7 < count ? Int(raw[7]) : padding)
        sorted.sort()
        // The middle one, or the mean of the middle two: exact in a Double either way.
        let median = Double(sorted[(count &- 1) / 2] &+ sorted[count / 2]) / 2

        // Deviations from the rounded median, at most 127 as an Int8 holds them.
        let center = Int(median.rounded())
        @inline(__always) func deviation(_ lane: Int, _ value: Int) -> Int {
            lane < count ? min(abs(value &- center), 127) : padding
        }
        var deviations = Lanes(
            deviation(0, sorted.a0), deviation(1, sorted.a1), deviation(2, sorted.a2), deviation(3, sorted.a3),
            deviation(4, sorted.a4), deviation(5, sorted.a5), deviation(6, sorted.a6), deviation(7, sorted.a7))
        deviations.sort()
        let spread = Double(deviations[(count &- 1) / 2] &+ deviations[count / 2]) / 2 * 1.4826
        let limit = max(3 * spread, 6)

        var sum = 0.0
        var kept = 0
        for lane in 0..<count {
            let reading = Double(sorted[lane])
            if abs(reading - median) <= limit {
                sum += reading
                kept &+= 1
            }
        }
        let mean = kept > 0 ? sum / Double(kept) : median
        return (mean * 10).rounded() / 10
    }

    /// Above any reading or deviation: fills the lanes past `count` so that they sort last.
    private static let padding = 1_000

    /// Eight values in registers, sorted by a fixed network.
    struct Lanes {
        var a0, a1, a2, a3, a4, a5, a6, a7: Int

        init(_ a0: Int, _ a1: Int, _ a2: Int, _ a3: Int, _ a4: Int, _ a5: Int, _ a6: Int, _ a7: Int) {
            (self.a0, self.a1, self.a2, self.a3, self.a4, self.a5, self.a6, self.a7) = (a0, a1, a2, a3, a4, a5, a6, a7)
        }

        /// The value in `lane` (0…7).
        @inline(__always)
        subscript(lane: Int) -> Int {
            withUnsafeBytes(of: self) { $0.load(fromByteOffset: (lane & 7) &* MemoryLayout<Int>.stride, as: Int.self) }
        }

        /// Puts the lanes in ascending order (Batcher's optimal 19-comparator network).
        @inline(__always)
        mutating func sort() {
            @inline(__always) func order(_ low: inout Int, _ high: inout Int) {
                let smaller = Swift.min(low, high)
                high = Swift.max(low, high)
                low = smaller
            }
            var (a0, a1, a2, a3, a4, a5, a6, a7) = (self.a0, self.a1, self.a2, self.a3, self.a4, self.a5, self.a6, self.a7)
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
            (self.a0, self.a1, self.a2, self.a3, self.a4, self.a5, self.a6, self.a7) = (a0, a1, a2, a3, a4, a5, a6, a7)
        }
    }
}
