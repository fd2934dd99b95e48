import ArgumentParser
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
        ])
        #expect(command.listen == ListenAddress(host: "0.0.0.0", port: 9000))
        #expect(command.stores == [1, 9])
        #expect(command.logLevel == .info)
        #expect(command.brokerOptions.connection.url == "mqtt://10.0.0.2:1883")
        let defaults = try BeaconDashboard.parse([])
        #expect(defaults.listen == ListenAddress(host: "127.0.0.1", port: 8080))
        #expect(defaults.stores.isEmpty && defaults.logLevel == .notice)
    }

    @Test(
        "a wrong value is refused naming the flag",
        arguments: [
            (["--listen", "nowhere"], "--listen"),
            (["--store", "-1"], "--store"),
            (["--log-level", "loud"], "The value 'loud' is invalid for '--log-level <log-level>'"),
        ])
    func wrongValue(arguments: [String], mentions: String) {
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

    @Test("--help is pinned")
    func help() {
        #expect(BeaconDashboard.helpMessage(columns: 120) == Self.help + "\n")
    }

    static let help = #"""
        OVERVIEW: Serve the chain overview and live store pages on the web, read from the broker.

        Pages: / (the chain overview), /stores/N (a store's live page), /api/stores/N/presence (the latest presence snapshot as
        JSON), /healthz, /metrics (Prometheus). The broker password comes from --password-file or the BEACONMESH_PASSWORD
        environment variable.

        USAGE: beacon-dashboard [--broker <URL>] [--username <U>] [--password-file <F>] [--cafile <F>] [--listen <HOST:PORT>] [--store <N> ...] [--log-level <log-level>]

        OPTIONS:
          --broker <URL>          Broker URL: mqtt://host:port or mqtts://host:port (default mqtt://127.0.0.1:1883).
          --username <U>          Broker user name.
          --password-file <F>     File holding the broker password (or set BEACONMESH_PASSWORD).
          --cafile <F>            CA certificate file to verify an mqtts:// broker (default: the system store).
          --listen <HOST:PORT>    Where to serve the pages (port 0: any free port). (default: 127.0.0.1:8080)
          --store <N>             Show only this store (0-65535); repeat for several. Default: every store heard.
          --log-level <log-level> Log level: trace, debug, info, notice, warning, error or critical. (default: notice)
          -h, --help              Show help information.
        """#
}
