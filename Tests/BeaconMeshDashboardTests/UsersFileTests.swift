import BeaconMeshService
import Foundation
import Testing

@testable import BeaconMeshDashboard

@Suite("Users file")
struct UsersFileTests {
    /// A real bcrypt hash (of "correct horse"), made once: hashing is slow on purpose.
    static let hash = PasswordHash.make("correct horse")

    @Test("a list of {name, passwordHash, stores} reads into users; stores is a list or all")
    func reads() throws {
        let users = try UsersFile.parse(
            """
            - name: anna
              passwordHash: "\(Self.hash)"
              stores: [1, 2]
            - {name: "Head office", passwordHash: '\(Self.hash)', stores: all}
            """, file: "users.yaml")
        #expect(users.map(\.name) == ["anna", "Head office"])
        #expect(users[0].stores == .stores([1, 2]))
        #expect(users[1].stores == .all)
        #expect(users[0].passwordHash == Self.hash)
        #expect(try UsersFile.parse("", file: "empty.yaml").isEmpty)
    }

    @Test(
        "a bad file is refused whole, naming the line and what is wrong",
        arguments: [
            ("- {name: anna, passwordHash: HASH, stores: [1], role: admin}", "1: unknown key 'role'"),
            ("- {name: anna, passwordHash: secret, stores: [1]}", "passwordHash must be a bcrypt hash"),
            ("- {name: anna, passwordHash: HASH, stores: [70000]}", "'70000' is not a store number"),
            ("- {name: anna, passwordHash: HASH, stores: []}", "the stores list is empty"),
            ("- {name: anna, passwordHash: HASH, stores: some}", "stores must be a list such as [1, 2], or all"),
            ("- {name: anna, passwordHash: HASH}", "user 'anna' has no stores"),
            ("- {name: 'a:b', passwordHash: HASH, stores: all}", "must not contain ':'"),
            (
                "- {name: anna, passwordHash: HASH, stores: all}\n- {name: anna, passwordHash: HASH, stores: [1]}",
                "2: user 'anna' is already listed on line 1"
            ),
            ("name: anna", "must be a list"),
        ])
    func refused(yaml: String, message: String) {
        do {
            _ = try UsersFile.parse(yaml.replacingOccurrences(of: "HASH", with: "'\(Self.hash)'"), file: "users.yaml")
            Issue.record("parsed: \(yaml)")
        } catch {
            #expect(error.description.hasPrefix("users.yaml"), "\(error)")
            #expect(error.description.contains(message), "\(error)")
            #expect(!error.description.contains("\n"))
        }
    }

    @Test("add makes the file (mode 0600), replaces a user of the same name, and what it writes reads back")
    func addAndReadBack() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-users-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/users.yaml"
        let odd = DashboardUser(name: #"Zoë "the boss" \ <img src=x>"#, passwordHash: Self.hash, stores: .all)
        #expect(try UsersFile.add(DashboardUser(name: "anna", passwordHash: Self.hash, stores: .stores([2, 1])), to: path) == .added)
        #expect(try UsersFile.add(odd, to: path) == .added)
        #expect(try UsersFile.add(DashboardUser(name: "anna", passwordHash: Self.hash, stores: .stores([3])), to: path) == .replaced)
        let users = try UsersFile.load(path: path)
        #expect(users == [DashboardUser(name: "anna", passwordHash: Self.hash, stores: .stores([3])), odd])
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["users.yaml"], "no temporary file left")
        // Made readable to the dashboard's group: adding again keeps that.
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
        try UsersFile.add(DashboardUser(name: "bert", passwordHash: Self.hash, stores: .stores([2])), to: path)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o640)
    }

    @Test("passwords: a salted bcrypt hash verifies the password and nothing else")
    func passwordHash() {
        let again = PasswordHash.make("correct horse")
        #expect(again != Self.hash, "two hashes of one password differ (salt)")
        #expect(again.hasPrefix("$2b$12$") && PasswordHash.looksLikeBcrypt(again))
        #expect(PasswordHash.verify("correct horse", against: Self.hash))
        #expect(!PasswordHash.verify("correct horsE", against: Self.hash))
        #expect(!PasswordHash.verify("correct horse", against: "correct horse"))
        #expect(PasswordHash.problem(withPassword: "short") != nil)
        #expect(PasswordHash.problem(withPassword: String(repeating: "é", count: 40)) != nil, "over bcrypt's 72 bytes")
        #expect(PasswordHash.problem(withPassword: "long enough") == nil)
    }

    @Test("--stores and the file's stores: all, or store numbers")
    func storeAccess() {
        #expect(StoreAccess("all") == .all)
        #expect(StoreAccess("1,2") == .stores([1, 2]))
        #expect(StoreAccess(" 7 ") == .stores([7]))
        for bad in ["", "1,", "x", "70000", "-1", "1;2", "ALL"] { #expect(StoreAccess(bad) == nil, "\(bad)") }
        #expect(StoreAccess.stores([2, 1]).description == "1,2")
        #expect(StoreAccess.stores([1]).allows(1) && !StoreAccess.stores([1]).allows(2) && StoreAccess.all.allows(65535))
    }
}
