import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import Foundation
import Yams

extension CoordinatorConfiguration {
    /// Loads a coordinator config from a YAML file. Unknown keys, wrong types and impossible values are errors
    /// naming the key and its line; relative paths (database, members) are taken relative to the file's folder.
    public static func load(path: String, defaultID: String) throws(ConfigurationError) -> CoordinatorConfiguration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(file: path, message: "cannot read the file (\(error.localizedDescription))")
        }
        var configuration = try parse(yaml: text, file: path, defaultID: defaultID)
        let folder = (path as NSString).deletingLastPathComponent
        if !configuration.database.hasPrefix("postgres://") && !configuration.database.hasPrefix("postgresql://") {
            configuration.database = resolve(configuration.database, against: folder)
        }
        configuration.databasePasswordFile = configuration.databasePasswordFile.map { resolve($0, against: folder) }
        configuration.secretsKeyFile = configuration.secretsKeyFile.map { resolve($0, against: folder) }
        configuration.members = configuration.members.map { resolve($0, against: folder) }
        try configuration.readWebhookSecrets(file: path, folder: folder)
        if configuration.sharesRegistry {
            configuration.cache = resolve(configuration.cache ?? configuration.id + ".cache", against: folder)
        }
        return configuration
    }

    private static func resolve(_ path: String, against folder: String) -> String {
        path.hasPrefix("/") || folder.isEmpty ? path : folder + "/" + path
    }

    /// Parses YAML text; `file` only names the source in errors.
    public static func parse(yaml: String, file: String, defaultID: String) throws(ConfigurationError) -> CoordinatorConfiguration {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            throw ConfigurationError(file: file, message: "not valid YAML (\(error))")
        }
        guard let root else { throw ConfigurationError(file: file, message: "the file is empty") }
        let reader = YAMLReader(file: file)
        let top = try reader.mapping(
            root, at: "the top level",
            allowed: [
                "id", "broker", "database", "databasePasswordFile", "presence", "promos", "stores", "members", "topicRoot", "metrics",
                "lease",
                "retention", "cache", "alerts", "webhooks", "secretsKeyFile",
            ])
        var configuration = CoordinatorConfiguration(id: defaultID)
        if let id = top["id"] {
            configuration.id = try reader.string(id, at: "id")
            guard !configuration.id.isEmpty, !configuration.id.contains("/"), !configuration.id.contains("+"),
                !configuration.id.contains("#")
            else { throw reader.error(id, "id must be a non-empty name without /, + or #") }
        }
        if let broker = top["broker"] {
            let fields = try reader.mapping(broker, at: "broker", allowed: ["url", "username", "passwordFile", "cafile"])
            if let url = fields["url"] { configuration.broker.url = try reader.string(url, at: "broker.url") }
            if let user = fields["username"] { configuration.broker.username = try reader.string(user, at: "broker.username") }
            if let file = fields["passwordFile"] { configuration.broker.passwordFile = try reader.string(file, at: "broker.passwordFile") }
            if let file = fields["cafile"] { configuration.broker.cafile = try reader.string(file, at: "broker.cafile") }
        }
        if let database = top["database"] {
            configuration.database = try reader.string(database, at: "database")
            do {
                _ = try RegistryLocation(configuration.database)
            } catch {
                throw reader.error(database, error.description)
            }
        }
        if let file = top["databasePasswordFile"] {
            configuration.databasePasswordFile = try reader.string(file, at: "databasePasswordFile")
        }
        if let file = top["secretsKeyFile"] { configuration.secretsKeyFile = try reader.string(file, at: "secretsKeyFile") }
        if let members = top["members"] { configuration.members = try reader.string(members, at: "members") }
        if let cache = top["cache"] {
            let path = try reader.string(cache, at: "cache")
            guard configuration.sharesRegistry else {
                throw reader.error(cache, "cache is for a PostgreSQL database only (a SQLite database is local already)")
            }
            guard !path.isEmpty else { throw reader.error(cache, "cache must name a file, such as backoffice-1.cache") }
            configuration.cache = path
        }
        if let root = top["topicRoot"] { configuration.topicRoot = try reader.string(root, at: "topicRoot") }
        if let metrics = top["metrics"] {
            let text = try reader.string(metrics, at: "metrics")
            guard let address = ListenAddress(text) else {
                throw reader.error(metrics, "metrics must be HOST:PORT, such as \"127.0.0.1:9464\" (found '\(text)')")
            }
            configuration.metrics = address
        }
        if let lease = top["lease"] {
            let fields = try reader.mapping(lease, at: "lease", allowed: ["ttl"])
            if let ttl = fields["ttl"] {
                configuration.lease.ttl = try reader.duration(ttl, at: "lease.ttl")
                guard configuration.lease.ttl >= .seconds(1), configuration.lease.ttl <= .seconds(600) else {
                    throw reader.error(ttl, "lease.ttl must be from 1s to 10m, such as 10s")
                }
            }
            guard configuration.sharesRegistry else {
                throw reader.error(
                    lease, "lease applies only to a shared PostgreSQL database: with a SQLite file one coordinator serves the stores")
            }
        }
        if let presence = top["presence"] {
            configuration.presence = try reader.presenceRules(presence, at: "presence", base: configuration.presence)
        }
        if let promos = top["promos"] {
            let fields = try reader.mapping(promos, at: "promos", allowed: ["dwell", "cooldown"])
            if let dwell = fields["dwell"] { configuration.promos.dwell = try reader.duration(dwell, at: "promos.dwell") }
            if let cooldown = fields["cooldown"] { configuration.promos.cooldown = try reader.duration(cooldown, at: "promos.cooldown") }
        }
        if let retention = top["retention"] {
            let fields = try reader.mapping(retention, at: "retention", allowed: ["visits"])
            if let visits = fields["visits"] {
                let kept = try reader.duration(visits, at: "retention.visits")
                guard kept >= .seconds(3600) else {
                    throw reader.error(visits, "retention.visits must be at least 1h, such as 90d or 365d")
                }
                configuration.retention.visits = kept
            }
        }
        if let stores = top["stores"] {
            for (index, node) in try reader.sequence(stores, at: "stores").enumerated() {
                let store = try reader.store(node, at: "stores[\(index)]", presence: configuration.presence)
                if configuration.stores.contains(where: { $0.id == store.id }) {
                    throw reader.error(node, "store \(store.id) appears twice")
                }
                for reference in store.references {
                    if let other = configuration.stores.first(where: { $0.reference(reference.beacon) != nil }) {
                        throw ConfigurationError(
                            file: file, line: reference.line, message: "\(reference.beacon) is a reference of store \(other.id) already")
                    }
                }
                configuration.stores.append(store)
            }
        }
        if configuration.stores.isEmpty { throw ConfigurationError(file: file, message: "no stores: list at least one under 'stores'") }
        if let alerts = top["alerts"] { configuration.alerts = try reader.alertRules(alerts, stores: configuration.stores) }
        if let webhooks = top["webhooks"] { configuration.webhooks = try reader.webhookEndpoints(webhooks) }
        return configuration
    }
}

