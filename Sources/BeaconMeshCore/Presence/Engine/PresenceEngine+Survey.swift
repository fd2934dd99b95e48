extension PresenceEngine {
    /// How the decisions weigh a surveyed store's belief (`SurveyBelief`): each natural-log unit of odds between two
    /// departments counts as this many dB of lead, so the contract's `switchMargin` and `switchDwell` keep their
    /// meaning: with the default 4 dB, a department must be e^2.7 ≈ 14 times likelier than the current one for
    /// `switchDwell`, and the decisive rule's three times the margin is a belief e^8 times surer. On one moment's fit
    /// (issue 36) 3 dB per nat was measured best; on the belief (issue 51) 1.5: 3 switched on a second's burst
    /// (an open office with one radio per department: 29–38 changes for 17), 1 switched late (SAL car 76 % right).
    public static let surveyDecibelsPerNat = 1.5

    /// A member decided from a survey is decided at most this often on batches (milliseconds): weighing every
    /// department costs more than the uncalibrated rules, and scanners send a batch per node about every second, so
    /// a person heard by three nodes would otherwise be decided three times within a second. A decision is at most
    /// this much later than the batch that prompted it.
    public static let surveyDecisionInterval: Int64 = 250

    /// Decides `store` from `fit` from now on (`nil`: back to the uncalibrated rules). Members present stay where
    /// they are until the fit's evidence moves them.
    public mutating func setSurvey(_ fit: SurveyFit?, store: UInt16) {
        if let fit {
            surveyGenerations &+= 1
            if surveyGenerations == 0 { surveyGenerations = 1 }
            surveys[store] = SurveyState(fit: fit, generation: surveyGenerations)
        } else {
            surveys[store] = nil
        }
        for number in nodesByStore[store] ?? [] { nodes[Int(number)].surveyFeature = surveyFeature(of: nodes[Int(number)]) }
    }

    /// The fit `store` is decided from, if any.
    public func survey(of store: UInt16) -> SurveyFit? { surveys[store]?.fit }

    /// How well live readings fit each surveyed store's survey lately.
    public var surveyFitness: [UInt16: SurveyFitness] { surveys.mapValues(\.fitness) }

    /// How well live readings fit `store`'s survey lately, if it is surveyed.
    public func surveyFitness(of store: UInt16) -> SurveyFitness? { surveys[store]?.fitness }

    /// The feature index of a node in its store's fit, or -1 (no fit, a phone, a node the survey did not hear).
    func surveyFeature(of track: NodeTrack) -> Int32 {
        guard !track.isPhone, let fit = surveys[track.address.store]?.fit,
            let index = fit.index(of: SurveyNode(department: track.address.department, node: track.address.node))
        else { return -1 }
        return Int32(index)
    }

    /// What a surveyor's `beacon` sounds like to the nodes of `store` now: each node's smoothed RSSI as the decisions
    /// see it (fresh readings only, phones left out); `nil` when no node of the store hears it.
    public func surveyReadings(of beacon: BeaconKey, store: UInt16, at now: Timestamp) -> [SurveyNode: Double]? {
        var result: [SurveyNode: Double] = [:]
        func add(_ reading: Reading) {
            let track = nodes[Int(reading.node)]
            guard reading.store == store, !track.isPhone, now.milliseconds - reading.lastSeen < track.staleAfter else { return }
            result[SurveyNode(department: track.address.department, node: track.address.node)] = reading.rssi
        }
        if let position = owners.position(of: beacon) {
            members[Int(owners.values[position])].readings.forEach(add)
        } else if let readings = references[beacon] {
            readings.forEach(add)
        } else if let readings = guests.readings(of: beacon) {
            readings.forEach(add)
        }
        return result.isEmpty ? nil : result
    }

    /// For a person heard in a surveyed store: fills `buffer` with the readings the decisions weigh instead of the
    /// nodes' own — in that store, a reading per department that can matter, its "RSSI" the log-probability of the
    /// department (× `surveyDecibelsPerNat`), as fresh as the freshest node reading behind it; other stores' readings
    /// as they are. Returns the store, or `nil` (and leaves `buffer` alone) when no surveyed store hears the person
    /// through a node its survey knows: they are decided by the uncalibrated rules. One store is decided from its
    /// fit at a time (a person is in one store; the first surveyed store heard is taken).
    mutating func surveyedReadings(of person: inout Person, at now: Int64, into buffer: inout [Reading]) -> UInt16? {
        // Only a node of a surveyed store has a feature index: the first such reading names the store.
        var previousStore: UInt16?
        for reading in person.readings where reading.store != previousStore && nodes[Int(reading.node)].surveyFeature >= 0 {
            let store = reading.store
            previousStore = store
            var freshest: Reading?
            for reading in person.readings where reading.store == store && nodes[Int(reading.node)].surveyFeature >= 0 {
                if now - reading.lastSeen < nodes[Int(reading.node)].staleAfter, freshest.map({ reading.lastSeen > $0.lastSeen }) ?? true {
                    freshest = reading
                }
            }
            // Looked up by index and changed in place: `surveys[store]` would copy the state (and retain its arrays).
            guard let freshest, let survey = surveys.index(forKey: store) else { continue }
            buffer.removeAll(keepingCapacity: true)
            for reading in person.readings where reading.store != store { buffer.append(reading) }
            let current = person.visit.flatMap { $0.store == store && $0.leftAt == nil ? $0.department : nil }
            surveys.values[survey].weigh(
                person.readings, as: freshest, current: current, belief: &person.surveyBelief, into: &buffer, at: now, nodes: nodes)
            return store
        }
        return nil
    }

    /// After a decision on the surveyed readings `decided` of `store`, what it did to them carried over to the nodes'
    /// own `readings`: all dropped when the decision dropped them all (the member left), the store's dropped when its
    /// surveyed ones were (the visit ended). A decisive switch needs nothing carried: the belief it was taken on
    /// holds the new department already.
    static func carryOver(from decided: [Reading], to readings: inout [Reading], store: UInt16) {
        guard !decided.isEmpty else {
            readings.removeAll()
            return
        }
        if !decided.contains(where: { $0.store == store }) { readings.removeAll { $0.store == store } }
    }
}

extension PresenceEngine {
    /// The stores' references: fixed beacons placed in departments. Their readings are kept (for survey samples and
    /// the drift check: `surveyReadings(of:store:at:)`) but they are never members, guests or visits. A guest whose
    /// beacon becomes a reference is forgotten.
    public mutating func setReferences(_ beacons: Set<BeaconKey>) {
        references = references.filter { beacons.contains($0.key) }
        for beacon in beacons where references[beacon] == nil {
            references[beacon] = []
            guests.remove(beacon)
        }
    }
}
