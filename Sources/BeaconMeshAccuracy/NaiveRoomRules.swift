/// The naive rules the scoreboard compares against, on the raw adverts: the strongest node of each 1-s window decides
/// (Home Assistant's mqtt_room), and the same with a new department confirmed only after it won 3 windows in a row
/// (as happy-bubbles does). A window without any advert keeps the decision.
public enum NaiveRoomRules {
    /// One raw advert of the person: when, in which department, how loud.
    public struct Advert: Hashable, Sendable {
        public var time: Int64
        public var department: UInt16
        public var rssi: Int8

        public init(time: Int64, department: UInt16, rssi: Int8) {
            self.time = time
            self.department = department
            self.rssi = rssi
        }
    }

    /// The decisions of the strongest-node rule over windows of `window` milliseconds from `start`, a new
    /// department taken once it won `confirmations` windows in a row (1: at once). The decision of a window holds
    /// from that window's end, when it can be known (a rule that used a second's adverts for that same second would
    /// see the future).
    public static func strongestNode(
        _ adverts: [Advert], from start: Int64, window: Int64 = 1000, confirmations: Int = 1
    ) -> DecisionTimeline {
        var timeline = DecisionTimeline()
        var index = 0
        let sorted = adverts.sorted { $0.time < $1.time }
        guard let last = sorted.last?.time else { return timeline }
        var windowStart = start
        var candidate: UInt16?
        var wins = 0
        var decided: UInt16?
        while windowStart <= last {
            var best: Advert?
            while index < sorted.count && sorted[index].time < windowStart + window {
                if sorted[index].time >= windowStart, best.map({ sorted[index].rssi > $0.rssi }) ?? true { best = sorted[index] }
                index += 1
            }
            if let best {
                if best.department == candidate { wins += 1 } else { (candidate, wins) = (best.department, 1) }
                if wins >= confirmations { decided = candidate }
            }
            windowStart += window
            timeline.decide(decided, at: windowStart)
        }
        return timeline
    }
}
