import ArgumentParser
import BeaconMeshDashboard
import BeaconMeshService

/// `beacon-dashboard users …`: the users file that `--users` reads.
struct UsersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "Manage the dashboard's users file (--users).",
        subcommands: [Add.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a user to the users file, or change their password and stores.",
            discussion: """
                Asks for the password twice on a terminal; otherwise reads it from the first line of standard input \
                (echo "$PASSWORD" | beacon-dashboard users add …). Only a salted bcrypt hash of it is written. The file \
                is made if missing, with mode 0600; restart the dashboard to take the change in.
                """)

        @Argument(help: "The user's name, as they type it at sign-in.")
        var name: String

        @Option(help: ArgumentHelp("The stores they see: store numbers (1,2) or all (head office).", valueName: "1,2|all"))
        var stores: StoreAccess

        @Option(help: ArgumentHelp("The users file.", valueName: "FILE"))
        var file: String

        func validate() throws {
            if let problem = DashboardUser.problem(withName: name) { throw ValidationError("'\(name)': \(problem)") }
        }

        func run() throws {
            let password = try PasswordPrompt.read(for: name)
            if let problem = PasswordHash.problem(withPassword: password) { throw UsageError(problem) }
            let user = DashboardUser(name: name, passwordHash: PasswordHash.make(password), stores: stores)
            let change: UsersFile.Change
            do {
                change = try UsersFile.add(user, to: file)
            } catch {
                throw UsageError(error.description)
            }
            let verb = change == .added ? "added" : "password and stores replaced"
            CommandLineProgram.printLine("\(name): \(verb) in \(file) (stores: \(stores)); restart the dashboard to take it in.")
        }
    }
}

/// `--stores 1,2` or `--stores all`.
extension StoreAccess: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(argument)
    }
}
