import BeaconMeshCore

/// The scoreboard of one or more recordings: BeaconMesh's decisions and, with `baselines`, the naive rules' on the
/// same packets, scored second by second.
public struct Scoreboard: Sendable {
    /// The deciders a scoreboard can compare.
    public enum Decider: String, Sendable, CaseIterable {
        case beaconMesh = "BeaconMesh"
        /// BeaconMesh deciding from a survey fit of the store (walked on other recordings).
        case surveyed = "BeaconMesh, surveyed"
        /// The strongest node of each 1-s window (Home Assistant's mqtt_room).
        case strongestNode = "strongest node"
        /// The same, a new department confirmed after 3 windows in a row.
        case confirmed3s = "strongest node, 3-s confirmation"
    }

    /// One recording's scores, by decider.
    public struct Row: Sendable {
        public var recording: String
        public var scores: [Decider: AccuracyScore]
        /// With a surveyed replay: how well the recording's readings fit the survey at its end.
        public var surveyFitness: SurveyFitness?
    }

    public private(set) var rows: [Row] = []
    /// With `tracing`: per recording and second, the truth, BeaconMesh's decision and each department's strongest
    /// batch RSSI in that second.
    public private(set) var traces: [String] = []
    public var tracing = false
    public let baselines: Bool

    public init(baselines: Bool) {
        self.baselines = baselines
    }

    /// Replays `recording` with `replay` and adds its row; with `surveyed`, a replay deciding from a survey fit,
    /// scores that too.
    public mutating func add(_ recording: LabelledRecording, replay: PresenceReplay, surveyed: PresenceReplay? = nil)
        throws(RecordingError)
    {
        let outcomes = try replay.run(recording)
        var scores: [Decider: AccuracyScore] = [:]
        var surveyFitness: SurveyFitness?
        if let surveyed {
            for (beacon, outcome) in try surveyed.run(recording) {
                surveyFitness = outcome.surveyFitness
                if tracing { traces.append(Self.trace(recording, beacon: beacon, outcome: outcome, decider: .surveyed)) }
                scores[.surveyed, default: AccuracyScore()] =
                    scores[.surveyed, default: AccuracyScore()]
                    + AccuracyScore.score(outcome.decisions, beacon: beacon, truth: recording.truth)
            }
        }
        let start = recording.truth.period?.from ?? 0
        for beacon in recording.truth.beacons {
            guard let outcome = outcomes[beacon] else { continue }
            if tracing { traces.append(Self.trace(recording, beacon: beacon, outcome: outcome, decider: .beaconMesh)) }
            scores[.beaconMesh, default: AccuracyScore()] =
                scores[.beaconMesh, default: AccuracyScore()]
                + AccuracyScore.score(outcome.decisions, beacon: beacon, truth: recording.truth)
            guard baselines else { continue }
            for (decider, confirmations) in [(Decider.strongestNode, 1), (.confirmed3s, 3)] {
                let timeline = NaiveRoomRules.strongestNode(outcome.adverts, from: start, confirmations: confirmations)
                scores[decider, default: AccuracyScore()] =
                    scores[decider, default: AccuracyScore()]
                    + AccuracyScore.score(timeline, beacon: beacon, truth: recording.truth)
            }
        }
        rows.append(Row(recording: recording.name, scores: scores, surveyFitness: surveyFitness))
    }

    /// The total of every row, by decider.
    public var total: [Decider: AccuracyScore] {
        var total: [Decider: AccuracyScore] = [:]
        for row in rows {
            for (decider, score) in row.scores { total[decider] = (total[decider] ?? AccuracyScore()) + score }
        }
        return total
    }

