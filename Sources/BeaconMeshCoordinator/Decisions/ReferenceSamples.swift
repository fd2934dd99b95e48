import BeaconMeshCore

/// The stores' references as survey samples: what the nodes hear of each fixed beacon, placed in a known department,
/// every `interval` (a pure value: time in, samples out). A reference is trusted truth about its department all day,
/// the way a surveyor's mark is for a walk; the coordinator's own decisions never are.
struct ReferenceSamples: Sendable {
    /// How often each reference is sampled: a day of one reference is 8,640 samples, where a walk marks one a second.
    static let interval: Duration = .seconds(10)

    /// Each reference's store and department, by beacon.
    let placed: [BeaconKey: (store: UInt16, department: UInt16)]
    private var grid = SamplingGrid(every: interval)

    init(stores: [CoordinatorConfiguration.Store]) {
        var placed: [BeaconKey: (store: UInt16, department: UInt16)] = [:]
        for store in stores {
            for reference in store.references { placed[reference.beacon] = (store.id, reference.department) }
        }
        self.placed = placed
    }

    /// The samples due at `now`: one per reference of a store in `deciding` that a node of it hears (`readings`).
    mutating func samples(
        at now: Timestamp, deciding: (UInt16) -> Bool, readings: (BeaconKey, UInt16) -> [SurveyNode: Double]?
    ) -> [SurveySample] {
        guard !placed.isEmpty else { return [] }
        guard grid.isDue(at: now) else { return [] }
        return placed.sorted { $0.key.description < $1.key.description }.compactMap { beacon, place in
            guard deciding(place.store), let heard = readings(beacon, place.store) else { return nil }
            return SurveySample(
                store: place.store, beacon: beacon, department: place.department, at: now, readings: heard, source: .reference)
        }
    }
}
