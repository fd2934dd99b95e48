import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshWire

/// What the survey page shows of a store (`/api/stores/{store}/survey`), as JSON its script renders: the store, the
/// broker link, each department with its name and the seconds of samples gathered in it so far, and the beacons the
/// store hears now (`heard`, loudest first: the key, its loudest node's reading, and whose it is — a member's id and
/// name, or the department of a reference — so a surveyor picks the one they carry instead of typing its key).
///
/// The departments are those the dashboard knows of the store (`StoreBoard.departments`), which may be marked
/// (`markable`), and those only the registry has samples of (a department no longer in the store's config, say),
/// listed for their seconds but not markable.
enum SurveyPageData {
    static func json(
        _ board: StoreBoard, seconds: [UInt16: Int], heard: [HeardBeacons.Heard] = [], owners: [BeaconKey: SurveyBeaconOwner] = [:],
        at now: Timestamp
    ) -> JSONValue {
        let known = Dictionary(board.departments.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let departments: [JSONValue] = Set(known.keys).union(seconds.keys).sorted().map { department in
            .object([
                ("department", .int(Int64(department))),
                ("name", .string(known[department] ?? "Department \(department)")),
                ("seconds", .int(Int64(max(0, seconds[department] ?? 0)))),
                ("markable", .bool(known[department] != nil)),
            ])
        }
        return .object([
            ("store", .int(Int64(board.store))),
            ("name", .string(board.name)),
            ("now", .int(now.milliseconds)),
            ("connection", ConnectionData.json(board.model.connection)),
            ("departments", .array(departments)),
            ("heard", .array(heard.map { beacon in heardJSON(beacon, owner: owners[beacon.beacon]) })),
        ])
    }

    private static func heardJSON(_ heard: HeardBeacons.Heard, owner: SurveyBeaconOwner?) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("beacon", .string(heard.beacon.description)), ("rssi", .double(heard.rssi)),
            ("department", .int(Int64(heard.node.department))), ("node", .string(heard.node.node)),
        ]
        switch owner {
        case .member(let id, let name)?: fields.append(("member", .object([("id", .string(id)), ("name", .string(name))])))
        case .reference(let department)?: fields.append(("reference", .object([("department", .int(Int64(department)))])))
        case nil: break
        }
        return .object(fields)
    }
}
