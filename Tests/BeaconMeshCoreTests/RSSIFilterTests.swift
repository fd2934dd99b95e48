import Testing

@testable import BeaconMeshCore

@Suite("RSSI filter")
struct RSSIFilterTests {
    /// The filter's rule written plainly, as the first version computed it: sort the last (at most 8) readings, take
    /// their median, the median of their deviations from the rounded median (each at most 127) × 1.4826, and average
    /// the readings within max(3 × that, 6) dB of the median; rounded to 0.1 dB.
    static func reference(_ readings: [Int8]) -> Double? {
        guard !readings.isEmpty else { return nil }
        func median(_ sorted: [Double]) -> Double {
            sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        let sorted = readings.map { Double($0) }.sorted()
        let middle = median(sorted)
        let deviations = sorted.map { min(abs($0 - middle.rounded()), 127) }.sorted()
        let limit = max(3 * median(deviations) * 1.4826, 6)
        let kept = sorted.filter { abs($0 - middle) <= limit }
        let mean = kept.isEmpty ? middle : kept.reduce(0, +) / Double(kept.count)
        return (mean * 10).rounded() / 10
    }

    @Test("the smoothed RSSI is the rule's value for any last 8 readings: random walks, bursts, the extremes, resets")
    func matchesTheRule() {
        var random = SplitMix64(seed: 14)
        for round in 0..<20_000 {
            var filter = RSSIFilter()
            var window: [Int8] = []
            let steps = Int(random.next() % 20)
            var level = Int(random.next() % 100) - 95
            for _ in 0..<steps {
                let reading: Int8
                switch random.next() % 10 {
                case 0: reading = .min
                case 1: reading = .max
                case 2, 3: reading = Int8(truncatingIfNeeded: Int(random.next() % 256) - 128)
                default:
                    level = max(-128, min(127, level + Int(random.next() % 7) - 3))
                    reading = Int8(level)
                }
                filter.add(reading)
                window.append(reading)
                if window.count > RSSIFilter.capacity { window.removeFirst() }
                if round % 7 == 0 && random.next() % 15 == 0 {
                    filter.reset()
                    window.removeAll()
                }
            }
            #expect(filter.smoothed == Self.reference(window), "readings \(window)")
            if filter.smoothed != Self.reference(window) { return }
        }
    }

    @Test("readings of one value give that value; none give nil")
    func plainCases() {
        var filter = RSSIFilter()
        #expect(filter.smoothed == nil)
        filter.add(-61)
        #expect(filter.smoothed == -61)
        for _ in 0..<10 { filter.add(-128) }
        #expect(filter.smoothed == -128)
        filter.add(127)
        #expect(filter.smoothed == -128, "one reading 255 dB away is an outlier")
        filter.reset()
        #expect(filter.smoothed == nil)
    }

    @Test("the sorting network orders any 8 lanes")
    func sortingNetwork() {
        var random = SplitMix64(seed: 8)
        for _ in 0..<5_000 {
            let lanes = (0..<8).map { _ in Int(random.next() % 2_000) - 1_000 }
            var sorted = RSSIFilter.Lanes(lanes[0], lanes[1], lanes[2], lanes[3], lanes[4], lanes[5], lanes[6], lanes[7])
            sorted.sort()
            #expect((0..<8).map { sorted[$0] } == lanes.sorted(), "\(lanes)")
            if (0..<8).map({ sorted[$0] }) != lanes.sorted() { return }
        }
    }
}

@Suite("RSSI filter over a span of time")
struct RSSIFilterWindowTests {
    @Test("keeping the latest readings drops the older ones in the order they came, and at least one")
    func keepLatest() {
        var filter = RSSIFilter()
        for rssi: Int8 in [-80, -90, -90, -90, -90, -90, -60, -61, -62] { filter.add(rssi) }
        #expect(filter.smoothed! < -85, "eight readings kept, five of them old")
        filter.keepLatest(3)
        #expect(filter.smoothed == -61)
        filter.add(-64)
        filter.keepLatest(2)
        #expect(filter.smoothed == -63, "the mean of -62 and -64")
        filter.keepLatest(0)
        #expect(filter.smoothed == -64, "at least the latest reading stays")
    }
}
