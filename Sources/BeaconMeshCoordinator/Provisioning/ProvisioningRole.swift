import BeaconMeshCore

/// Who a broker credential is for: decides its user name and exactly which topics the broker's ACL lets it use.
///
/// User names (one scheme, so an ACL line can be read at a glance):
/// - a scanner node: `node-<store>-<department>-<node>`, e.g. `node-1-10-a`;
/// - a shop-floor monitor: `monitor-<store>`, e.g. `monitor-1`;
/// - a till (a monitor that checks members in): `till-<store>`, e.g. `till-9`;
/// - a coordinator: `coordinator-<id>`, e.g. `coordinator-backoffice-1`;
/// - a store broker's bridge to head office: `bridge-store-<store>`, e.g. `bridge-store-1`;
/// - a web dashboard: `dashboard-<id>`, e.g. `dashboard-hq` (head office's, reading every store);
/// - head office's fleet tooling (`beacon-coordinator nodes list|set`): `fleet-<name>`, e.g. `fleet-hq`;
/// - a member's app: the member id itself, e.g. `ana` — mosquitto's `%u` ACL patterns put the user name into the
///   member's topics (`…/members/%u/offers`, `…/members/%u/checkins`, `…/stores/+/members/%u/ranging`), so the
///   user name must *be* the member id. Member ids that start with a service prefix (`node-`, `monitor-`, `till-`,
///   `coordinator-`, `bridge-`, `dashboard-`, `fleet-`) are refused so that the two kinds never collide: the patterns apply to every user,
///   but a service's own name is never a member's, so they give a service nothing a member has.
public enum ProvisioningRole: Sendable, Equatable {
    /// A scanner: writes only its own node's `sightings`, `status` and `health`, and reads only its store's and its
    /// own node config.
    case node(NodeAddress)
    /// A shop-floor monitor: reads everything of one store, writes nothing.
    case monitor(store: UInt16)
    /// A till: reads everything of one store, like a monitor, and writes only that store's check-in requests.
    case till(store: UInt16)
    /// A coordinator: reads its stores' node topics, members' ranging reports and tills' check-in requests; writes their
    /// `events` and `presence`, members' `offers` and `checkins`, the registry's events and its own
    /// `coordinators/{id}/status|health`. No stores means every store (a chain-wide coordinator at head office).
    case coordinator(id: String, stores: [UInt16])
    /// A member's app: publishes only its own ranging reports (in any store) and reads only its own offers and
    /// check-ins — all through the ACL's `%u` patterns, no user block of its own.
    case member(id: String)
    /// A store broker's bridge, on the head-office broker: forwards one store's topics there and takes members'
    /// offers and check-ins back (deploy/bridge/).
    case bridge(store: UInt16)
    /// A web dashboard (`beacon-dashboard`): reads its stores' presence snapshots, events, node status and health,
    /// alerts and sightings (its survey page lists the beacons a store hears, and subscribes to that store's sightings
    /// while the page is in use) and every coordinator's status and health — nothing more (no ranging) — and writes
    /// only its stores' survey marks (its survey page's). No stores means every store: head office's credential.
    case dashboard(id: String, stores: [UInt16])
    /// Head office's fleet tooling (`nodes list`, `nodes set`): the only credential that may publish node configs; it
    /// reads them back and reads every node's status and health, nothing else.
    case fleet(name: String)

    /// The prefixes of service user names; a member id may not start with one.
    public static let reservedPrefixes = ["node-", "monitor-", "till-", "coordinator-", "bridge-", "dashboard-", "fleet-"]

    /// The broker user name of this credential (see the type's documentation for the scheme).
    public var username: String {
        switch self {
        case .node(let address): "node-\(address.store)-\(address.department)-\(address.node)"
        case .monitor(let store): "monitor-\(store)"
        case .till(let store): "till-\(store)"
        case .coordinator(let id, _): "coordinator-\(id)"
        case .member(let id): id
        case .bridge(let store): "bridge-store-\(store)"
        case .dashboard(let id, _): "dashboard-\(id)"
        case .fleet(let name): "fleet-\(name)"
        }
    }

    /// What kind of credential this is, in a word (`node`, `monitor`, `till`, `coordinator`, `member`, `bridge`,
    /// `dashboard`, `fleet`).
    public var kind: String {
        switch self {
        case .node: "node"
        case .monitor: "monitor"
        case .till: "till"
        case .coordinator: "coordinator"
        case .member: "member"
        case .bridge: "bridge"
        case .dashboard: "dashboard"
        case .fleet: "fleet"
        }
    }

