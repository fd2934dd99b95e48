import ArgumentParser
import BeaconMeshCoordinator
import BeaconMeshCore
import BeaconMeshFobs
import BeaconMeshRegistry
import BeaconMeshService
import Foundation

/// `beacon-coordinator members …`: the loyalty registry, from the command line. A running coordinator sees the
/// changes within seconds, without a restart.
struct MembersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "members", abstract: "List, add, remove, import, export, forget or purge loyalty members.",
        subcommands: [List.self, Add.self, Remove.self, Import.self, Export.self, Forget.self, Purge.self])

    /// The registry every members subcommand works on.
    struct Database: ParsableArguments {
        @Option(
            name: .long,
            help: ArgumentHelp(
                "The config's database: a SQLite file, or postgres://USER@HOST:PORT/DB[?sslmode=require] (password from BEACONMESH_DB_PASSWORD).",
                valueName: "FILE|URL"))
        var db: String

        func validate() throws {
            do {
                _ = try RegistryLocation(db)
            } catch {
                throw ValidationError(error.description)
            }
        }

        func open() throws -> any MemberRegistry {
            do {
                return try RegistryLocation(db).open()
            } catch {
                throw UsageError(error.description)
            }
        }

        /// Runs `body` on the registry (members and store surveys); a failure names the database and says why.
        func use<T>(_ body: (any MemberRegistry) throws -> T) throws -> T {
            let registry = try open()
            do {
                return try body(registry)
            } catch let error as UsageError {
                throw error
            } catch {
                throw UsageError("\(registry.location): \(registry.describe(error))")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print every member as a table.")
        @OptionGroup var database: Database

        func run() throws {
            let members = try database.use { try $0.allMembers() }
            print(MemberTable.render(members))
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a member, or update the one with this id.")
        @OptionGroup var database: Database
        @Argument(help: "The member id.") var id: String
        @Option(help: "The member's name.") var name: String
        @Option(name: .customLong("drink"), help: "Their favourite drink.") var favoriteDrink: String?
        @Option(name: .customLong("beacon"), help: "A beacon key of theirs (repeatable).") var beacons: [String] = []
        @Option(help: ArgumentHelp("A PNG or JPEG photo.", valueName: "FILE")) var photo: String?
        @Option(
            help: ArgumentHelp(
                "Their Eddystone-EID fob: its 16-byte identity key in hex and its rotation exponent K (0-15, default 10).",
                valueName: "HEX32[:K]"))
        var eid: String?
        @Option(
            name: .customLong("eid-counter"),
            help: "The fob's time counter now, read with the fob maker's tool (default: it counts seconds since the Unix epoch).")
        var eidCounter: UInt32?
        @OptionGroup var secrets: SecretsKeyOption

        func validate() throws {
            for beacon in beacons where BeaconKey(beacon.lowercased()) == nil {
                throw ValidationError("'\(beacon)' is not a beacon key (ibeacon:<uuid>:<major>:<minor>, …)")
            }
            if let eid, EIDCell(eid, offsetAllowed: false) == nil { throw ValidationError("--eid must be \(EIDCell.expected)") }
            if eidCounter != nil, eid == nil { throw ValidationError("--eid-counter needs --eid") }
            if eid != nil, secrets.secretsKey == nil {
                throw ValidationError("--eid needs --secrets-key FILE (the config's secretsKeyFile): fob keys are stored sealed under it")
            }
        }

        func run() throws {
            var photoURL: String?
            if let photo {
                do {
                    photoURL = try PhotoThumbnail.dataURL(fromFile: photo)
                } catch {
                    throw UsageError(error.description)
                }
            }
            let existing = try database.use { try $0.member(id: id) }
            var profile = existing?.profile ?? MemberProfile(id: id, name: name)
            profile.name = name
            if let favoriteDrink { profile.favoriteDrink = favoriteDrink }
            if let photoURL { profile.photo = photoURL }
            let keys = beacons.compactMap { BeaconKey($0.lowercased()) }
            var record = MemberRecord(
                profile: profile, beacons: keys.isEmpty ? existing?.beacons ?? [] : keys,
                createdAt: existing?.createdAt ?? Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)))
            if let eid, let cell = EIDCell(eid, offsetAllowed: false) {
                let key = try database.use { try secrets.key(for: $0) }
                record.fob = MemberFob(
                    sealing: cell, for: id, under: key, counterNow: eidCounter, now: Int64(Date().timeIntervalSince1970))
            }
            try database.use { try $0.upsert(record) }
            print(existing == nil ? "added \(id)" : "updated \(id)")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a member from the registry.")
        @OptionGroup var database: Database
        @Argument(help: "The member id.") var id: String

        func run() throws {
            guard try database.use({ try $0.remove(id: id) }) else { throw UsageError("no member with id '\(id)'") }
            print("removed \(id)")
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Merge a members CSV by id: larger visits and later lastVisitAt win; a bad row writes nothing.")
        @OptionGroup var database: Database
        @Argument(help: ArgumentHelp("The members CSV.", valueName: "FILE.csv")) var file: String
        @OptionGroup var secrets: SecretsKeyOption

        func run() throws {
            let contents: MembersCSV.File
            do {
                contents = try MembersCSV.read(path: file)
            } catch {
                throw UsageError(error.description)
            }
            let key: SecretsKey? = try contents.fobs.isEmpty ? nil : database.use { try secrets.key(for: $0) }
            let records = try MembersCommand.sealing(contents, with: key, missing: "--secrets-key FILE")
            let summary = try database.use { try $0.merge(records) }
            print("\(file): \(summary)")
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write every member as the contract's CSV.")
        @OptionGroup var database: Database
        @Argument(help: ArgumentHelp("Where to write the CSV.", valueName: "FILE.csv")) var file: String

        func run() throws {
            let members = try database.use { try $0.allMembers() }
            try MembersCSV.write(members, to: file)
            print("\(file): \(members.count) members")
        }
    }

    struct Forget: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Erase a member with their beacons, visits and offers, leaving no trace in the database.")
        @OptionGroup var database: Database
        @Argument(help: "The member id.") var id: String

        func run() throws {
            guard try database.use({ try $0.forget(id: id) }) else { throw UsageError("no member with id '\(id)'") }
            print("forgot \(id)")
        }
    }

    struct Purge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Finish erasing forgotten members: rewrite what holds deleted rows (PostgreSQL: as owner).",
            discussion: """
                SQLite: the file and its write-ahead log (forget does it too). PostgreSQL: VACUUM FULL of the registry's \
                tables and statistics, then a new write-ahead log file and a checkpoint; needs wal_recycle = off, the \
                pg_checkpoint role and EXECUTE on pg_switch_wal() (deploy/postgres/headoffice.sql). Run it after the \
                coordinators have announced the forgetting (member-forgotten), e.g. hourly.
                """)
        @OptionGroup var database: Database

        func run() throws {
            let waiting = try database.use { try $0.purgeErased() }
            if waiting > 0 {
                print(
                    "purged; \(waiting) forgotten member(s) not yet announced by a coordinator: their ids stay until then, run it again after"
                )
            } else {
                print("purged: nothing of forgotten members is left in the database")
            }
        }
    }
}