/// Typed, strict access to a YAML document, with errors that name the key and the line.
struct YAMLReader {
    let file: String

    func error(_ node: Node, _ message: String) -> ConfigurationError {
        ConfigurationError(file: file, line: node.mark.map { $0.line }, message: message)
    }

    func mapping(_ node: Node, at place: String, allowed: Set<String>) throws(ConfigurationError) -> [String: Node] {
        guard case .mapping(let mapping) = node else { throw error(node, "\(place) must be a mapping of keys to values") }
        var fields: [String: Node] = [:]
        for (key, value) in mapping {
            guard let name = key.string else { throw error(key, "\(place) has a key that is not text") }
            guard allowed.contains(name) else {
                throw error(key, "unknown key '\(name)' in \(place) (known: \(allowed.sorted().joined(separator: ", ")))")
            }
            fields[name] = value
        }
        return fields
    }

    func sequence(_ node: Node, at place: String) throws(ConfigurationError) -> [Node] {
        guard case .sequence(let items) = node else { throw error(node, "\(place) must be a list") }
        return Array(items)
    }

    func string(_ node: Node, at place: String) throws(ConfigurationError) -> String {
        guard case .scalar(let scalar) = node else { throw error(node, "\(place) must be a single value") }
        return scalar.string
    }

    func number(_ node: Node, at place: String) throws(ConfigurationError) -> Double {
        guard let value = Double(try string(node, at: place)), value.isFinite else {
            throw error(node, "\(place) must be a number")
        }
        return value
    }

    func uint16(_ node: Node, at place: String) throws(ConfigurationError) -> UInt16 {
        guard let value = UInt16(try string(node, at: place)) else { throw error(node, "\(place) must be a whole number from 0 to 65535") }
        return value
    }

    func duration(_ node: Node, at place: String) throws(ConfigurationError) -> Duration {
        let text = try string(node, at: place)
        guard let duration = DurationText.parse(text) else {
            throw error(node, "\(place) must be a duration such as 250ms, 5s, 20m or 24h (found '\(text)')")
        }
        return duration
    }

