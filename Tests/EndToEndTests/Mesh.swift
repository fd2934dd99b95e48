import BeaconMeshTesting
import Foundation
import Testing

/// Helpers for driving the real BeaconMesh programs against a real broker.
enum Mesh {
    /// The shared BLE test data (`../shared/data/ble` beside the repository); a missing folder fails the test.
    static var sharedData: URL {
        get throws { try SharedTestData.bleDirectory() }
    }

    /// Every capture folder's `btsnoop_hci.log`.
    static func captures() throws -> [URL] {
        let folder = try sharedData.appendingPathComponent("captures")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map {
            folder.appendingPathComponent($0).appendingPathComponent("btsnoop_hci.log")
        }.filter { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// The iBeacon keys of a capture's golden file.
    static func goldenIBeacons(of capture: URL) throws -> Set<String> {
        let text = try String(contentsOf: URL(fileURLWithPath: capture.path + ".expected.jsonl"), encoding: .utf8)
        var keys: Set<String> = []
        for line in text.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            guard object["type"] as? String == "ibeacon", let uuid = object["uuid"] as? String,
                let major = object["major"] as? Int, let minor = object["minor"] as? Int
            else { continue }
            keys.insert("ibeacon:\(uuid):\(major):\(minor)")
        }
        return keys
    }

    static func program(_ name: String, _ arguments: [String], environment: [String: String]? = nil) throws -> TestProcess {
        try TestProcess(executable: BuiltProducts.path(of: name), arguments: arguments, environment: environment)
    }

    /// Runs `sql` with Debian's `sqlite3` on `database` (a program's own file, as an IT person would look at it) and
    /// returns what it printed, trimmed. Awaits the program rather than blocking one of the few threads every test
    /// shares (two on this machine): a blocked one starved other tests' waits.
    static func sqlite(_ database: String, _ sql: String) async throws -> String {
        let sqlite = try TestProcess(executable: "/usr/bin/sqlite3", arguments: ["-cmd", ".timeout 5000", database, sql])
        guard await sqlite.waitForExit(timeout: .seconds(30)) == .exited(0) else {
            throw TestSupportError("sqlite3 failed on \(database): \(sql)\n\(sqlite.transcript)")
        }
        return sqlite.stdoutLines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A temporary folder for one test.
    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-e2e-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The JSON object of a `mosquitto_sub -v` line (`topic {json}`).
    static func payload(of line: String) -> [String: Any]? {
        guard let space = line.firstIndex(of: " ") else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(line[line.index(after: space)...].utf8)) as? [String: Any]
    }

    static func topic(of line: String) -> String { String(line.prefix { $0 != " " }) }

    static let uuid = "0cf052c2-97ca-407c-84f8-b62aac4e9020"

    /// A sighting batch as a scanner would publish it, with one sighting of `minor` (store-app phone `major`).
    static func batch(
        store: Int, department: Int, node: String = "a", boot: String = "b00t", seq: Int,
        major: Int = 1, minor: Int, rssi: Double = -60, proximity: String = "near", at milliseconds: Int64
    ) -> String {
        batch(
            store: store, department: department, node: node, boot: boot, seq: seq, beacon: "ibeacon:\(uuid):\(major):\(minor)",
            rssi: rssi, proximity: proximity, at: milliseconds)
    }

    /// A sighting batch as a scanner would publish it, with one sighting of `beacon` (a key).
    static func batch(
        store: Int, department: Int, node: String = "a", boot: String = "b00t", seq: Int,
        beacon: String, rssi: Double = -60, proximity: String = "near", at milliseconds: Int64
    ) -> String {
        """
        {"v":1,"store":\(store),"department":\(department),"node":"\(node)","boot":"\(boot)","seq":\(seq),"sentAt":\(milliseconds),\
        "sightings":[{"beacon":"\(beacon)","rssi":\(rssi),"count":4,"txPower":-59,"distance":1.1,\
        "proximity":"\(proximity)","lastSeen":\(milliseconds)}]}
        """
    }

    static var nowMilliseconds: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// A coordinator config for store 1 (departments 10, 20, 30) with short timings, and a members CSV with Ana
    /// (`ibeacon:…:1:1`) and Zoë (`ibeacon:…:1:4`).
    static func writeCoordinatorConfig(
        in directory: String, brokerURL: String, id: String = "e2e",
        extra: String = ""
    ) throws -> String {
        let members = """
            id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt
            ana,Ana Souza,Flat white,ibeacon:\(uuid):1:1,,11,1763683200000,1735689600000
            zoe,Zoë Martin,,ibeacon:\(uuid):1:4,,0,,
            """
        try members.write(toFile: directory + "/members.csv", atomically: true, encoding: .utf8)
        let config = """
            id: \(id)
            broker: {url: "\(brokerURL)"}
            database: mesh.sqlite
            members: members.csv
            presence: {staleAfter: 3s, exitAfter: 2s, switchMargin: 4, switchDwell: 1s, visitGap: 20m}
            promos: {dwell: 1s, cooldown: 24h}
            stores:
              - id: 1
                name: San Francisco
                greeting: "Welcome back, {name}! The usual {favoriteDrink}?"
                departments:
                  - {id: 10, name: Clothing, promo: {id: shirts, title: "Promoção de blusas!", message: "Ganhe R$10!"}}
                  - {id: 20, name: Housewares}
                  - {id: 30, name: Automotive}
            \(extra)
            """
        let path = directory + "/coordinator.yaml"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

extension TestProcess {
    /// Whether this coordinator said within `timeout` that it read from the registry a change of the member `changed`
    /// (added or changed) or the removal of `removed`: its log line "members changed in the registry", which comes once
    /// the change is on its way to the decisions. Waiting for it replaces a guess at how long the registry poll takes.
    func readRegistryChange(changed: String? = nil, removed: String? = nil, timeout: Duration = .seconds(10)) async -> Bool {
        /// The ids after `key=` in a log line (`changed=ana,kim removed=`).
        @Sendable func ids(_ key: String, in line: String) -> [Substring] {
            guard let start = line.range(of: " \(key)=") else { return [] }
            return line[start.upperBound...].prefix { $0 != " " }.split(separator: ",")
        }
        return await waitForLine(in: .stderr, timeout: timeout) { line in
            line.contains("members changed in the registry")
                && changed.map { ids("changed", in: line).contains(Substring($0)) } ?? true
                && removed.map { ids("removed", in: line).contains(Substring($0)) } ?? true
        } != nil
    }
}
