import BeaconMeshTesting

/// A Prometheus text exposition read into its samples: `series → value`, the series written as exposed
/// (`beaconmesh_events_total{type="arrived"}`). Comment lines are skipped; a malformed line is an error.
struct PrometheusText {
    var samples: [String: Double] = [:]

    init(_ text: String) throws {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.isEmpty {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                throw TestSupportError("not a Prometheus sample line: \(line)")
            }
            samples[String(line[..<space])] = value
        }
    }

    subscript(series: String) -> Double? { samples[series] }
}