    /// The scoreboard as a table: per recording and in total, per decider, the shares of scored seconds right, wrong
    /// and unknown, department changes against the true ones, switch latency p50/p95.
    public var table: String {
        var lines = [
            "recording | decider | seconds | right | wrong | unknown | changes (true) | switch p50 / p95 | missed"
        ]
        func line(_ recording: String, _ decider: Decider, _ score: AccuracyScore) -> String {
            let p50 = score.switchLatency(quantile: 0.5).map { Self.seconds($0) } ?? "–"
            let p95 = score.switchLatency(quantile: 0.95).map { Self.seconds($0) } ?? "–"
            return
                "\(recording) | \(decider.rawValue) | \(score.scored) | \(Self.percent(score.rightShare)) | \(Self.percent(score.wrongShare)) | \(Self.percent(score.unknownShare)) | \(score.changes) (\(score.trueChanges)) | \(p50) / \(p95) | \(score.missedChanges)"
        }
        for row in rows {
            for decider in Decider.allCases { if let score = row.scores[decider] { lines.append(line(row.recording, decider, score)) } }
        }
        if rows.count > 1 {
            let total = self.total
            for decider in Decider.allCases { if let score = total[decider] { lines.append(line("total", decider, score)) } }
        }
        return lines.joined(separator: "\n")
    }

    /// The confusion matrices of `decider`: one per recording, then the total when there are several. Seconds by true
    /// department (rows) and decided one (columns, `?` for unknown).
    public func confusionTables(_ decider: Decider = .beaconMesh) -> String {
        var tables = rows.compactMap { row in row.scores[decider].map { "\(row.recording)\n" + Self.confusionTable($0) } }
        if rows.count > 1, let total = total[decider] { tables.append("total\n" + Self.confusionTable(total)) }
        return tables.joined(separator: "\n\n")
    }

    static func confusionTable(_ score: AccuracyScore) -> String {
        let departments = Set(score.confusion.keys).union(score.confusion.values.flatMap { $0.keys.compactMap { $0 } }).sorted()
        var lines = ["true \\ decided | " + (departments.map(String.init) + ["?"]).joined(separator: " | ")]
        for actual in departments {
            let row = score.confusion[actual] ?? [:]
            lines.append("\(actual) | " + (departments.map { String(row[$0] ?? 0) } + [String(row[nil] ?? 0)]).joined(separator: " | "))
        }
        return lines.joined(separator: "\n")
    }

    /// One line per second: time from the start, truth, decision, and `department:rssi` of each department's
    /// strongest batch sighting in that second.
    static func trace(_ recording: LabelledRecording, beacon: BeaconKey, outcome: PresenceReplay.Outcome, decider: Decider)
        -> String
    {
        guard let period = recording.truth.period else { return "" }
        var lines = ["\(recording.name) \(beacon), \(decider.rawValue): second truth decided | department:rssi…"]
        var second = period.from
        var index = 0
        while second < period.to {
            var strongest: [UInt16: Int8] = [:]
            while index < outcome.sightings.count && outcome.sightings[index].time < second + 1000 {
                let sighting = outcome.sightings[index]
                if sighting.time >= second { strongest[sighting.department] = max(strongest[sighting.department] ?? -128, sighting.rssi) }
                index += 1
            }
            let truth = recording.truth.department(of: beacon, at: second + 500).map(String.init) ?? "-"
            let decided = outcome.decisions.department(at: second + 500).map(String.init) ?? "?"
            let mark = truth == decided ? " " : "✗"
            let levels = strongest.keys.sorted().map { "\($0):\(strongest[$0]!)" }.joined(separator: " ")
            lines.append("\((second - period.from) / 1000) \(truth) \(decided) \(mark) | \(levels)")
            second += 1000
        }
        return lines.joined(separator: "\n")
    }

    static func percent(_ share: Double) -> String {
        let tenths = Int((share * 1000).rounded())
        return "\(tenths / 10).\(tenths % 10) %"
    }

    static func seconds(_ milliseconds: Int64) -> String {
        let tenths = (milliseconds + 50) / 100
        return "\(tenths / 10).\(tenths % 10) s"
    }
}
