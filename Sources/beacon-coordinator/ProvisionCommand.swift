import ArgumentParser
import BeaconMeshCoordinator
import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `beacon-coordinator provision …`: broker credentials and ACL rules for nodes, monitors, coordinators and member
/// apps, written into mosquitto's password and ACL files (run it on the broker's machine, as root).
struct ProvisionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "provision",
        abstract: "Create or revoke broker credentials (password + ACL rules) for nodes, monitors, coordinators and member apps.",
        discussion: """
            User names: node-<store>-<department>-<node> (node-1-10-a), monitor-<store> (monitor-1), till-<store> \
            (till-9, from monitor --till), coordinator-<id> (coordinator-backoffice-1), bridge-store-<store> (on the \
            head-office broker), dashboard-<id> (dashboard-hq, which writes only survey marks), fleet-<name> (fleet-hq, the only one that writes node configs), and for a member's app the member id itself (ana), because the ACL patterns \
            (beaconmesh/v1/members/%u/offers, …/members/%u/checkins, …/stores/+/members/%u/ranging) put the user name \
            into the topic.
            Each credential gets a random password in <credentials>/<user>.pass (mode 0600); hand that file to the \
            program (--password-file, or passwordFile: in its config). Running a command again changes nothing; \
            --rotate draws a new password. The broker reads the files only when reloaded: add --reload, or run \
            `systemctl reload mosquitto` afterwards.
            """,
        subcommands: [
            Node.self, Monitor.self, Coordinator.self, Member.self, Bridge.self, Dashboard.self, Fleet.self, Revoke.self, Database.self,
        ])

    /// Where the credentials go, and how the broker is told.
    struct Files: ParsableArguments {
        @Option(help: ArgumentHelp("mosquitto's password_file.", valueName: "FILE"))
        var passwords = ProvisioningFiles.defaultPasswordFile

        @Option(help: ArgumentHelp("mosquitto's acl_file.", valueName: "FILE"))
        var acl = ProvisioningFiles.defaultACLFile

        @Option(help: ArgumentHelp("Folder of credential files (<user>.pass, mode 0600).", valueName: "DIR"))
        var credentials = ProvisioningFiles.defaultCredentials

        @Option(help: ArgumentHelp("First level of every topic.", valueName: "ROOT"))
        var topicRoot = Topics.defaultRoot

        @Option(help: ArgumentHelp("System user who gets node and coordinator credential files (when run as root).", valueName: "USER"))
        var owner = "beaconmesh"

        @Flag(help: "Reload mosquitto afterwards (systemctl reload mosquitto, or SIGHUP to --broker-pid-file).")
        var reload = false

        @Option(help: ArgumentHelp("With --reload: send SIGHUP to the pid in this file instead of using systemctl.", valueName: "FILE"))
        var brokerPidFile: String?

        func validate() throws {
            if brokerPidFile != nil && !reload { throw ValidationError("--broker-pid-file needs --reload") }
            if topicRoot.isEmpty || topicRoot.contains(where: { "/+#".contains($0) }) {
                throw ValidationError("--topic-root '\(topicRoot)' must be one topic level (no '/', '+' or '#')")
            }
        }

        var files: ProvisioningFiles {
            var files = ProvisioningFiles(passwordFile: passwords, aclFile: acl, credentials: credentials)
            files.topicRoot = topicRoot
            files.serviceUser = owner
            return files
        }

        /// Reloads the broker if asked, else says how to; throws a `UsageError` naming what failed.
        func applyToBroker(changed: Bool) throws {
            guard reload else {
                if changed {
                    CommandLineProgram.printLine("The broker sees this after a reload: sudo systemctl reload mosquitto (or add --reload).")
                }
                return
            }
            if let brokerPidFile {
                let text = (try? String(contentsOfFile: brokerPidFile, encoding: .utf8)) ?? ""
                guard let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0 else {
                    throw UsageError("cannot read a process id from \(brokerPidFile)")
                }
                guard kill(pid, SIGHUP) == 0 else {
                    throw UsageError("cannot signal mosquitto (pid \(pid)): \(String(cString: strerror(errno)))")
                }
            } else {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["systemctl", "reload", "mosquitto"]
                do {
                    try process.run()
                } catch {
                    throw UsageError("cannot run systemctl to reload mosquitto: \(error.localizedDescription)")
                }
                process.waitUntilExit()
                guard process.terminationStatus == 0 else {
                    throw UsageError("`systemctl reload mosquitto` failed (exit \(process.terminationStatus)); is the broker running?")
                }
            }
            CommandLineProgram.printLine("mosquitto reloaded.")
        }

        /// Provisions `role`, prints what happened and what to do next, and reloads the broker if asked.
        func provision(_ role: ProvisioningRole, rotate: Bool, use: (_ username: String, _ file: String) -> String) throws {
            let outcome: ProvisioningFiles.Outcome
            do {
                outcome = try files.provision(role, rotate: rotate)
            } catch {
                throw UsageError(error.description)
            }
            let verb =
                switch outcome.password {
                case .created: "created"
                case .rotated: "new password"
                case .kept: "unchanged, password kept"
                case .restored: "password entry restored from its credential file"
                }
            CommandLineProgram.printLine("\(outcome.username): \(verb); password in \(outcome.credentialFile)")
            CommandLineProgram.printLine("  " + use(outcome.username, outcome.credentialFile))
            try applyToBroker(changed: outcome.password != .kept || outcome.aclChanged)
        }
    }

    struct Node: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A scanner's credential: it may write only its own node's sightings, status and health.")
        @OptionGroup var files: Files
        @Option(help: "Store number (0-65535).") var store: UInt16
        @Option(help: "Department number (0-65535).") var department: UInt16
        @Option(help: "Node id within the department: 1-32 of a-z, 0-9, -.") var node: String = "a"
        @Flag(help: "Draw a new password even if the credential exists.") var rotate = false

        func validate() throws {
            if !NodeAddress.isValidNodeID(node) { throw ValidationError("--node '\(node)' must be 1-32 of a-z, 0-9 and -") }
        }

        func run() throws {
            let address = NodeAddress(store: store, department: department, node: node)!
            try files.provision(
                .node(address), rotate: rotate,
                use: { "scanner config: username: \($0), passwordFile: \($1) (copy the file to the node, owner beaconmesh, mode 0600)" })
        }
    }

    struct Monitor: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "A monitor's credential: it may read everything of one store and write nothing; with --till also that store's check-ins.")
        @OptionGroup var files: Files
        @Option(help: "Store number (0-65535).") var store: UInt16
        @Flag(help: "A till (user till-<store>): it may also publish the store's check-in requests.") var till = false
        @Flag(help: "Draw a new password even if the credential exists.") var rotate = false

        func run() throws {
            if till {
                try files.provision(
                    .till(store: store), rotate: rotate,
                    use: {
                        "on the till: beacon-monitor --store \(store) --till DEPT --username \($0) --password-file \($1)"
                    })
            } else {
                try files.provision(
                    .monitor(store: store), rotate: rotate,
                    use: {
                        "on the shop floor: beacon-monitor --store \(store) --username \($0) --password-file \($1)"
                    })
            }
        }
    }

    struct Coordinator: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "A coordinator's credential: its stores' node topics, ranging and check-ins in; events, presence, alerts, offers, check-ins, registry events and its own status out."
        )
        @OptionGroup var files: Files
        @Option(help: "The coordinator's id (its config's id:; default the host name).") var id: String?
        @Option(name: .customLong("store"), help: "A store it serves (repeatable; none: every store, for head office).")
        var stores: [UInt16] = []
        @Flag(help: "Draw a new password even if the credential exists.") var rotate = false

        func run() throws {
            let hostName = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "coordinator"
            let role = ProvisioningRole.coordinator(id: id ?? hostName.lowercased(), stores: stores)
            try files.provision(role, rotate: rotate, use: { "coordinator config: broker: {username: \($0), passwordFile: \($1)}" })
        }
    }

    /// `provision database`: the PostgreSQL login role of a chain's coordinators (head office runs it once, as the
    /// database's owner; the password file goes to each store as `databasePasswordFile`).
    struct Database: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "A chain registry's PostgreSQL role for coordinators: migrates the schema as the owner, then grants the role rows only (no DDL, no other schema).",
            discussion: """
                Connect as the database's owner (its password in BEACONMESH_DB_PASSWORD); the role's new password is \
                written to <credentials>/<role>.db.pass (mode 0600).
                """)
        @Option(help: ArgumentHelp("The registry, as its owner: postgres://OWNER@HOST:PORT/DB[?sslmode=require].", valueName: "URL"))
        var db: String
        @Option(help: ArgumentHelp("The role to make or update.", valueName: "NAME")) var role = "beaconmesh_coordinator"
        @Option(help: ArgumentHelp("Folder for the role's password file.", valueName: "DIR"))
        var credentials = ProvisioningFiles.defaultCredentials

        func validate() throws {
            guard case .postgres = try? RegistryLocation(db) else {
                throw ValidationError("--db '\(db)' must be a postgres:// URL (a SQLite file needs no role)")
            }
        }

        func run() throws {
            let password = ProvisioningPassword.make()
            do {
                guard let registry = try RegistryLocation(db).open() as? PostgresRegistry else { return }
                try registry.provisionRole(role, password: password)
            } catch {
                throw UsageError("\(error)")
            }
            let file = credentials + "/" + role + ".db.pass"
            try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
            guard
                FileManager.default.createFile(atPath: file, contents: Data((password + "\n").utf8), attributes: [.posixPermissions: 0o600])
            else { throw UsageError("cannot write \(file)") }
            print("role \(role): coordinator config: database: postgres://\(role)@HOST:PORT/DB, databasePasswordFile: \(file)")
        }
    }

    struct Member: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "A member app's credential: user name = member id; it may publish only its own ranging reports and read only its own offers and check-ins."
        )
        @OptionGroup var files: Files
        @Argument(help: "The member id (1-64 of a-z, A-Z, 0-9, '.', '_', '-').") var id: String
        @Flag(help: "Draw a new password even if the credential exists.") var rotate = false

        func run() throws {
            try files.provision(
                .member(id: id), rotate: rotate,
                use: {
                    let topics = Topics(root: files.topicRoot)
                    return
                        "member app: user name \($0), the password is in \($1); it may publish only \(topics.rangingFilter(store: nil, member: $0)) and read only \(topics.offers(member: $0)) and \(topics.checkins(member: $0))"
                })
        }
    }

    struct Bridge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "On the head-office broker: a store broker's bridge, which forwards that store's topics and takes offers and check-ins back."
        )
        @OptionGroup var files: Files
        @Option(help: "Store number (0-65535).") var store: UInt16
        @Flag(help: "Draw a new password even if the credential exists.") var rotate = false

        func run() throws {
            try files.provision(
                .bridge(store: store), rotate: rotate,
                use: {
                    "store broker's bridge (deploy/bridge/store-bridge.conf): remote_username \($0), remote_password from \($1)"
                })
        }
    }

    struct Dashboard: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "A web dashboard's credential: it may read its stores' presence, events, alerts, node status and health and sightings (the survey page's beacons heard) and the coordinators' status and health, and write only their survey marks; no --store: every store (head office)."
        )
        @OptionGroup var files: Files
        @Option(help: "The dashboard's id: user name dashboard-<id>.") var id = "hq"
        @Option(name: .customLong("store"), help: "A store it shows (repeatable; none: every store, for head office).")
        var stores: [UInt16] = []
        @Flag(help: "Draw a new password even if the credential exists.") var rotate = false

        func run() throws {
            try files.provision(
                .dashboard(id: id, stores: stores), rotate: rotate,
                use: {
                    "dashboard: beacon-dashboard --username \($0) --password-file \($1) --users FILE (deploy/systemd/beacon-dashboard.service)"
                })
        }
    }

    struct Fleet: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Head office's fleet credential: the only one that may publish node configs (nodes set); it reads them and every node's status and health (nodes list), nothing else."
        )
        @OptionGroup var files: Files
        @Option(help: "The fleet tooling's name: user name fleet-<name>.") var name: String
        @Flag(help: "Draw a new password even if the credential exists.") var rotate = false

        func run() throws {
            try files.provision(
                .fleet(name: name), rotate: rotate,
                use: { "fleet: beacon-coordinator nodes list|set --broker URL --username \($0) --password-file \($1)" })
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a credential: its password entry, ACL block and credential file.")
        @OptionGroup var files: Files
        @Argument(help: "The user name (node-1-10-a, monitor-1, till-9, coordinator-ID or a member id).") var name: String

        func run() throws {
            let revocation: ProvisioningFiles.Revocation
            do {
                revocation = try files.files.revoke(name)
            } catch {
                throw UsageError(error.description)
            }
            guard revocation.removedAnything else {
                CommandLineProgram.printLine("\(name): no such credential; nothing to revoke")
                return
            }
            let removed = [
                revocation.passwordEntry ? "password entry" : nil, revocation.aclBlock ? "ACL block" : nil,
                revocation.credentialFile ? "credential file" : nil,
            ].compactMap { $0 }
            CommandLineProgram.printLine("\(name): revoked (\(removed.joined(separator: ", ")) removed)")
            try files.applyToBroker(changed: true)
        }
    }
}
