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
    public var smoothed: Double? {
        guard stored > 0 else { return nil }
        let count = Int(stored)
        var sorted = samples
        RSSIFilter.insertionSort(&sorted, count: count)
        let median = RSSIFilter.median(of: sorted, count: count)

        var deviations = SIMD8<Int8>(repeating: 0)
        for index in 0..<count {
            deviations[index] = Int8(clamping: abs(Int(sorted[index]) - Int(median.rounded())))
        }
        RSSIFilter.insertionSort(&deviations, count: count)
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

    private static func insertionSort(_ values: inout SIMD8<Int8>, count: Int) {
        guard count > 1 else { return }
        for index in 1..<count {
            let value = values[index]
            var position = index
            while position > 0 && values[position - 1] > value {
                values[position] = values[position - 1]
                position -= 1
            }
            values[position] = value
        }
    }

    private static func median(of sorted: SIMD8<Int8>, count: Int) -> Double {
        if count % 2 == 1 { return Double(sorted[count / 2]) }
        return (Double(sorted[count / 2 - 1]) + Double(sorted[count / 2])) / 2
    }
}
