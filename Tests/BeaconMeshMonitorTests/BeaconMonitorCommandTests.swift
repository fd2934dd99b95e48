import ArgumentParser
import BeaconMeshService
import Testing

@testable import beacon_monitor

@Suite("beacon-monitor command line")
struct BeaconMonitorCommandTests {
    @Test("a till's command line parses without running")
    func parses() throws {
        let command = try BeaconMonitor.parse([
            "--store", "9", "--broker", "mqtts://broker.local:8883", "--username", "till-9", "--password-file", "/etc/till.pass",
            "--plain", "--till", "6", "--till-name", "counter",
        ])
        #expect(command.store == 9)
        #expect(command.plain)
        #expect(command.till == 6)
        #expect(command.tillName == "counter")
        #expect(command.brokerOptions.connection.url == "mqtts://broker.local:8883")
        #expect(command.brokerOptions.connection.username == "till-9")
        let defaults = try BeaconMonitor.parse(["--store", "1"])
        #expect(!defaults.plain && defaults.till == nil)
        #expect(defaults.brokerOptions.connection.url == "mqtt://127.0.0.1:1883")
    }

    @Test(
        "a wrong value is refused naming the flag",
        arguments: [
            (["--store", "70000"], "The value '70000' is invalid for '--store <store>'"),
            (["--store", "1", "--till", "six"], "The value 'six' is invalid for '--till <DEPT>'"),
            ([], "Missing expected argument '--store <store>'"),
        ])
    func wrongValue(arguments: [String], message: String) {
        do {
            _ = try BeaconMonitor.parse(arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            #expect(BeaconMonitor.message(for: error) == message)
            #expect(BeaconMonitor.exitCode(for: error) == .validationFailure)
        }
    }

    @Test("--help is pinned")
    func help() {
        #expect(BeaconMonitor.helpMessage(columns: 120) == Self.help + "\n")
    }

    static let help = #"""
        OVERVIEW: Watch one store: who is in, where, and what was just offered.

        The broker password comes from --password-file or the BEACONMESH_PASSWORD environment variable.

        USAGE: beacon-monitor --store <store> [--broker <URL>] [--username <U>] [--password-file <F>] [--cafile <F>] [--plain] [--till <DEPT>] [--till-name <till-name>]

        OPTIONS:
          --store <store>         The store to watch (0-65535).
          --broker <URL>          Broker URL: mqtt://host:port or mqtts://host:port (default mqtt://127.0.0.1:1883).
          --username <U>          Broker user name.
          --password-file <F>     File holding the broker password (or set BEACONMESH_PASSWORD).
          --cafile <F>            CA certificate file to verify an mqtts:// broker (default: the system store).
          --plain                 Print one line per event instead of the full-screen view (the default when output is not a
                                  terminal).
          --till <DEPT>           Show the till panel of this department (marked till: true): members near it, numbered;
                                  pressing a number checks that member in.
          --till-name <till-name> The name this till gives its check-in requests (default: till-DEPT on this host).
          --version               Show the version.
          -h, --help              Show help information.
        """#
}
