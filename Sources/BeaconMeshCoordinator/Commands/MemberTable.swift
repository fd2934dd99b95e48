import BeaconMeshCore
import BeaconMeshRegistry

/// Renders members as a plain-text table for `members list`. `BEACONS` counts the beacons given to a member; an
/// Eddystone-EID fob (its handle is among the beacons the registry reads) is its own column, `FOB`, shown when any
/// member has one: `eid K=10`.
public enum MemberTable {
    public static func render(_ members: [MemberRecord]) -> String {
        if members.isEmpty { return "no members" }
        let customColumns = Set(members.flatMap { $0.profile.customFields.keys }).sorted()
        let fobs = members.contains { $0.fob != nil }
        var rows: [[String]] = [
            ["ID", "NAME", "DRINK", "VISITS", "CHECKINS", "LAST VISIT", "BEACONS"] + (fobs ? ["FOB"] : [])
                + customColumns.map { $0.uppercased() }
        ]
        for member in members {
            let profile = member.profile
            let beacons = member.beacons.filter { $0 != member.fob?.key }.count
            let fob = fobs ? [member.fob.map { "eid K=\($0.rotationExponent)" } ?? "-"] : []
            rows.append(
                [
                    profile.id, profile.name, profile.favoriteDrink ?? "-", String(profile.visits), String(profile.checkins),
                    profile.lastVisitAt.map { String($0.milliseconds) } ?? "-", String(beacons),
                ] + fob + customColumns.map { profile.customFields[$0] ?? "" })
        }
        let widths = (0..<rows[0].count).map { column in rows.map { TerminalWidth.of($0[column]) }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).map { cell, width in cell + String(repeating: " ", count: max(0, width - TerminalWidth.of(cell))) }
                .joined(separator: "  ").trimmingTrailingSpaces()
        }.joined(separator: "\n")
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
