import Foundation

/// The order the contract promises of each member's visit events on a store's `events` topic:
/// `arrived (moved* left (resumed moved* left)*)`, and a new `arrived` only after a `left` (a later visit). Every end-to-end
/// run that produces events checks its stream with this, whatever else it tests.
///
/// A stream may end inside a visit (the test stopped listening). Redeliveries of one event (the same `id`, QoS 1) count
/// once; events of other types (promos, check-ins, nodes) are not part of the order.
public enum EventGrammar {
    /// Where each member's events break the order: one line per break, naming the member, the event and what came
    /// before; empty when the stream reads as the contract says.
    public static func violations(in events: [(id: String, member: String, type: String)]) -> [String] {
        enum Place { case out, present, away }
        var place: [String: Place] = [:]
        var history: [String: [String]] = [:]
        var seen: Set<String> = []
        var found: [String] = []
        for event in events where ["arrived", "moved", "left", "resumed"].contains(event.type) {
            guard seen.insert(event.id).inserted else { continue }
            let before = place[event.member] ?? .out
            history[event.member, default: []].append(event.type)
            let after: Place?
            switch (before, event.type) {
            case (.out, "arrived"), (.away, "arrived"), (.away, "resumed"), (.present, "moved"): after = .present
            case (.present, "left"): after = .away
            default: after = nil
            }
            if let after {
                place[event.member] = after
            } else {
                found.append("\(event.member): \(event.type) after \(history[event.member]!.dropLast().joined(separator: ", "))")
            }
        }
        return found
    }

    /// The same for `mosquitto_sub -v` lines (`topic payload`) of `events` topics: each line's `id`, `type` and
    /// `member.id` (lines that are not such events are left out).
    public static func violations(inLines lines: [String]) -> [String] {
        violations(in: lines.compactMap(visitEvent))
    }

    /// The id, member and type of an event line, read with the text's own marks (no JSON library in test support's
    /// contract: the payload's first `"id"` is the event's, the member object's `"id"` follows `"member":{`).
    static func visitEvent(_ line: String) -> (id: String, member: String, type: String)? {
        guard let type = value(of: "\"type\":\"", in: line), let id = value(of: "\"id\":\"", in: line),
            let member = value(of: "\"member\":{\"id\":\"", in: line)
        else { return nil }
        return (id, member, type)
    }

    private static func value(of marker: String, in line: String) -> String? {
        guard let start = line.range(of: marker)?.upperBound, let end = line[start...].firstIndex(of: "\"") else { return nil }
        return String(line[start..<end])
    }
}
