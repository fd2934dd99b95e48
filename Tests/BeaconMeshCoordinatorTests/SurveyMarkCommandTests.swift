import ArgumentParser
import BeaconMeshCore
import BeaconMeshService
import Testing

@testable import beacon_coordinator

@Suite("beacon-coordinator survey mark command line")
struct SurveyMarkCommandTests {
    static let key = "ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:7"

    @Test("survey mark: the store, the beacon as a key (any case), the department as a number, none or stop, the broker flags")
    func mark() throws {
        let command = try #require(
            try BeaconCoordinator.parseAsRoot([
                "survey", "mark", "--store", "1", "--beacon", Self.key.uppercased(), "--department", "10", "--broker", "mqtts://hq:8883",
                "--username", "surveyor", "--password-file", "/etc/beaconmesh/surveyor.pass", "--cafile", "/etc/beaconmesh/tls/ca.pem",
            ]) as? SurveyMarkCommand)
        #expect(command.store == 1 && command.beacon == .beacon(BeaconKey(Self.key)!) && command.department == .department(10))
        let member = try #require(
            try BeaconCoordinator.parseAsRoot(["survey", "mark", "--store", "1", "--beacon", "member:ana", "--department", "10"])
                as? SurveyMarkCommand)
        #expect(member.beacon == .member("ana"))
        #expect(
            command.brokerOptions.connection
                == BrokerConnection(
                    url: "mqtts://hq:8883", username: "surveyor", passwordFile: "/etc/beaconmesh/surveyor.pass",
                    caFile: "/etc/beaconmesh/tls/ca.pem"))
        for (spelled, place) in [("none", SurveyPlace.between), ("stop", .stop), ("0", .department(0)), ("65535", .department(65535))] {
            let parsed = try #require(
                try BeaconCoordinator.parseAsRoot(["survey", "mark", "--store", "9", "--beacon", Self.key, "--department", spelled])
                    as? SurveyMarkCommand)
            #expect(parsed.department == place, "\(spelled)")
            #expect(parsed.brokerOptions.connection.url == "mqtt://127.0.0.1:1883")
        }
    }

    @Test("each place makes the contract's mark: a department, between departments (null), or the end (stop)")
    func marks() throws {
        let beacon = try #require(BeaconKey(Self.key))
        let at = Timestamp(milliseconds: 5)
        #expect(SurveyPlace.department(10).mark(of: .beacon(beacon), at: at) == SurveyMark(beacon: beacon, department: 10, at: at))
        #expect(SurveyPlace.between.mark(of: .beacon(beacon), at: at) == SurveyMark(beacon: beacon, department: nil, at: at))
        #expect(SurveyPlace.stop.mark(of: .beacon(beacon), at: at) == SurveyMark(beacon: beacon, department: nil, stop: true, at: at))
        #expect(SurveyPlace.department(10).mark(of: .member("ana"), at: at) == SurveyMark(.member("ana"), department: 10, at: at))
        #expect(SurveyPlace.stop.mark(of: .member("ana"), at: at) == SurveyMark(.member("ana"), department: nil, stop: true, at: at))
    }

    @Test(
        "a bad flag or a malformed key is refused in one line naming it (exit 2)",
        arguments: [
            (["--beacon", "ibeacon:x:1:2", "--department", "10"], "The value 'ibeacon:x:1:2' is invalid for '--beacon <KEY|member:ID>'"),
            (["--beacon", "\(key):3", "--department", "10"], "is invalid for '--beacon <KEY|member:ID>'"),
            (["--beacon", key, "--department", "ten"], "The value 'ten' is invalid for '--department <D|none|stop>'"),
            (["--beacon", key, "--department", "65536"], "The value '65536' is invalid for '--department <D|none|stop>'"),
            (["--beacon", key, "--department", "+1"], "The value '+1' is invalid for '--department <D|none|stop>'"),
            (["--beacon", key, "--department", "Stop"], "The value 'Stop' is invalid for '--department <D|none|stop>'"),
            (["--beacon", key], "Missing expected argument '--department <D|none|stop>'"),
            (["--department", "10"], "Missing expected argument '--beacon <KEY|member:ID>'"),
            (["--beacon", "member:", "--department", "10"], "member:ID needs a member id of 1-64 characters"),
        ])
    func refused(arguments: [String], message: String) {
        do {
            _ = try BeaconCoordinator.parseAsRoot(["survey", "mark", "--store", "1"] + arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            let text = BeaconCoordinator.message(for: error)
            #expect(text.hasPrefix(message) || text.contains(message), "\(text)")
            #expect(!text.contains("\n"), "\(text)")
            #expect(BeaconCoordinator.exitCode(for: error) == .validationFailure)
        }
    }

    /// A command with subcommands has no final line break in its help (the program adds it when printing).
    @Test("--help is pinned for mark (the group's is pinned with fit, show and clear)")
    func help() {
        #expect(BeaconCoordinator.helpMessage(for: SurveyMarkCommand.self, columns: 120) == Self.markHelp + "\n")
    }

    static let markHelp = #"""
        OVERVIEW: Publish one survey mark: where the surveyor carrying a beacon is now.

        The store's coordinators keep the beacon's readings as samples of the marked department until the next mark of that
        beacon: mark each department as you walk into it, none between departments, stop at the end. The command exits 0 once
        the broker has acknowledged the mark (QoS 1; it prints the topic and the payload), and 1 when the broker cannot be
        reached or does not acknowledge it within 10 s. The broker password comes from --password-file or the
        BEACONMESH_PASSWORD environment variable.

        USAGE: beacon-coordinator survey mark --store <N> --beacon <KEY|member:ID> --department <D|none|stop> [--broker <URL>] [--username <U>] [--password-file <F>] [--cafile <F>]

        OPTIONS:
          --store <N>             The store being surveyed (0-65535).
          --beacon <KEY|member:ID>
                                  The beacon the surveyor carries: ibeacon:<uuid>:<major>:<minor>, altbeacon:…, eddystone:… or
                                  eddystone-eid:…; or member:ID for the beacons the registry gives that member (EID fobs
                                  included).
          --department <D|none|stop>
                                  Where the surveyor is now: a department number, none (between departments) or stop (the
                                  survey of this beacon ends).
          --broker <URL>          Broker URL: mqtt://host:port or mqtts://host:port (default mqtt://127.0.0.1:1883).
          --username <U>          Broker user name.
          --password-file <F>     File holding the broker password (or set BEACONMESH_PASSWORD).
          --cafile <F>            CA certificate file to verify an mqtts:// broker (default: the system store).
          --version               Show the version.
          -h, --help              Show help information.
        """#
}
