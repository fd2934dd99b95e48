import BeaconMeshAccuracy
import BeaconMeshBLE
import BeaconMeshCaptures
import BeaconMeshCore
import Foundation
import Testing

@Suite("Labelled recordings: conversion, loading and bad input")
struct RecordingConversionTests {
    static func temporaryFolder() -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("recording-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static func write(_ text: String, to folder: String, name: String) -> String {
        let path = (folder as NSString).appendingPathComponent(name)
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }

    @Test("a SAL measurement becomes one capture per sniffer with its adverts, a start marker, and truth per superframe")
    func salConversion() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let csv = Self.write(
            """
            superframe,O-DR,I-DL,Label,raw_photosensor_door
            0,-70,-100,0,0
            1,-71,-60,1,0
            3,1,-61,1,0

            """, to: folder, name: "walk.csv")
        let converted = try SALMeasurement.convert(path: csv)
        #expect(converted.name == "sal-walk")
        #expect(converted.nodes.map(\.id) == ["o-dr", "i-dl"])
        #expect(converted.nodes.map(\.adverts.count) == [2, 2], "−100 is not heard, and neither is the impossible 1 dBm")
        let written = try converted.write(to: folder)
        let recording = try LabelledRecording.load(folder: written)
        #expect(recording.nodes.map(\.department) == [SALMeasurement.outside, SALMeasurement.inside])
        let records = try BTSnoopReader.readAll(path: recording.nodes[1].capture)
        #expect(records.count == 3, "the start marker and two adverts")
        #expect(
            records.first?.timestampMicroseconds == records[1].timestampMicroseconds - 100_000, "the marker sits at the recording's start")
        let beacon = converted.beaconKey
        let start = try #require(recording.truth.period?.from)
        #expect(recording.truth.department(of: beacon, at: start + 50) == SALMeasurement.outside)
        #expect(
            recording.truth.department(of: beacon, at: start + 250) == SALMeasurement.inside,
            "a skipped superframe belongs to the one before")
        #expect(recording.truth.changes(of: beacon).count == 1)
    }

    @Test("malformed input names the file, the line and what is wrong, and writes nothing")
    func malformedInput() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let badLabel = Self.write("superframe,O-DR,Label\n0,-70,0\n1,-70,7\n", to: folder, name: "bad.csv")
        #expect(throws: RecordingError(file: badLabel, line: 3, message: "superframe must be a whole number and Label 0, 1 or 2")) {
            try SALMeasurement.convert(path: badLabel)
        }
        let track = Self.write(
            "1581249601.4,b827eb4521b4,e78f135624ce,-87,18.0,8.4,1.8\n1581249601.5,ffffffffffff,e78f135624ce,-80,1,1,1\n", to: folder,
            name: "t_all_sensors.mbd")
        #expect(throws: RecordingError(file: track, line: 2, message: "unknown receiver ffffffffffff")) {
            try PhilotuxoTrack.convert(path: track)
        }
        let recording = (folder as NSString).appendingPathComponent("r")
        try FileManager.default.createDirectory(atPath: recording, withIntermediateDirectories: true)
        _ = Self.write("node,department,capture\na,10,missing.btsnoop\n", to: recording, name: "layout.csv")
        #expect(throws: RecordingError(file: "\(recording)/layout.csv", line: 2, message: "capture 'missing.btsnoop' does not exist")) {
            try LabelledRecording.load(folder: recording)
        }
        #expect(!FileManager.default.fileExists(atPath: "\(folder)/philotuxo-t"))
    }

    @Test("a philotuxo track's truth is the group nearest the annotated position; pi keeps one radio per department")
    func philotuxoConversion() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let track = Self.write(
            """
            1581249601.0,b827eb4521b4,e78f135624ce,-60,5.0,5.0,1.8
            1581249601.5,000000000101,e78f135624ce,-70,5.0,5.0,1.8
            1581249602.0,b827ebfd7811,e78f135624ce,-65,14.0,4.0,1.8

            """, to: folder, name: "walk_all_sensors.mbd")
        let all = try PhilotuxoTrack.convert(path: track)
        #expect(all.name == "philotuxo-walk")
        #expect(all.nodes.map(\.id) == ["sensor10", "sensor11", "sensor40"])
        let pi = try PhilotuxoTrack.convert(path: track, radios: .pi)
        #expect(pi.nodes.map(\.id) == ["sensor10", "sensor40"])
        #expect(all.truth.department(of: all.beaconKey, at: 1_581_249_601_200) == 1)
        #expect(all.truth.department(of: all.beaconKey, at: 1_581_249_602_100) == 4)
        #expect(all.truth.changes(of: all.beaconKey).map(\.to) == [4])
    }
}