    /// The ACL `topic` lines of this user's block, for topics under `<topicRoot>/v1`; empty for a member, whose only
    /// rights come from the shared `%u` patterns (`ProvisioningACL.patternLines`).
    public func topicLines(topicRoot: String = Topics.defaultRoot) -> [String] {
        let topics = Topics(root: topicRoot)
        switch self {
        case .node(let address):
            return [topics.sightings(address), topics.nodeStatus(address), topics.nodeHealth(address)].map { "topic write \($0)" }
                + ["topic read \(topics.storeNodeConfig(store: address.store))", "topic read \(topics.nodeConfig(address))"]
        case .monitor(let store):
            return ["topic read \(topics.everything(store: store))"]
        case .till(let store):
            return ["topic read \(topics.everything(store: store))", "topic write \(topics.checkins(store: store))"]
        case .coordinator(let id, let stores):
            let storeLevels: [UInt16?] = stores.isEmpty ? [nil] : stores.sorted()
            var lines: [String] = []
            for store in storeLevels {
                lines += [
                    "topic read \(topics.departmentsFilter(store: store))",
                    "topic read \(topics.rangingFilter(store: store, member: nil))",
                    "topic read \(topics.checkinsFilter(store: store))",
                    "topic read \(topics.surveyFilter(store: store))",
                    "topic write \(topics.eventsFilter(store: store))", "topic write \(topics.presenceFilter(store: store))",
                    "topic write \(topics.alertsFilter(store: store))",
                ]
            }
            lines += [
                "topic write \(topics.offersFilter(member: nil))",
                "topic write \(topics.checkinsFilter(member: nil))",
                "topic write \(topics.registryEvents)",
                "topic readwrite \(topics.coordinatorStatus(id: id))",
                "topic write \(topics.coordinatorHealth(id: id))",
            ]
            return lines
        case .member:
            return []
        case .bridge(let store):
            // Its store's tree goes up, but node configs: those only come down, from the fleet credential.
            return topics.uplinkFilters(store: store).map { "topic write \($0)" } + [
                "topic read \(topics.storeNodeConfigFilter(store: store))", "topic read \(topics.nodeConfigFilter(store: store))",
                "topic read \(topics.offersFilter(member: nil))", "topic read \(topics.checkinsFilter(member: nil))",
            ]
        case .dashboard(_, let stores):
            let storeLevels: [UInt16?] = stores.isEmpty ? [nil] : Set(stores).sorted()
            return storeLevels.flatMap { store in
                [
                    "topic read \(topics.presenceFilter(store: store))", "topic read \(topics.eventsFilter(store: store))",
                    "topic read \(topics.nodeStatusFilter(store: store))", "topic read \(topics.nodeHealthFilter(store: store))",
                    "topic read \(topics.alertsFilter(store: store))", "topic read \(topics.sightingsFilter(store: store))",
                    "topic write \(topics.surveyFilter(store: store))",
                ]
            } + [
                "topic read \(topics.coordinatorStatusFilter(id: nil))",
                // Their health: the overview shows a webhook endpoint that keeps failing.
                "topic read \(topics.coordinatorHealthFilter(id: nil))",
            ]
        case .fleet:
            return [
                "topic readwrite \(topics.storeNodeConfigFilter(store: nil))",
                "topic readwrite \(topics.nodeConfigFilter(store: nil))",
                "topic read \(topics.nodeStatusFilter(store: nil))", "topic read \(topics.nodeHealthFilter(store: nil))",
            ]
        }
    }

    /// Why this credential cannot be made (a bad coordinator or member id), or `nil` when it can.
    public var problem: String? {
        switch self {
        case .node, .monitor, .till, .bridge:
            return nil
        case .coordinator(let id, _):
            return Self.isTopicSafe(id) ? nil : "the coordinator id '\(id)' must be 1-64 of a-z, A-Z, 0-9, '.', '_' and '-'"
        case .dashboard(let id, _):
            return Self.isTopicSafe(id) ? nil : "the dashboard id '\(id)' must be 1-64 of a-z, A-Z, 0-9, '.', '_' and '-'"
        case .fleet(let name):
            return Self.isTopicSafe(name) ? nil : "the fleet name '\(name)' must be 1-64 of a-z, A-Z, 0-9, '.', '_' and '-'"
        case .member(let id):
            guard Self.isTopicSafe(id) else {
                return "the member id '\(id)' must be 1-64 of a-z, A-Z, 0-9, '.', '_' and '-' to be a broker user name"
            }
            if let prefix = Self.reservedPrefixes.first(where: { id.hasPrefix($0) }) {
                return "the member id '\(id)' starts with '\(prefix)', which is kept for service user names"
            }
            return nil
        }
    }

    /// Whether `text` is 1–64 of `A-Z a-z 0-9 . _ -`: safe as an MQTT topic level and as a mosquitto user name
    /// (no `/`, `+`, `#`, `:` or spaces).
    static func isTopicSafe(_ text: String) -> Bool {
        let bytes = text.utf8
        return (1...64).contains(bytes.count)
            && bytes.allSatisfy {
                ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z"))
                    || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                    || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
            }
    }
}
