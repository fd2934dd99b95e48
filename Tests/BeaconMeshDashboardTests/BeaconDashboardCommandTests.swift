import ArgumentParser
import BeaconMeshDashboard
import BeaconMeshService
import Logging
import Testing

@testable import beacon_dashboard

@Suite("beacon-dashboard command line")
struct BeaconDashboardCommandTests {
    @Test("a chain dashboard's command line parses without running")
    func parses() throws {
        let command = try BeaconDashboard.parse([
            "--broker", "mqtt://10.0.0.2:1883", "--listen", "0.0.0.0:9000", "--store", "1", "--store", "9", "--log-level", "info",
            "--users", "/etc/beaconmesh/dashboard-users.yaml", "--tls-cert", "dashboard.pem", "--tls-key", "dashboard.key",
        ])
        #expect(command.listen == ListenAddress(host: "0.0.0.0", port: 9000))
        #expect(command.users == "/etc/beaconmesh/dashboard-users.yaml")
        #expect(command.tlsCert == "dashboard.pem" && command.tlsKey == "dashboard.key")
        #expect(command.stores == [1, 9])
        #expect(command.logLevel == .info)
        #expect(command.brokerOptions.connection.url == "mqtt://10.0.0.2:1883")
        let defaults = try BeaconDashboard.parse([])
        #expect(defaults.listen == ListenAddress(host: "127.0.0.1", port: 8080))
        #expect(defaults.stores.isEmpty && defaults.logLevel == .notice)
        #expect(defaults.users == nil && defaults.tlsCert == nil && defaults.tlsKey == nil)
        // Loopback needs no users file: the demo's dashboard (deploy/run-mesh.sh) opens without sign-in.
        for loopback in ["127.0.0.1:8080", "localhost:80", "127.1.2.3:9", "[::1]:8080"] {
            #expect(try BeaconDashboard.parse(["--listen", loopback]).users == nil, "\(loopback)")
        }
    }

    @Test(
        "without --users only loopback; the TLS pair goes together; a wrong value names its flag: one line each, exit 2",
        arguments: [
            (["--listen", "0.0.0.0:8080"], "--listen 0.0.0.0:8080 is reachable from other machines"),
            (["--listen", "10.0.0.5:8080"], "add --users FILE"),
            (["--listen", "[::]:8080"], "--listen [::]:8080 is reachable"),
            (["--listen", "shop-pc:8080"], "or listen on 127.0.0.1"),
            (["--tls-cert", "c.pem"], "--tls-cert and --tls-key go together"),
            (["--tls-key", "k.pem", "--users", "u.yaml"], "--tls-cert and --tls-key go together"),
            (["--listen", "nowhere"], "--listen"),
            (["--store", "-1"], "--store"),
            (["--log-level", "loud"], "The value 'loud' is invalid for '--log-level <log-level>'"),
        ])
    func refused(arguments: [String], mentions: String) {
        do {
            _ = try BeaconDashboard.parse(arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            let text = BeaconDashboard.message(for: error)
            #expect(text.contains(mentions), "\(text)")
            #expect(!text.contains("\n"))
            #expect(BeaconDashboard.exitCode(for: error) == .validationFailure)
        }
    }

    @Test("users add parses its name, stores (all or numbers) and file; a bad --stores or name is refused")
    func usersAdd() throws {
        let parsed = try BeaconDashboard.parseAsRoot(["users", "add", "Head Office", "--stores", "all", "--file", "users.yaml"])
        let add = try #require(parsed as? UsersCommand.Add)
        #expect(add.name == "Head Office" && add.stores == .all && add.file == "users.yaml")
        let manager = try #require(
            try BeaconDashboard.parseAsRoot(["users", "add", "anna", "--stores", "2,1", "--file", "u.yaml"]) as? UsersCommand.Add)
        #expect(manager.stores == .stores([1, 2]))
        for bad in [["--stores", "1,x"], ["--stores", ""], ["--stores", "70000"]] {
            #expect(throws: (any Error).self, "\(bad)") {
                try BeaconDashboard.parseAsRoot(["users", "add", "anna", "--file", "u.yaml"] + bad)
            }
        }
        #expect(throws: (any Error).self) { try BeaconDashboard.parseAsRoot(["users", "add", "a:b", "--stores", "1", "--file", "u.yaml"]) }
    }

    @Test("--help is pinned")
    func help() {
        #expect(BeaconDashboard.helpMessage(columns: 120) == Self.help)
    }

    static let help = #"""
        OVERVIEW: Serve the chain overview and live store pages on the web, read from the broker.

        Pages: / (the chain overview), /stores/N (a store's live page), /api/stores/N/presence (the latest presence snapshot as
        JSON), /healthz, /metrics (Prometheus). With --db (the registry, read only): /analytics, /stores/N/analytics (charts)
        and /api/stores/N/analytics?from=MS&to=MS (the analytics object); the PostgreSQL password comes from
        BEACONMESH_DB_PASSWORD. The broker password comes from --password-file or the BEACONMESH_PASSWORD environment variable.
        Sign-in: --users FILE (make it with `beacon-dashboard users add`) lets in only the people it lists, each to their own
        stores, through /login or HTTP Basic. Without --users the dashboard listens on loopback only.

        USAGE: beacon-dashboard [--broker <URL>] [--username <U>] [--password-file <F>] [--cafile <F>] [--listen <HOST:PORT>] [--store <N> ...] [--db <FILE|URL>] [--users <FILE>] [--tls-cert <F> --tls-key <F>] [--log-level <log-level>]
               beacon-dashboard users add <name> --stores <1,2|all> --file <FILE>

        OPTIONS:
          --broker <URL>          Broker URL: mqtt://host:port or mqtts://host:port (default mqtt://127.0.0.1:1883).
          --username <U>          Broker user name.
          --password-file <F>     File holding the broker password (or set BEACONMESH_PASSWORD).
          --cafile <F>            CA certificate file to verify an mqtts:// broker (default: the system store).
          --listen <HOST:PORT>    Where to serve the pages (port 0: any free port). (default: 127.0.0.1:8080)
          --store <N>             Show only this store (0-65535); repeat for several. Default: every store heard.
          --db <FILE|URL>         The registry for shopper analytics: the coordinators' SQLite file or postgres:// URL (only
                                  read).
          --users <FILE>          Users file (YAML; beacon-dashboard users add): sign-in required, each user sees only their
                                  stores.
          --tls-cert <F>          Serve HTTPS with this PEM certificate (chain); needs --tls-key.
          --tls-key <F>           The PEM private key of --tls-cert.
          --log-level <log-level> Log level: trace, debug, info, notice, warning, error or critical. (default: notice)
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          users                   Manage the dashboard's users file (--users).

          See 'beacon-dashboard help <subcommand>' for detailed help.
        """#
}