@Suite("Scoring and the naive rules")
struct ScoringTests {
    let beacon = BeaconKey("ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:100:1")!

    @Test("seconds are right, wrong or unknown at their middle; a followed change counts its latency, a missed one is counted")
    func scoreCountsSeconds() {
        let truth = GroundTruth([
            .init(beacon: beacon, from: 0, to: 4000, department: 1), .init(beacon: beacon, from: 4000, to: 8000, department: 2),
        ])
        var decisions = DecisionTimeline()
        decisions.decide(1, at: 1000)
        decisions.decide(nil, at: 4200)
        decisions.decide(2, at: 5700)
        let score = AccuracyScore.score(decisions, beacon: beacon, truth: truth)
        #expect(score.scored == 8)
        #expect(score.right == 5, "seconds 1, 2, 3 in 1; 6, 7 in 2")
        #expect(score.unknown == 3, "second 0 before the first decision, 4 and 5 while unknown")
        #expect(score.wrong == 0)
        #expect(score.switchLatencies == [1700])
        #expect(score.changes == 1 && score.trueChanges == 1)
        #expect(score.confusion[2]?[nil] == 2)
    }

    @Test("the strongest node decides each second from its end; the confirmed rule needs three seconds in a row")
    func naiveRules() {
        let adverts: [NaiveRoomRules.Advert] = (0..<6).flatMap { second -> [NaiveRoomRules.Advert] in
            let time = Int64(second) * 1000 + 100
            let loud: UInt16 = second == 1 || second >= 3 ? 2 : 1
            return [.init(time: time, department: loud, rssi: -60), .init(time: time + 1, department: loud == 1 ? 2 : 1, rssi: -70)]
        }
        let raw = NaiveRoomRules.strongestNode(adverts, from: 0)
        #expect(raw.changes.map(\.department) == [1, 2, 1, 2])
        #expect(raw.changes.first?.at == 1000, "a window's decision is known at its end")
        #expect(raw.departmentChanges == 3)
        let confirmed = NaiveRoomRules.strongestNode(adverts, from: 0, confirmations: 3)
        #expect(confirmed.changes.map(\.department) == [nil, 2], "1 never wins three in a row; 2 does in seconds 3–5")
        #expect(confirmed.changes.last?.at == 6000)
    }

    @Test("the replay is deterministic: the same recording gives the same decisions")
    func deterministicReplay() throws {
        let folder = RecordingConversionTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var lines = ""
        for step in 0..<40 {
            let time = 1_581_249_600.0 + Double(step) * 0.25
            let near = step < 20
            lines += "\(time),b827eb4521b4,e78f135624ce,\(near ? -55 : -80),5.0,5.0,1.8\n"
            lines += "\(time + 0.01),b827ebfd7811,e78f135624ce,\(near ? -80 : -55),\(near ? 5.0 : 14.0),\(near ? 5.0 : 4.0),1.8\n"
        }
        let track = RecordingConversionTests.write(lines, to: folder, name: "step_all_sensors.mbd")
        let written = try PhilotuxoTrack.convert(path: track).write(to: folder)
        let recording = try LabelledRecording.load(folder: written)
        let first = try PresenceReplay().run(recording)
        let second = try PresenceReplay().run(recording)
        let beacon = try #require(recording.truth.beacons.first)
        let decisions = try #require(first[beacon]?.decisions.changes.map { "\($0.at):\(String(describing: $0.department))" })
        #expect(decisions == second[beacon]?.decisions.changes.map { "\($0.at):\(String(describing: $0.department))" })
        #expect(first[beacon]?.decisions.departmentChanges == 1, "\(decisions)")
        #expect(first[beacon]?.decisions.department(at: 1_581_249_609_900) == 4)
    }
}