    func presenceRules(_ node: Node, at place: String, base: PresenceRules) throws(ConfigurationError) -> PresenceRules {
        let fields = try mapping(node, at: place, allowed: ["staleAfter", "exitAfter", "switchMargin", "switchDwell", "visitGap"])
        var rules = base
        if let value = fields["staleAfter"] { rules.staleAfter = try duration(value, at: "\(place).staleAfter") }
        if let value = fields["exitAfter"] { rules.exitAfter = try duration(value, at: "\(place).exitAfter") }
        if let value = fields["switchMargin"] {
            rules.switchMargin = try number(value, at: "\(place).switchMargin")
            guard rules.switchMargin >= 0 else { throw error(value, "\(place).switchMargin must not be negative") }
        }
        if let value = fields["switchDwell"] { rules.switchDwell = try duration(value, at: "\(place).switchDwell") }
        if let value = fields["visitGap"] { rules.visitGap = try duration(value, at: "\(place).visitGap") }
        guard rules.exitAfter > .zero else { throw error(node, "\(place).exitAfter must be longer than 0s") }
        guard rules.staleAfter > .zero else { throw error(node, "\(place).staleAfter must be longer than 0s") }
        return rules
    }

    func store(_ node: Node, at place: String, presence: PresenceRules) throws(ConfigurationError) -> CoordinatorConfiguration.Store {
        let fields = try mapping(
            node, at: place, allowed: ["id", "name", "greeting", "firstVisitGreeting", "timeZone", "departments", "references"]
        )
        guard let idNode = fields["id"] else { throw error(node, "\(place) needs an id") }
        let id = try uint16(idNode, at: "\(place).id")
        var store = CoordinatorConfiguration.Store(
            id: id,
            name: try fields["name"].map { node throws(ConfigurationError) in
                try string(node, at: "\(place).name")
            } ?? "Store \(id)")
        if let greeting = fields["greeting"] { store.greeting = GreetingTemplate(try string(greeting, at: "\(place).greeting")) }
        if let greeting = fields["firstVisitGreeting"] {
            store.firstVisitGreeting = GreetingTemplate(try string(greeting, at: "\(place).firstVisitGreeting"))
        }
        if let zone = fields["timeZone"] {
            let name = try string(zone, at: "\(place).timeZone")
            guard let timeZone = TimeZone(identifier: name) else {
                throw error(zone, "\(place).timeZone '\(name)' is not a time zone (an IANA name such as Europe/Lisbon)")
            }
            store.timeZone = timeZone
        }
        if let departments = fields["departments"] {
            let items = try sequence(departments, at: "\(place).departments")
            for (index, item) in items.enumerated() {
                let department = try department(item, at: "\(place).departments[\(index)]", presence: presence)
                if store.departments.contains(where: { $0.id == department.id }) {
                    throw error(item, "department \(department.id) appears twice in store \(id)")
                }
                store.departments.append(department)
            }
            for (index, (item, department)) in zip(items, store.departments).enumerated() {
                try checkNeighbours(of: department, in: store, node: item, at: "\(place).departments[\(index)]")
            }
        }
        if let references = fields["references"] {
            for (index, item) in try sequence(references, at: "\(place).references").enumerated() {
                let reference = try reference(item, at: "\(place).references[\(index)]", in: store)
                store.references.append(reference)
            }
        }
        return store
    }

    /// One of a store's `references`: a beacon key no other reference of the chain's config names, in a department
    /// of the store.
    func reference(_ node: Node, at place: String, in store: CoordinatorConfiguration.Store) throws(ConfigurationError)
        -> CoordinatorConfiguration.Reference
    {
        let fields = try mapping(node, at: place, allowed: ["beacon", "department"])
        guard let beaconNode = fields["beacon"], let departmentNode = fields["department"] else {
            throw error(node, "\(place) needs a beacon and a department")
        }
        let text = try string(beaconNode, at: "\(place).beacon")
        guard let beacon = BeaconKey(text) else {
            throw error(beaconNode, "\(place).beacon '\(text)' is not a beacon key (ibeacon:UUID:MAJOR:MINOR and the like)")
        }
        let department = try uint16(departmentNode, at: "\(place).department")
        guard store.department(department) != nil else {
            throw error(departmentNode, "\(place): store \(store.id) has no department \(department)")
        }
        guard store.reference(beacon) == nil else {
            throw error(beaconNode, "\(place): \(beacon) is a reference of store \(store.id) already")
        }
        return CoordinatorConfiguration.Reference(beacon: beacon, department: department, line: node.mark.map { $0.line })
    }

