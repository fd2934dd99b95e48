import BeaconMeshCore
import Foundation

/// The contract's members CSV: `id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt`, the optional
/// `checkins`, plus custom columns.
///
/// A spreadsheet runs a cell that begins with `=`, `+`, `-` or `@` as a formula (a member named
/// `=HYPERLINK("http://…")`): `write` puts a `'` before such a cell (header included), which spreadsheets show as
/// text, and `parse` takes that one `'` away again, so an export imports unchanged (`FormulaCell`).
public enum MembersCSV {
    /// The contract's columns, in order.
    public static let columns = ["id", "name", "favoriteDrink", "beacons", "photo", "visits", "lastVisitAt", "createdAt"]
    /// The contract's optional column: the member's check-in count (export writes it; import takes the larger).
    public static let checkinsColumn = "checkins"

    /// A CSV that cannot be imported: the file, the line, what is wrong.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public var file: String
        public var line: Int?
        public var message: String
        public var description: String { line.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)" }
    }

    /// The optional column of members' Eddystone-EID fobs (`HEX32:K` or `HEX32:K:OFFSET`): read into `File.fobs`,
    /// for the caller to seal, never kept as a custom field, never written by `write`.
    public static let eidColumn = "eid"

    /// A members file as read: its members, and the fob keys of its `eid` column by member (to be sealed).
    public struct File: Sendable {
        public var records: [MemberRecord]
        public var fobs: [String: EIDCell]
    }

    /// Reads every member of `path`. Any malformed row fails the whole file (nothing is half-imported):
    /// the error names its line. `photo` paths are read and turned into `data:` URLs.
    public static func read(path: String) throws(Failure) -> File {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(file: path, message: "cannot read the file")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw Failure(file: path, message: "the file is not UTF-8 text") }
        let folder = (path as NSString).deletingLastPathComponent
        return try parseFile(text, file: path, photoFolder: folder)
    }

    /// The members of CSV text (their fob keys left out: `parseFile` has them).
    public static func parse(_ text: String, file: String, photoFolder: String = ".") throws(Failure) -> [MemberRecord] {
        try parseFile(text, file: file, photoFolder: photoFolder).records
    }

    /// Parses CSV text; `file` only names the source in errors, `photoFolder` resolves relative photo paths.
    public static func parseFile(_ text: String, file: String, photoFolder: String = ".") throws(Failure) -> File {
        let rows: [CSVTable.Record]
        do {
            rows = try CSVTable.read(text)
        } catch {
            throw Failure(file: file, line: error.line, message: "malformed CSV (\(error.message))")
        }
        guard let header = rows.first?.fields, header != [""] else {
            throw Failure(file: file, line: 1, message: "the file has no header")
        }
        for column in columns where !header.contains(column) {
            throw Failure(
                file: file, line: 1, message: "the header lacks the column '\(column)' (expected \(columns.joined(separator: ",")))")
        }
        if Set(header).count != header.count { throw Failure(file: file, line: 1, message: "the header names a column twice") }
        var records: [MemberRecord] = []
        var fobs: [String: EIDCell] = [:]
        var seenIDs: [String: Int] = [:]
        var beaconOwners: [BeaconKey: String] = [:]
        for entry in rows.dropFirst() {
            let row = entry.fields
            let line = entry.line
            if row.count == 1 && row[0].isEmpty { continue }
            guard row.count == header.count else {
                throw Failure(file: file, line: line, message: "the row has \(row.count) fields, the header \(header.count)")
            }
            var fields: [String: String] = [:]
            for (name, value) in zip(header, row) { fields[name] = value }
            let record = try member(fields, header: header, file: file, line: line, photoFolder: photoFolder)
            if let first = seenIDs[record.id] {
                throw Failure(file: file, line: line, message: "member id '\(record.id)' already appears on line \(first)")
            }
            seenIDs[record.id] = line
            for beacon in record.beacons {
                if let owner = beaconOwners[beacon] {
                    throw Failure(file: file, line: line, message: "beacon \(beacon) already belongs to member '\(owner)'")
                }
                beaconOwners[beacon] = record.id
            }
            records.append(record)
            let eid = fields[eidColumn, default: ""].trimmingCharacters(in: .whitespaces)
            if !eid.isEmpty {
                guard let cell = EIDCell(eid, offsetAllowed: true) else {
                    throw Failure(
                        file: file, line: line, message: "member '\(record.id)': eid must be \(EIDCell.expected), and optionally :OFFSET")
                }
                fobs[record.id] = cell
            }
        }
        return File(records: records, fobs: fobs)
    }

    private static func member(
        _ fields: [String: String], header: [String], file: String, line: Int, photoFolder: String
    ) throws(Failure) -> MemberRecord {
        func fail(_ message: String) -> Failure { Failure(file: file, line: line, message: message) }
        let id = fields["id", default: ""].trimmingCharacters(in: .whitespaces)
        guard !id.isEmpty else { throw fail("the member id is empty") }
        guard !id.contains("/"), !id.contains("+"), !id.contains("#") else { throw fail("member id '\(id)' must not contain /, + or #") }
        let name = fields["name", default: ""].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { throw fail("member '\(id)' has no name") }
        var beacons: [BeaconKey] = []
        for text in fields["beacons", default: ""].split(separator: ";") {
            let spelled = text.trimmingCharacters(in: .whitespaces)
            guard let key = BeaconKey(spelled.lowercased()) else {
                throw fail("'\(spelled)' is not a beacon key (ibeacon:<uuid>:<major>:<minor>, …)")
            }
            beacons.append(key)
        }
        let visitsText = fields["visits", default: ""].trimmingCharacters(in: .whitespaces)
        guard let visits = visitsText.isEmpty ? 0 : Int(visitsText), visits >= 0 else {
            throw fail("visits must be a whole number, found '\(visitsText)'")
        }
        func time(_ column: String) throws(Failure) -> Timestamp? {
            let text = fields[column, default: ""].trimmingCharacters(in: .whitespaces)
            if text.isEmpty { return nil }
            guard let milliseconds = Int64(text), milliseconds >= 0 else {
                throw fail("\(column) must be epoch milliseconds or empty, found '\(text)'")
            }
            return Timestamp(milliseconds: milliseconds)
        }
        var photo: String?
        let photoText = fields["photo", default: ""].trimmingCharacters(in: .whitespaces)
        if photoText.hasPrefix("data:") {
            photo = photoText
        } else if !photoText.isEmpty {
            let path = photoText.hasPrefix("/") ? photoText : photoFolder + "/" + photoText
            do {
                photo = try PhotoThumbnail.dataURL(fromFile: path)
            } catch {
                throw fail("photo: \(error)")
            }
        }
        var custom: [String: String] = [:]
        let checkinsText = fields[checkinsColumn, default: ""].trimmingCharacters(in: .whitespaces)
        guard let checkins = checkinsText.isEmpty ? 0 : Int(checkinsText), checkins >= 0 else {
            throw fail("checkins must be a whole number, found '\(checkinsText)'")
        }
        for column in header where !columns.contains(column) && column != checkinsColumn && column != eidColumn {
            if let value = fields[column], !value.isEmpty { custom[column] = value }
        }
        let drink = fields["favoriteDrink", default: ""].trimmingCharacters(in: .whitespaces)
        let profile = MemberProfile(
            id: id, name: name, favoriteDrink: drink.isEmpty ? nil : drink, visits: visits,
            lastVisitAt: try time("lastVisitAt"), photo: photo, customFields: custom, checkins: checkins)
        return MemberRecord(profile: profile, beacons: beacons, createdAt: try time("createdAt"))
    }

    /// Writes `records` as the contract's CSV; custom fields become extra columns after the contract's, by name.
    public static func write(_ records: [MemberRecord], to path: String) throws {
        let custom = Set(records.flatMap { $0.profile.customFields.keys }).subtracting(columns + [checkinsColumn, eidColumn]).sorted()
        var rows = [columns + [checkinsColumn] + custom]
        for record in records {
            let profile = record.profile
            rows.append(
                [
                    profile.id, profile.name, profile.favoriteDrink ?? "", record.listedBeacons.map(\.description).joined(separator: ";"),
                    profile.photo ?? "", String(profile.visits), profile.lastVisitAt.map { String($0.milliseconds) } ?? "",
                    record.createdAt.map { String($0.milliseconds) } ?? "", String(profile.checkins),
                ] + custom.map { profile.customFields[$0] ?? "" })
        }
        guard FileManager.default.createFile(atPath: path, contents: Data(CSVTable.text(rows, lineEnding: .lf).utf8)) else {
            throw Failure(file: path, message: "cannot write the file")
        }
    }
}
