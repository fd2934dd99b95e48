import ArgumentParser
import BeaconMeshService
import Foundation
import Logging
import Testing

@testable import beacon_coordinator

@Suite("beacon-coordinator command line")
struct BeaconCoordinatorCommandTests {
    @Test("run: the config, log level and health interval parse without running")
    func run() throws {
        let command = try #require(
            try BeaconCoordinator.parseAsRoot([
                "run", "--config", "/etc/beaconmesh/coordinator.yaml", "--log-level", "debug", "--health-interval", "10s",
            ]) as? RunCommand)
        #expect(command.config == "/etc/beaconmesh/coordinator.yaml")
        #expect(command.logLevel == .debug)
        #expect(command.healthInterval.duration == .seconds(10))
        let defaults = try #require(try BeaconCoordinator.parseAsRoot(["run", "--config", "c.yaml"]) as? RunCommand)
        #expect(defaults.logLevel == .info && defaults.healthInterval.duration == .seconds(30))
    }

    @Test("members add: id, name, drink, beacons, photo and database")
    func membersAdd() throws {
        let command = try #require(
            try BeaconCoordinator.parseAsRoot([
                "members", "add", "ana", "--name", "Ana", "--drink", "latte", "--beacon",
                "ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:7",
                "--beacon", "ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:8", "--db", "/var/lib/beaconmesh/members.sqlite",
            ]) as? MembersCommand.Add)
        #expect(command.id == "ana" && command.name == "Ana" && command.favoriteDrink == "latte")
        #expect(command.beacons.count == 2)
        #expect(command.database.db == "/var/lib/beaconmesh/members.sqlite")
    }

    @Test("provision node: typed store and department, files with their defaults")
    func provisionNode() throws {
        let command = try #require(
            try BeaconCoordinator.parseAsRoot([
                "provision", "node", "--store", "1", "--department", "10", "--node", "door-2", "--reload",
            ]) as? ProvisionCommand.Node)
        #expect(command.store == 1 && command.department == 10 && command.node == "door-2")
        #expect(command.files.reload && command.files.topicRoot == "beaconmesh")
    }

    @Test("promos check: the config")
    func promosCheck() throws {
        let command = try #require(try BeaconCoordinator.parseAsRoot(["promos", "check", "--config", "c.yaml"]) as? PromosCommand.Check)
        #expect(command.config == "c.yaml")
    }

    @Test(
        "a wrong value or a missing one is refused in one line naming it",
        arguments: [
            (["run"], "Missing expected argument '--config <FILE>'"),
            (
                ["run", "--config", "c.yaml", "--health-interval", "50ms"],
                "--health-interval '50ms' must be a duration of at least 100ms, such as 30s"
            ),
            (["run", "--config", "c.yaml", "--health-interval", "soon"], "The value 'soon' is invalid for '--health-interval <DURATION>'"),
            (["run", "--config", "c.yaml", "--log-level", "loud"], "The value 'loud' is invalid for '--log-level <log-level>'"),
            (["members", "list"], "Missing expected argument '--db <FILE|URL>'"),
            (
                ["provision", "node", "--store", "1", "--department", "70000"],
                "The value '70000' is invalid for '--department <department>'"
            ),
            (
                ["provision", "node", "--store", "1", "--department", "2", "--node", "Door 2"],
                "--node 'Door 2' must be 1-32 of a-z, 0-9 and -"
            ),
            (["provision", "monitor", "--store", "1", "--broker-pid-file", "/run/mosquitto.pid"], "--broker-pid-file needs --reload"),
            (["frobnicate"], "Unexpected argument 'frobnicate'"),
            (
                ["report", "--db", "x.sqlite", "--store", "1", "--from", "yesterday"],
                "'from' must be epoch milliseconds or a local date YYYY-MM-DD[THH:MM] (found 'yesterday')"
            ),
            (
                ["report", "--db", "x.sqlite", "--store", "1", "--from", "2025-02-30"],
                "'from' must be epoch milliseconds or a local date YYYY-MM-DD[THH:MM] (found '2025-02-30')"
            ),
            (
                ["report", "--db", "x.sqlite", "--store", "1", "--from", "2025-03-02", "--to", "2025-03-01"],
                "the period is empty: 'from' (\(localMidnight(2025, 3, 2))) must be before 'to' (\(localMidnight(2025, 3, 1)))"
            ),
            (["report", "--db", "x.sqlite", "--store", "70000"], "The value '70000' is invalid for '--store <store>'"),
        ])
    func wrongValue(arguments: [String], message: String) {
        do {
            _ = try BeaconCoordinator.parseAsRoot(arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            #expect(BeaconCoordinator.message(for: error) == message)
            #expect(BeaconCoordinator.exitCode(for: error) == .validationFailure)
        }
    }

    /// A command with subcommands has no final line break in its help (the program adds it when printing).
    @Test("--help is pinned, for the program and each subcommand")
    func help() {
        #expect(BeaconCoordinator.helpMessage(columns: 120) == Self.help)
        #expect(BeaconCoordinator.helpMessage(for: RunCommand.self, columns: 120) == Self.runHelp + "\n")
        #expect(BeaconCoordinator.helpMessage(for: MembersCommand.self, columns: 120) == Self.membersHelp)
        #expect(BeaconCoordinator.helpMessage(for: ProvisionCommand.self, columns: 120) == Self.provisionHelp)
        #expect(BeaconCoordinator.helpMessage(for: PromosCommand.self, columns: 120) == Self.promosHelp)
        #expect(BeaconCoordinator.helpMessage(for: ReportCommand.self, columns: 120) == Self.reportHelp + "\n")
    }

    static let help = #"""
        OVERVIEW: Works out who is in which department, greets members, fires promos and publishes per-store channels.

        USAGE: beacon-coordinator <subcommand>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          run                     Run the coordinator with a YAML config (see CONTRACT: Coordinator config).
          members                 List, add, remove, import, export, forget or purge loyalty members.
          provision               Create or revoke broker credentials (password + ACL rules) for nodes, monitors, coordinators
                                  and member apps.
          promos                  Check the department promos of a config.
          report                  A store's shopper analytics for a period (default the last 7 days), as tables or JSON.
          survey                  Survey a store: mark where a carried beacon is or import a recorded walk, then learn, show or
                                  clear its fit.
          webhooks                Try the webhook endpoints of a config.
          nodes                   List the nodes the broker holds a status of, or change their settings live (node config).

          See 'beacon-coordinator help <subcommand>' for detailed help.
        """#

    static let reportHelp = #"""
        OVERVIEW: A store's shopper analytics for a period (default the last 7 days), as tables or JSON.

        USAGE: beacon-coordinator report --db <FILE|URL> --store <store> [--from <TIME>] [--to <TIME>] [--json]

        OPTIONS:
          --db <FILE|URL>         The config's database: a SQLite file, or postgres://USER@HOST:PORT/DB[?sslmode=require]
                                  (password from BEACONMESH_DB_PASSWORD).
          --store <store>         The store's number.
          --from <TIME>           Start of the period: epoch ms or a local YYYY-MM-DD[THH:MM].
          --to <TIME>             End of the period (not included): epoch ms or a local YYYY-MM-DD[THH:MM].
          --json                  Print the contract's analytics object as JSON.
          --version               Show the version.
          -h, --help              Show help information.
        """#

    static let runHelp = #"""
        OVERVIEW: Run the coordinator with a YAML config (see CONTRACT: Coordinator config).

        USAGE: beacon-coordinator run --config <FILE> [--log-level <log-level>] [--health-interval <DURATION>]

        OPTIONS:
          --config <FILE>         The coordinator's YAML config.
          --log-level <log-level> Log level: trace, debug, info, notice, warning, error or critical. (default: info)
          --health-interval <DURATION>
                                  How often to publish the coordinator's health. (default: 30s)
          --version               Show the version.
          -h, --help              Show help information.
        """#

    static let membersHelp = #"""
        OVERVIEW: List, add, remove, import, export, forget or purge loyalty members.

        USAGE: beacon-coordinator members <subcommand>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          list                    Print every member as a table.
          add                     Add a member, or update the one with this id.
          remove                  Remove a member from the registry.
          import                  Merge a members CSV by id: larger visits and later lastVisitAt win; a bad row writes nothing.
          export                  Write every member as the contract's CSV.
          forget                  Erase a member with their beacons, visits and offers, leaving no trace in the database.
          purge                   Finish erasing forgotten members: rewrite what holds deleted rows (PostgreSQL: as owner).

          See 'beacon-coordinator help members <subcommand>' for detailed help.
        """#

    static let provisionHelp = #"""
        OVERVIEW: Create or revoke broker credentials (password + ACL rules) for nodes, monitors, coordinators and member apps.

        User names: node-<store>-<department>-<node> (node-1-10-a), monitor-<store> (monitor-1), till-<store> (till-9, from
        monitor --till), coordinator-<id> (coordinator-backoffice-1), bridge-store-<store> (on the head-office broker),
        dashboard-<id> (dashboard-hq, which writes only survey marks), fleet-<name> (fleet-hq, the only one that writes node
        configs), and for a member's app the member id itself (ana), because the ACL patterns (beaconmesh/v1/members/%u/offers,
        …/members/%u/checkins, …/stores/+/members/%u/ranging) put the user name into the topic.
        Each credential gets a random password in <credentials>/<user>.pass (mode 0600); hand that file to the program
        (--password-file, or passwordFile: in its config). Running a command again changes nothing; --rotate draws a new
        password. The broker reads the files only when reloaded: add --reload, or run `systemctl reload mosquitto` afterwards.

        USAGE: beacon-coordinator provision <subcommand>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          node                    A scanner's credential: it may write only its own node's sightings, status and health.
          monitor                 A monitor's credential: it may read everything of one store and write nothing; with --till
                                  also that store's check-ins.
          coordinator             A coordinator's credential: its stores' node topics, ranging and check-ins in; events,
                                  presence, alerts, offers, check-ins, registry events and its own status out.
          member                  A member app's credential: user name = member id; it may publish only its own ranging reports
                                  and read only its own offers and check-ins.
          bridge                  On the head-office broker: a store broker's bridge, which forwards that store's topics and
                                  takes offers and check-ins back.
          dashboard               A web dashboard's credential: it may read its stores' presence, events, alerts, node status
                                  and health and sightings (the survey page's beacons heard) and the coordinators' status and
                                  health, and write only their survey marks; no --store: every store (head office).
          fleet                   Head office's fleet credential: the only one that may publish node configs (nodes set); it
                                  reads them and every node's status and health (nodes list), nothing else.
          revoke                  Remove a credential: its password entry, ACL block and credential file.
          database                A chain registry's PostgreSQL role for coordinators: migrates the schema as the owner, then
                                  grants the role rows only (no DDL, no other schema).

          See 'beacon-coordinator help provision <subcommand>' for detailed help.
        """#

    static let promosHelp = #"""
        OVERVIEW: Check the department promos of a config.

        USAGE: beacon-coordinator promos <subcommand>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          check                   Validate the promos (dates, hours, audiences; errors name the line) and print which would
                                  fire now.

          See 'beacon-coordinator help promos <subcommand>' for detailed help.
        """#
}

/// Epoch milliseconds of local midnight of a date (the report's `YYYY-MM-DD`).
private func localMidnight(_ year: Int, _ month: Int, _ day: Int) -> Int64 {
    let date = Calendar.current.date(from: DateComponents(year: year, month: month, day: day)) ?? Date()
    return Int64(date.timeIntervalSince1970 * 1000)
}