    func department(_ node: Node, at place: String, presence: PresenceRules) throws(ConfigurationError)
        -> CoordinatorConfiguration.Department
    {
        let fields = try mapping(node, at: place, allowed: ["id", "name", "promo", "presence", "till", "minRssi", "neighbours"])
        guard let idNode = fields["id"] else { throw error(node, "\(place) needs an id") }
        let id = try uint16(idNode, at: "\(place).id")
        let name = try fields["name"].map { node throws(ConfigurationError) in try string(node, at: "\(place).name") } ?? "Department \(id)"
        let rules =
            try fields["presence"].map { node throws(ConfigurationError) in
                try presenceRules(node, at: "\(place).presence", base: presence)
            } ?? presence
        var department = CoordinatorConfiguration.Department(id: id, name: name, presence: rules)
        if let promo = fields["promo"] { department.promo = try promoRule(promo, at: "\(place).promo") }
        if let till = fields["till"] {
            switch try string(till, at: "\(place).till") {
            case "true", "yes", "on": department.till = true
            case "false", "no", "off": department.till = false
            case let text: throw error(till, "\(place).till must be true or false (found '\(text)')")
            }
        }
        if let value = fields["minRssi"] {
            let rssi = try number(value, at: "\(place).minRssi")
            guard (-127...0).contains(rssi) else {
                let text = try string(value, at: "\(place).minRssi")
                throw error(value, "\(place).minRssi must be a signal strength in dBm from -127 to 0, such as -85 (found '\(text)')")
            }
            department.minRSSI = rssi
        }
        if let value = fields["neighbours"] {
            var neighbours: Set<UInt16> = []
            for item in try sequence(value, at: "\(place).neighbours") {
                neighbours.insert(try uint16(item, at: "\(place).neighbours"))
            }
            department.neighbours = neighbours
        }
        return department
    }

    /// A department's `neighbours` must be other departments of its own store.
    func checkNeighbours(
        of department: CoordinatorConfiguration.Department, in store: CoordinatorConfiguration.Store, node: Node,
        at place: String
    ) throws(ConfigurationError) {
        guard let neighbours = department.neighbours else { return }
        let value = node["neighbours"] ?? node
        for neighbour in neighbours.sorted() {
            if neighbour == department.id {
                throw error(value, "\(place).neighbours lists department \(neighbour) itself")
            }
            if store.department(neighbour) == nil {
                throw error(value, "\(place).neighbours lists department \(neighbour), which store \(store.id) does not have")
            }
        }
    }

    func promoRule(_ node: Node, at place: String) throws(ConfigurationError) -> CoordinatorConfiguration.PromoRule {
        let fields = try mapping(
            node, at: place,
            allowed: [
                "id", "title", "message", "proximity", "dwell", "from", "until",
                "hours", "minVisits", "minCheckins", "members",
            ])
        func required(_ key: String) throws(ConfigurationError) -> String {
            guard let value = fields[key] else { throw error(node, "\(place) needs a \(key)") }
            return try string(value, at: "\(place).\(key)")
        }
        var rule = CoordinatorConfiguration.PromoRule(
            promo: Promo(
                id: try required("id"), title: try required("title"),
                message: try required("message")))
        if let proximity = fields["proximity"] {
            let text = try string(proximity, at: "\(place).proximity")
            guard let value = Proximity(rawValue: text), value != .unknown else {
                throw error(proximity, "\(place).proximity must be immediate, near or far (found '\(text)')")
            }
            rule.proximity = value
        }
        if let dwell = fields["dwell"] { rule.dwell = try duration(dwell, at: "\(place).dwell") }
        for key in ["from", "until"] {
            guard let value = fields[key] else { continue }
            let text = try string(value, at: "\(place).\(key)")
            guard let day = PromoWindow.Day(text) else { throw error(value, "\(place).\(key) must be a date YYYY-MM-DD (found '\(text)')") }
            if key == "from" { rule.window.from = day } else { rule.window.until = day }
        }
        if let from = rule.window.from, let until = rule.window.until, until < from, let value = fields["until"] {
            throw error(value, "\(place).until (\(until)) is before \(place).from (\(from))")
        }
        if let value = fields["hours"] {
            let text = try string(value, at: "\(place).hours")
            guard let hours = PromoWindow.Hours(text) else {
                throw error(value, "\(place).hours must be HH:MM-HH:MM, e.g. 08:00-11:30 (found '\(text)')")
            }
            rule.window.hours = hours
        }
        if let value = fields["minVisits"] {
            guard let visits = Int(try string(value, at: "\(place).minVisits")), visits >= 1 else {
                throw error(value, "\(place).minVisits must be a whole number of at least 1")
            }
            rule.audience.minVisits = visits
        }
        if let value = fields["minCheckins"] {
            guard let checkins = Int(try string(value, at: "\(place).minCheckins")), checkins >= 1 else {
                throw error(value, "\(place).minCheckins must be a whole number of at least 1")
            }
            rule.audience.minCheckins = checkins
        }
        if let value = fields["members"] {
            var ids: Set<String> = []
            for item in try sequence(value, at: "\(place).members") { ids.insert(try string(item, at: "\(place).members")) }
            rule.audience.members = ids
        }
        return rule
    }
}
