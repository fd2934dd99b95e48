import BeaconMeshCaptures
import BeaconMeshCore

/// Replays a labelled recording through what BeaconMesh runs, in virtual time: each node's capture through a
/// `ScannerPipeline` (the scanner's parsing, RSSI filter and batching), the batches into one `PresenceEngine` (the
/// coordinator's decisions), with both ticked every 50 ms as the services tick them. Deterministic, and seconds
/// for a recording of an hour.
public struct PresenceReplay: Sendable {
    /// What the replay found for one person.
    public struct Outcome: Sendable {
        /// What the engine decided: a department while the member is placed, `nil` while unknown or not in the store.
        public var decisions: DecisionTimeline
        /// The raw adverts of the person's beacon, for the naive rules.
        public var adverts: [NaiveRoomRules.Advert]
        /// The person's sightings as the nodes' batches reported them (smoothed RSSI), for tracing decisions.
        public var sightings: [NaiveRoomRules.Advert]
        /// In a surveyed store: how well the readings fit its survey at the end of the replay.
        public var surveyFitness: SurveyFitness?
    }

    /// How often the scanner and coordinator services look at their flush windows and deadlines.
    public static let tickInterval: Int64 = 50

    public var rules: PresenceRules
    /// Per department, its `minRssi` and `neighbours` (the contract's knobs); departments not named get none.
    public var layouts: [UInt16: DepartmentLayout]

    /// Per store, the survey fit the engine decides it from (none: the uncalibrated rules).
    public var surveys: [UInt16: SurveyFit]
    /// Added to every RSSI the nodes report (dB): a phone or fob weaker (negative) or stronger than the recording's.
    public var rssiShift: Double

    public init(
        rules: PresenceRules = PresenceRules(), layouts: [UInt16: DepartmentLayout] = [:], surveys: [UInt16: SurveyFit] = [:],
        rssiShift: Double = 0
    ) {
        self.rules = rules
        self.layouts = layouts
        self.surveys = surveys
        self.rssiShift = rssiShift
    }

    /// Replays `recording`; returns per person (by beacon) the engine's decisions and the raw adverts.
    public func run(_ recording: LabelledRecording) throws(RecordingError) -> [BeaconKey: Outcome] {
        try replay(recording, sampling: false).outcomes
    }

    /// The survey samples a live survey of `recording`'s store would have kept had each person marked where the
    /// truth says they were: once a second while a person is in a department, what each node's smoothed RSSI of
    /// their beacon was (the decisions' own readings), labelled with that department.
    public func surveySamples(_ recording: LabelledRecording) throws(RecordingError) -> [SurveySample] {
        try replay(recording, sampling: true).samples
    }

    private func replay(_ recording: LabelledRecording, sampling: Bool) throws(RecordingError) -> (
        outcomes: [BeaconKey: Outcome], samples: [SurveySample]
    ) {
        let store = recording.store
        var packets: [(time: Int64, node: Int, bytes: [UInt8])] = []
        var pipelines: [ScannerPipeline] = []
        for (index, node) in recording.nodes.enumerated() {
            guard let address = NodeAddress(store: store, department: node.department, node: node.id) else {
                throw RecordingError(file: node.capture, line: nil, message: "node id '\(node.id)' is not valid")
            }
            pipelines.append(ScannerPipeline(aggregator: SightingAggregator(node: address, boot: "replay\(index)")))
            do {
                for record in try BTSnoopReader.readAll(path: node.capture) where record.packet.count > 3 {
                    packets.append((record.timestampMicroseconds / 1000, index, record.packet))
                }
            } catch {
                throw RecordingError(file: node.capture, line: nil, message: "\(error)")
            }
        }
        // Stable: packets of one time keep their node order, so the same recording always replays the same way.
        packets = packets.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        guard let first = packets.first?.time, let period = recording.truth.period else {
            return ([:], [])
        }

        let departments = recording.departments.map { layouts[$0] ?? DepartmentLayout(id: $0, rules: rules) }
        var engine = PresenceEngine(rules: rules, stores: [store: departments])
        for (surveyed, fit) in surveys { engine.setSurvey(fit, store: surveyed) }
        var samples: [SurveySample] = []
        let people = recording.truth.beacons
        let memberIDs = people.indices.map { "person-\($0 + 1)" }
        _ = engine.setDirectory(Dictionary(uniqueKeysWithValues: zip(people, memberIDs)))
        var decisions = [DecisionTimeline](repeating: DecisionTimeline(), count: people.count)
        var adverts = [[NaiveRoomRules.Advert]](repeating: [], count: people.count)
        let personIndex = Dictionary(uniqueKeysWithValues: people.enumerated().map { ($0.element, $0.offset) })

        func observe(at time: Int64) {
            for (index, member) in memberIDs.enumerated() {
                let visit = engine.visit(of: member)
                let placed = visit.flatMap { $0.leftAt == nil && !$0.departmentUnknown ? $0.department : nil }
                decisions[index].decide(placed, at: time)
            }
        }
        var sightings = [[NaiveRoomRules.Advert]](repeating: [], count: people.count)
        func deliver(_ batch: SightingBatch?, at time: Int64) {
            guard var batch else { return }
            if rssiShift != 0 { for index in batch.sightings.indices { batch.sightings[index].rssi += rssiShift } }
            for sighting in batch.sightings {
                if let person = personIndex[sighting.beacon] {
                    sightings[person].append(
                        .init(time: time, department: batch.node.department, rssi: Int8(clamping: Int(sighting.rssi.rounded()))))
                }
            }
            _ = engine.ingest(batch, at: Timestamp(milliseconds: time))
        }

        var nextTick = first
        var nextSample = first
        let end = max(period.to, packets.last!.time) + 1000
        var next = 0
        while nextTick <= end {
            while next < packets.count && packets[next].time < nextTick {
                let packet = packets[next]
                let department = recording.nodes[packet.node].department
                packet.bytes.withUnsafeBytes { bytes in
                    _ = HCIEventParser.forEachReport(inH4Packet: bytes) { header, data in
                        BeaconFrameDecoder.forEachFrame(inAdvertisingData: data) { frame in
                            if let key = frame.key, let person = personIndex[key] {
                                adverts[person].append(.init(time: packet.time, department: department, rssi: header.rssi))
                            }
                        }
                    }
                }
                deliver(pipelines[packet.node].handle(h4Event: packet.bytes, at: Timestamp(milliseconds: packet.time)), at: packet.time)
                observe(at: packet.time)
                next += 1
            }
            for index in pipelines.indices { deliver(pipelines[index].tick(at: Timestamp(milliseconds: nextTick)), at: nextTick) }
            _ = engine.tick(at: Timestamp(milliseconds: nextTick))
            observe(at: nextTick)
            if sampling && nextTick >= nextSample {
                nextSample += 1000
                for beacon in people {
                    guard let department = recording.truth.department(of: beacon, at: nextTick),
                        let readings = engine.surveyReadings(of: beacon, store: store, at: Timestamp(milliseconds: nextTick))
                    else { continue }
                    samples.append(
                        SurveySample(
                            store: store, beacon: beacon, department: department, at: Timestamp(milliseconds: nextTick),
                            readings: readings))
                }
            }
            nextTick += Self.tickInterval
        }
        var outcomes: [BeaconKey: Outcome] = [:]
        for (index, beacon) in people.enumerated() {
            outcomes[beacon] = Outcome(
                decisions: decisions[index], adverts: adverts[index], sightings: sightings[index],
                surveyFitness: engine.surveyFitness(of: store))
        }
        return (outcomes, samples)
    }
}
