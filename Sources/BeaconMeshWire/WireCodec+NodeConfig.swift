import BeaconMeshCore

extension WireCodec {
    /// The retained node config payload: `{"v":1,"revision":7,"at":…,"settings":{…}}`, the keys in the contract's
    /// order, durations spelled as the config spells them (`500ms`).
    public static func encode(_ config: NodeConfig) -> [UInt8] {
        payload { body in
            body.member("v", 1)
            body.member("revision", config.revision)
            body.member("at", config.at)
            body.member("settings") { settings in
                for key in config.settings.setKeys {
                    guard let value = config.settings[key] else { continue }
                    settings.key(key.rawValue)
                    switch value {
                    case .number(let number):
                        if number == number.rounded(), abs(number) < 1e15 { settings.int(Int64(number)) } else { settings.double(number) }
                    case .bool(let flag): settings.bool(flag)
                    case .text(let text): settings.string(text)
                    case .list(let texts): settings.array(texts) { text, writer in writer.string(text) }
                    }
                }
            }
        }
    }

    /// Reads a node config message as a node takes it: zero bytes delete the level; a payload that is not a node
    /// config says why (with its revision, when that much could be read); else the settings as sent, unchecked.
    public static func decodeNodeConfig(_ bytes: [UInt8]) -> NodeConfigBook.Message {
        if bytes.isEmpty { return .removed }
        do {
            return .document(try decodeNodeConfigDocument(bytes))
        } catch {
            let revision = try? JSONReader.withVersion1Document(bytes) { body throws(WireError) in try body.optionalInt("revision") }
            return .unreadable(reason: error.description, revision: revision ?? nil)
        }
    }

    /// Reads a node config's payload: `revision` and `at` integers, `settings` an object; its values as sent.
    public static func decodeNodeConfigDocument(_ bytes: [UInt8]) throws(WireError) -> NodeConfigDocument {
        try JSONReader.withVersion1Document(bytes) { body throws(WireError) in
            let revision = try body.int("revision")
            guard revision >= 0 else { throw .absurdValue(field: "revision", value: String(revision)) }
            _ = try body.object("settings")
            guard case .object(let members) = body.value("settings") else {
                throw .wrongType(field: "settings", expected: "an object")
            }
            let entries = members.map { key, value in NodeConfigDocument.Entry(key: key, value: settingValue(value)) }
            return NodeConfigDocument(revision: revision, at: try body.timestamp("at"), settings: entries)
        }
    }

    private static func settingValue(_ value: JSONValue) -> NodeSettingValue? {
        switch value {
        case .int(let number): return .number(Double(number))
        case .double(let number): return .number(number)
        case .bool(let flag): return .bool(flag)
        case .string(let text): return .text(text)
        case .array(let items):
            var texts: [String] = []
            for item in items {
                guard case .string(let text) = item else { return nil }
                texts.append(text)
            }
            return .list(texts)
        case .null, .object: return nil
        }
    }

    /// The status's `config` member: `{"store":{…}|null,"node":{…}|null}`.
    static func writeNodeConfigReports(_ reports: NodeConfigReports, into body: inout JSONStreamWriter) {
        body.member("config") { config in
            for level in NodeConfigLevel.allCases {
                config.key(level.rawValue)
                guard let report = reports[level] else {
                    config.null()
                    continue
                }
                config.object { entry in
                    entry.member("revision", report.revision)
                    entry.member("state", report.state.rawValue)
                    entry.member("error", orNull: report.error)
                }
            }
        }
    }

    /// Reads a status's `config`; a status without one (an older node, another tool's will) has none.
    static func decodeNodeConfigReports(_ body: JSONReader) throws(WireError) -> NodeConfigReports {
        guard let config = try body.optionalObject("config") else { return NodeConfigReports() }
        var reports = NodeConfigReports()
        for level in NodeConfigLevel.allCases {
            let key: JSONKey = level == .store ? "store" : "node"
            guard let entry = try config.optionalObject(key) else { continue }
            guard let state = NodeConfigReport.State(rawValue: try entry.string("state")) else {
                throw .wrongType(field: "config.\(level.rawValue).state", expected: "applied or refused")
            }
            reports[level] = NodeConfigReport(revision: try entry.int("revision"), state: state, error: try entry.optionalString("error"))
        }
        return reports
    }
}

extension WireCodec {
    /// `nodes list --json` and the dashboard's `/api/stores/{store}/nodes`: a list of
    /// `{"store":1,"department":10,"node":"a","state":"online","version":"…","config":{…},"uptime":…,
    /// "advertsPerSec":…,"lastHeard":…}`, the last three `null` before a health report.
    public static func encode(nodeEntries entries: [NodeDirectory.Entry]) -> [UInt8] {
        document(capacity: 256 * max(1, entries.count)) { writer in
            writer.array(entries) { entry, writer in
                writer.object { body in
                    body.member("store", entry.address.store)
                    body.member("department", entry.address.department)
                    body.member("node", entry.address.node)
                    body.member("state", entry.status.state.rawValue)
                    body.member("version", entry.status.version)
                    body.member("boot", entry.status.boot)
                    body.member("source", entry.status.source)
                    body.member("startedAt", entry.status.startedAt)
                    writeNodeConfigReports(entry.status.config, into: &body)
                    body.member("uptime", orNull: entry.health.map { Int($0.uptimeSeconds) })
                    body.member("advertsPerSec", orNull: entry.health.map { ($0.advertsPerSecond * 10).rounded() / 10 })
                    body.member("lastHeard", orNull: entry.lastHeard)
                }
            }
        }
    }
}
