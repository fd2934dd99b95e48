import BeaconMeshCoordinator
import BeaconMeshCore
import Foundation
import Testing

/// A temp folder with the three provisioning locations in it, removed afterwards.
private struct Workspace {
    let directory: String
    let files: ProvisioningFiles

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-provision-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var files = ProvisioningFiles(
            passwordFile: directory + "/broker/passwords", aclFile: directory + "/broker/acl",
            credentials: directory + "/credentials")
        files.serviceUser = nil
        self.files = files
    }

    func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
    func mode(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1 }
    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

@Suite("provisioning: password, ACL and credential files (with the real mosquitto_passwd)")
struct ProvisioningFilesTests {
    let node = ProvisioningRole.node(NodeAddress(store: 1, department: 10, node: "a")!)

    @Test("a new node credential: a 0600 password file, a hashed password entry and an ACL block")
    func create() throws {
        let space = try Workspace()
        defer { space.remove() }
        let outcome = try space.files.provision(node)
        #expect(outcome.username == "node-1-10-a")
        #expect(outcome.password == .created)
        #expect(outcome.credentialFile == space.directory + "/credentials/node-1-10-a.pass")
        let password = space.read(outcome.credentialFile)
        #expect(password.count == 33 && password.hasSuffix("\n"))
        #expect(space.mode(outcome.credentialFile) == 0o600)
        let entries = space.read(space.files.passwordFile)
        #expect(entries.hasPrefix("node-1-10-a:$7$"), "a PBKDF2 hash, not the password: \(entries)")
        #expect(!entries.contains(password.dropLast()))
        #expect(space.mode(space.files.passwordFile) == 0o640)
        #expect(space.mode(space.files.aclFile) == 0o640)
        let acl = ProvisioningACL(text: space.read(space.files.aclFile))
        #expect(acl.userLines("node-1-10-a")?.count == 6)
        #expect(acl.text.contains("pattern read beaconmesh/v1/members/%u/offers"))
    }

    @Test("provisioning twice changes nothing: same password, same files")
    func idempotent() throws {
        let space = try Workspace()
        defer { space.remove() }
        _ = try space.files.provision(node)
        let before = [space.files.passwordFile, space.files.aclFile, space.files.credentialFile(of: "node-1-10-a")].map(space.read)
        let again = try space.files.provision(node)
        #expect(again.password == .kept)
        #expect(again.aclChanged == false)
        let after = [space.files.passwordFile, space.files.aclFile, space.files.credentialFile(of: "node-1-10-a")].map(space.read)
        #expect(before == after)
    }

    @Test("--rotate draws a new password; a lost password entry is restored from the credential file")
    func rotateAndRestore() throws {
        let space = try Workspace()
        defer { space.remove() }
        _ = try space.files.provision(.monitor(store: 1))
        let first = space.read(space.files.credentialFile(of: "monitor-1"))
        let rotated = try space.files.provision(.monitor(store: 1), rotate: true)
        #expect(rotated.password == .rotated)
        #expect(space.read(rotated.credentialFile) != first)
        try "".write(toFile: space.files.passwordFile, atomically: true, encoding: .utf8)
        let restored = try space.files.provision(.monitor(store: 1))
        #expect(restored.password == .restored)
        #expect(space.files.passwordEntries() == ["monitor-1"])
    }

    @Test("a member gets a password but no ACL block; a service-looking member id is refused")
    func member() throws {
        let space = try Workspace()
        defer { space.remove() }
        let outcome = try space.files.provision(.member(id: "ana"))
        #expect(outcome.username == "ana")
        #expect(space.files.passwordEntries() == ["ana"])
        #expect(ProvisioningACL(text: space.read(space.files.aclFile)).users.isEmpty)
        let error = #expect(throws: ProvisioningError.self) { try space.files.provision(.member(id: "monitor-2")) }
        #expect(error?.kind == .invalidName)
    }

    @Test("a file that cannot be replaced fails as a file problem, naming the system's reason, and leaves no temporary file")
    func unwritableCredential() throws {
        let space = try Workspace()
        defer { space.remove() }
        let credential = space.files.credentialFile(of: "monitor-1")
        try FileManager.default.createDirectory(atPath: credential + "/in-the-way", withIntermediateDirectories: true)
        let error = #expect(throws: ProvisioningError.self) { try space.files.provision(.monitor(store: 1)) }
        #expect(error?.kind == .fileAccess)
        #expect(error?.description == "cannot write \(credential): Is a directory")
        let left = try FileManager.default.contentsOfDirectory(atPath: space.directory + "/credentials")
        #expect(left == ["monitor-1.pass"])
    }

    @Test("an ACL written before members ranged (offers-only pattern, old coordinator block) is brought up to date by the next provision")
    func upgradesAnOlderACL() throws {
        let space = try Workspace()
        defer { space.remove() }
        var old = ProvisioningACL()
        old.setPatterns(["pattern read beaconmesh/v1/members/%u/offers"])
        old.setUser("coordinator-bo", lines: ["user coordinator-bo", "topic read beaconmesh/v1/stores/1/departments/#"])
        try FileManager.default.createDirectory(atPath: space.directory + "/broker", withIntermediateDirectories: true)
        try old.text.write(toFile: space.files.aclFile, atomically: true, encoding: .utf8)

        let outcome = try space.files.provision(.coordinator(id: "bo", stores: [1]))
        #expect(outcome.aclChanged)
        let acl = ProvisioningACL(text: space.read(space.files.aclFile))
        #expect(acl.text.contains("pattern write beaconmesh/v1/stores/+/members/%u/ranging\n"))
        #expect(acl.text.contains("pattern read beaconmesh/v1/members/%u/checkins\n"))
        #expect(
            acl.text.components(separatedBy: "pattern read beaconmesh/v1/members/%u/offers").count == 2, "one patterns block: \(acl.text)")
        #expect(acl.userLines("coordinator-bo")?.contains("topic read beaconmesh/v1/stores/1/members/+/ranging") == true)
        #expect(acl.userLines("coordinator-bo")?.contains("topic write beaconmesh/v1/members/+/checkins") == true)
    }

    @Test("revoke removes the entry, the block and the file; revoking again finds nothing")
    func revoke() throws {
        let space = try Workspace()
        defer { space.remove() }
        _ = try space.files.provision(node)
        _ = try space.files.provision(.monitor(store: 1))
        let revocation = try space.files.revoke("node-1-10-a")
        #expect(revocation == .init(aclBlock: true, passwordEntry: true, credentialFile: true))
        #expect(space.files.passwordEntries() == ["monitor-1"])
        #expect(ProvisioningACL(text: space.read(space.files.aclFile)).users == ["monitor-1"])
        #expect(!FileManager.default.fileExists(atPath: space.files.credentialFile(of: "node-1-10-a")))
        #expect(try space.files.revoke("node-1-10-a").removedAnything == false)
        let error = #expect(throws: ProvisioningError.self) { try space.files.revoke("../etc/passwd") }
        #expect(error?.kind == .invalidName)
    }

    @Test("a missing mosquitto_passwd fails with a message saying what to install")
    func missingTool() throws {
        let space = try Workspace()
        defer { space.remove() }
        var files = space.files
        files.mosquittoPasswd = space.directory + "/no-such-mosquitto_passwd"
        #expect {
            try files.provision(node)
        } throws: { error in
            "\(error)".contains("cannot run")
        }
    }
}
