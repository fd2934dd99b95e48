import BeaconMeshCore

/// Survey samples for the registry's tests: walks through the departments 10, 20 and 30 of a store, each with one
/// node (`10/a`, …) that hears the walker loudest in its own department.
enum SurveySamples {
    static let uuid = "0cf052c2-97ca-407c-84f8-b62aac4e9020"

    /// The surveyor's beacon `minor`.
    static func beacon(_ minor: Int) -> BeaconKey { BeaconKey("ibeacon:\(uuid):9:\(minor)")! }

    /// `seconds` samples of `beacon` in `department` of `store`, one a second from `start` (epoch ms); readings in
    /// whole dB, as the registry keeps them to a tenth.
    static func walk(store: UInt16 = 1, beacon: BeaconKey, department: UInt16, from start: Int64, seconds: Int) -> [SurveySample] {
        (0..<seconds).map { second in
            var readings: [SurveyNode: Double] = [:]
            for node: UInt16 in [10, 20, 30] {
                readings[SurveyNode(department: node, node: "a")] =
                    node == department ? -60 - Double(second % 5) : -84 + Double((second + Int(node)) % 4)
            }
            return SurveySample(
                store: store, beacon: beacon, department: department, at: Timestamp(milliseconds: start + Int64(second) * 1000),
                readings: readings)
        }
    }

    /// Each of 10, 20 and 30 walked twice (two stretches, a minute apart) for `seconds` each, by beacon 1.
    static func store(_ store: UInt16 = 1, seconds: Int = 30) -> [SurveySample] {
        [UInt16(10), 20, 30].enumerated().flatMap { index, department in
            let start = 1_000_000 + Int64(index) * 200_000
            return walk(store: store, beacon: beacon(1), department: department, from: start, seconds: seconds)
                + walk(store: store, beacon: beacon(1), department: department, from: start + 100_000, seconds: seconds)
        }
    }

    /// The fit of `samples` of `store`, learnt at `time`.
    static func fit(_ samples: [SurveySample], store: UInt16 = 1, at time: Int64 = 5_000_000) throws -> SurveyFit {
        try SurveyTraining(samples: samples, store: store).fit(at: Timestamp(milliseconds: time)).fit
    }
}
