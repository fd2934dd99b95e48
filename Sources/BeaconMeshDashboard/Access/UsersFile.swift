import BeaconMeshService
import Foundation
import Yams

/// The dashboard's users file (`--users FILE`): a YAML list of `{name, passwordHash, stores: [1, 2] | all}`.
///
/// Reading refuses the whole file on any problem (an unknown key, a name twice, a hash that is not bcrypt, a store
/// that is not 0–65535), naming the line. `beacon-dashboard users add` writes it back in one form, readable by
/// people, through a temporary file renamed into place with mode 0600 (it holds password hashes).
public enum UsersFile {
    /// Reads the users of `path`.
    public static func load(path: String) throws(UsersFileError) -> [DashboardUser] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw UsersFileError(file: path, message: "cannot read the users file (\(error.localizedDescription))")
        }
        return try parse(text, file: path)
    }

    /// Parses the users file's text; `file` only names the source in errors. An empty file has no users.
    public static func parse(_ text: String, file: String) throws(UsersFileError) -> [DashboardUser] {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw UsersFileError(file: file, message: "not valid YAML (\(error))")
        }
        guard let root else { return [] }
        func fail(_ node: Node, _ message: String) -> UsersFileError {
            UsersFileError(file: file, line: node.mark.map { $0.line }, message: message)
        }
        guard let list = root.sequence else { throw fail(root, "the users file must be a list of {name, passwordHash, stores}") }
        var users: [DashboardUser] = []
        var lines: [String: Int] = [:]
        for entry in list {
            guard let mapping = entry.mapping else { throw fail(entry, "each user must be a mapping {name, passwordHash, stores}") }
            var fields: [String: Node] = [:]
            for (key, value) in mapping {
                guard let name = key.string, ["name", "passwordHash", "stores"].contains(name) else {
                    throw fail(key, "unknown key '\(key.string ?? "?")' (a user has name, passwordHash and stores)")
                }
                fields[name] = value
            }
            guard let nameNode = fields["name"], let name = nameNode.scalar?.string else { throw fail(entry, "a user has no name") }
            if let problem = DashboardUser.problem(withName: name) { throw fail(nameNode, "user '\(name)': \(problem)") }
            if let first = lines[name] { throw fail(nameNode, "user '\(name)' is already listed on line \(first)") }
            guard let hashNode = fields["passwordHash"], let hash = hashNode.scalar?.string, PasswordHash.looksLikeBcrypt(hash) else {
                throw fail(
                    fields["passwordHash"] ?? entry,
                    "user '\(name)': passwordHash must be a bcrypt hash ($2b$…); make one with beacon-dashboard users add")
            }
            guard let storesNode = fields["stores"] else {
                throw fail(entry, "user '\(name)' has no stores (a list such as [1, 2], or all)")
            }
            let stores: StoreAccess
            if let scalar = storesNode.scalar?.string {
                guard scalar == "all" else {
                    throw fail(storesNode, "user '\(name)': stores must be a list such as [1, 2], or all (found '\(scalar)')")
                }
                stores = .all
            } else if let sequence = storesNode.sequence {
                var numbers: Set<UInt16> = []
                for item in sequence {
                    guard let text = item.scalar?.string, let number = UInt16(text) else {
                        throw fail(item, "user '\(name)': '\(item.scalar?.string ?? "?")' is not a store number (0-65535)")
                    }
                    numbers.insert(number)
                }
                guard !numbers.isEmpty else { throw fail(storesNode, "user '\(name)': the stores list is empty") }
                stores = .stores(numbers)
            } else {
                throw fail(storesNode, "user '\(name)': stores must be a list such as [1, 2], or all")
            }
            lines[name] = nameNode.mark?.line ?? 0
            users.append(DashboardUser(name: name, passwordHash: hash, stores: stores))
        }
        return users
    }

    /// The users file's text for `users`, in their order.
    public static func render(_ users: [DashboardUser]) -> String {
        var text = """
            # BeaconMesh dashboard users (beacon-dashboard --users FILE), written by `beacon-dashboard users add`.
            # passwordHash is a salted bcrypt hash, never the password; stores: [1, 2] or all (head office).

            """
        for user in users {
            text += "- name: \(quoted(user.name))\n"
            text += "  passwordHash: \(quoted(user.passwordHash))\n"
            switch user.stores {
            case .all: text += "  stores: all\n"
            case .stores(let stores): text += "  stores: [\(stores.sorted().map(String.init).joined(separator: ", "))]\n"
            }
        }
        return text
    }

    /// What `add` did.
    public enum Change: Sendable, Equatable {
        /// The name was new.
        case added
        /// The name was there: its password and stores are replaced.
        case replaced
    }

    /// Adds `user` to the file at `path` (made when missing), replacing a user of the same name.
    @discardableResult
    public static func add(_ user: DashboardUser, to path: String) throws(UsersFileError) -> Change {
        var users = FileManager.default.fileExists(atPath: path) ? try load(path: path) : []
        let change: Change
        if let index = users.firstIndex(where: { $0.name == user.name }) {
            users[index] = user
            change = .replaced
        } else {
            users.append(user)
            change = .added
        }
        // A file that exists keeps its owner, group and mode (root:beaconmesh 0640, so the dashboard can read it).
        var existing = stat()
        let kept = stat(path, &existing) == 0
        do throws(AtomicFile.Failure) {
            try AtomicFile.replace(
                path, with: Array(render(users).utf8), mode: kept ? existing.st_mode & 0o777 : 0o600,
                owner: kept ? (existing.st_uid, existing.st_gid) : nil)
        } catch {
            throw UsersFileError(file: path, message: "cannot replace the users file: \(error.description)")
        }
        return change
    }

    /// A YAML double-quoted scalar (JSON's escapes, which YAML shares).
    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u" + String(scalar.value, radix: 16).leftPadded(to: 4)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: Swift.max(0, width - count)) + self
    }
}
