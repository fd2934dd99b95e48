import ArgumentParser
import BeaconMeshCore
import BeaconMeshPhone
import BeaconMeshService
import Testing

@testable import beacon_phone

@Suite("beacon-phone command line")
struct BeaconPhoneCommandTests {
    @Test("the contract's flags parse into the phone's settings")
    func parsesEveryFlag() throws {
        let command = try BeaconPhone.parse([
            "--member", "ana", "--store", "1", "--broker", "mqtts://broker.local:8883", "--route", "10,20,30",
            "--dwell", "4s", "--username", "ana", "--password-file", "/etc/ana.pass", "--cafile", "/etc/ca.pem",
            "--clock-offset", "-3h",
        ])
        let configuration = command.phoneConfiguration
        #expect(configuration.member == "ana")
        #expect(configuration.store == 1)
        #expect(configuration.walk.route == [10, 20, 30])
        #expect(configuration.walk.dwell == .seconds(4))
        #expect(configuration.walk.away == nil)
        #expect(configuration.clockOffset == .seconds(-3 * 3600))
        #expect(configuration.broker.url == "mqtts://broker.local:8883")
        #expect(configuration.broker.username == "ana")
        #expect(configuration.broker.passwordFile == "/etc/ana.pass")
        #expect(configuration.broker.caFile == "/etc/ca.pem")
    }

    @Test("defaults: the demo store's route, 20 s per department, the phone's clock right, the local broker, one walk")
    func defaults() throws {
        let configuration = try BeaconPhone.parse(["--member", "ana", "--store", "9"]).phoneConfiguration
        #expect(configuration.walk.route == [10, 20, 30])
        #expect(configuration.walk.dwell == .seconds(20))
        #expect(configuration.walk.away == nil)
        #expect(configuration.clockOffset == .zero)
        #expect(configuration.reportInterval == .seconds(1))
        #expect(configuration.broker.url == "mqtt://127.0.0.1:1883")
    }

    @Test("--loop comes back after --away (default 60s); a positive --clock-offset= works too")
    func loop() throws {
        #expect(try BeaconPhone.parse(["--member", "ana", "--store", "1", "--loop"]).phoneConfiguration.walk.away == .seconds(60))
        let command = try BeaconPhone.parse(["--member", "ana", "--store", "1", "--loop", "--away", "90s", "--clock-offset=1500ms"])
        #expect(command.phoneConfiguration.walk.away == .seconds(90))
        #expect(command.phoneConfiguration.clockOffset == .milliseconds(1500))
    }

    @Test(
        "bad flags are refused with a message naming what is wrong",
        arguments: [
            (["--store", "1"], "Missing expected argument '--member <ID>'"),
            (["--member", "ana"], "Missing expected argument '--store <N>'"),
            (["--member", "ana", "--store", "70000"], "--store"),
            (["--member", "a/b", "--store", "1"], "--member 'a/b' must be 1-64 of a-z, A-Z, 0-9, '.', '_' and '-'"),
            (["--member", "ana", "--store", "1", "--route", "10,,20"], "--route"),
            (["--member", "ana", "--store", "1", "--route", "10,x"], "--route"),
            (["--member", "ana", "--store", "1", "--dwell", "soon"], "--dwell"),
            (["--member", "ana", "--store", "1", "--dwell", "0s"], "--dwell must be longer than 0s"),
            (["--member", "ana", "--store", "1", "--away", "5s"], "--away needs --loop"),
            (["--member", "ana", "--store", "1", "--loop", "--away=-5s"], "--away cannot be negative"),
            (["--member", "ana", "--store", "1", "--clock-offset", "3 hours"], "--clock-offset"),
            (["--member", "ana", "--store", "1", "--colour", "red"], "--colour"),
        ])
    func badFlags(arguments: [String], message: String) {
        do {
            _ = try BeaconPhone.parse(arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            let text = BeaconPhone.message(for: error)
            #expect(text.contains(message), "\(text)")
            #expect(BeaconPhone.exitCode(for: error) == .validationFailure)
        }
    }

    @Test("--help is pinned")
    func help() {
        #expect(BeaconPhone.helpMessage(columns: 120) == Self.help + "\n")
    }

    static let help = #"""
        OVERVIEW: Simulate a member's phone app: range a store's departments along a route and print the offers and check-ins
        it gets.

        The store's department nodes advertise the chain's iBeacon (major = store, minor = department); the phone ranges them,
        nearest department strong (near), the route's neighbours faint (far), and publishes a ranging report about once a
        second. After the route it has left the store: one report with no beacons, then silence (with --loop it comes back
        after --away and walks again). It prints one line per offer and check-in on its own topics until SIGINT or SIGTERM.
        The broker password comes from --password-file or the BEACONMESH_PASSWORD environment variable.

        USAGE: beacon-phone --member <ID> --store <N> [--broker <URL>] [--username <U>] [--password-file <F>] [--cafile <F>] [--route <DEPT,DEPT,...>] [--dwell <DURATION>] [--loop] [--away <DURATION>] [--clock-offset <DURATION>]

        OPTIONS:
          --member <ID>           The member whose phone this is (their id in the registry).
          --store <N>             The store whose department beacons it ranges (0-65535).
          --broker <URL>          Broker URL: mqtt://host:port or mqtts://host:port (default mqtt://127.0.0.1:1883).
          --username <U>          Broker user name.
          --password-file <F>     File holding the broker password (or set BEACONMESH_PASSWORD).
          --cafile <F>            CA certificate file to verify an mqtts:// broker (default: the system store).
          --route <DEPT,DEPT,...> Departments to walk through, in order. (default: 10,20,30)
          --dwell <DURATION>      How long to stay in each department. (default: 20s)
          --loop                  Walk the route again and again, out of the store for --away between walks.
          --away <DURATION>       With --loop: how long to stay out of the store between walks (default 60s).
          --clock-offset <DURATION>
                                  How far this phone's clock is off, e.g. -3h or 90s (it stamps its reports with it). (default:
                                  0s)
          --version               Show the version.
          -h, --help              Show help information.
        """#
}
