import BeaconMeshCore
import BeaconMeshService
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The files `beacon-coordinator provision` edits — mosquitto's `password_file` and `acl_file`, and a folder of
/// credential files (one `<user>.pass` per credential, mode 0600) — and the two things it does with them.
///
/// Both operations are idempotent: provisioning a credential that exists keeps its password (unless `rotate`) and
/// rewrites its ACL block with the same lines; revoking one that does not exist changes nothing. Two runs at once
/// are serialised by a lock on the credentials folder. The broker only sees a change after a reload (SIGHUP).
public struct ProvisioningFiles: Sendable {
    /// mosquitto's `password_file` (salted hashes, written by `mosquitto_passwd`).
    public var passwordFile: String
    /// mosquitto's `acl_file`.
    public var aclFile: String
    /// The folder of credential files, one `<user>.pass` per credential holding its password in plain text.
    public var credentials: String
    /// The first level of every topic (`beaconmesh` in `beaconmesh/v1/…`).
    public var topicRoot = Topics.defaultRoot
    /// The system user who gets node and coordinator credential files, when run as root and the user exists.
    public var serviceUser: String? = "beaconmesh"
    /// The group mosquitto runs as, given read access to the password and ACL files when run as root.
    public var brokerGroup: String? = "mosquitto"
    /// The `mosquitto_passwd` program; looked up on `PATH` and in /usr/bin when `nil`.
    public var mosquittoPasswd: String?

    /// The production locations, under /etc/beaconmesh (what `deploy/broker/mosquitto-production.conf` reads).
    public static let defaultPasswordFile = "/etc/beaconmesh/broker/passwords"
    public static let defaultACLFile = "/etc/beaconmesh/broker/acl"
    public static let defaultCredentials = "/etc/beaconmesh/credentials"

    public init(
        passwordFile: String = defaultPasswordFile, aclFile: String = defaultACLFile,
        credentials: String = defaultCredentials
    ) {
        self.passwordFile = passwordFile
        self.aclFile = aclFile
        self.credentials = credentials
    }

    /// What became of a credential's password.
    public enum PasswordChange: String, Sendable, Equatable {
        /// A new credential: a fresh password.
        case created
        /// Asked for (`rotate`) or needed (the credential file was missing): a fresh password replaced the old one.
        case rotated
        /// The credential file and the broker's entry were both there: nothing changed.
        case kept
        /// The credential file was there but the broker had no entry: the entry was made from the file.
        case restored
    }

    /// What `provision` did.
    public struct Outcome: Sendable, Equatable {
        public var username: String
        /// The file holding the password (mode 0600).
        public var credentialFile: String
        public var password: PasswordChange
        /// Whether the ACL file changed (a new or different block, or the shared patterns).
        public var aclChanged: Bool
    }

    /// What `revoke` removed; all `false` when there was nothing to revoke.
    public struct Revocation: Sendable, Equatable {
        public var aclBlock: Bool
        public var passwordEntry: Bool
        public var credentialFile: Bool
        public var removedAnything: Bool { aclBlock || passwordEntry || credentialFile }

        public init(aclBlock: Bool, passwordEntry: Bool, credentialFile: Bool) {
            self.aclBlock = aclBlock
            self.passwordEntry = passwordEntry
            self.credentialFile = credentialFile
        }
    }

    /// The credential file of `username`.
    public func credentialFile(of username: String) -> String {
        (credentials as NSString).appendingPathComponent("\(username).pass")
    }

    /// Makes (or keeps) the credential for `role`: its password file entry, its credential file and its ACL block.
    public func provision(_ role: ProvisioningRole, rotate: Bool = false) throws(ProvisioningError) -> Outcome {
        if let problem = role.problem { throw ProvisioningError(.invalidName, problem) }
        let username = role.username
        return try withLock { () throws(ProvisioningError) -> Outcome in
            let credentialPath = credentialFile(of: username)
            let existing = readFirstLine(credentialPath)
            let hasEntry = passwordEntries().contains(username)
            let change: PasswordChange
            let password: String
            if let existing, !rotate {
                password = existing
                change = hasEntry ? .kept : .restored
            } else {
                password = ProvisioningPassword.make()
                change = existing == nil && !hasEntry ? .created : .rotated
            }
            if change != .kept {
                let owner = role.isService ? serviceUser : nil
                try writePrivately(password + "\n", to: credentialPath, owner: owner)
                try setPasswordEntry(username, password: password)
            }
            var acl = ProvisioningACL(text: try readText(aclFile) ?? "")
            let before = acl
            acl.setPatterns(ProvisioningACL.patternLines(topicRoot: topicRoot))
            if case .member = role {
            } else {
                acl.setUser(username, lines: role.topicLines(topicRoot: topicRoot))
            }
            if acl != before || !FileManager.default.fileExists(atPath: aclFile) {
                try writeShared(acl.text, to: aclFile)
            }
            return Outcome(username: username, credentialFile: credentialPath, password: change, aclChanged: acl != before)
        }
    }

    /// Removes `username`'s ACL block, password file entry and credential file, whichever exist.
    public func revoke(_ username: String) throws(ProvisioningError) -> Revocation {
        guard ProvisioningRole.isTopicSafe(username) else {
            throw ProvisioningError(.invalidName, "'\(username)' is not a BeaconMesh user name (1-64 of a-z, A-Z, 0-9, '.', '_' and '-')")
        }
        return try withLock { () throws(ProvisioningError) -> Revocation in
            var revocation = Revocation(aclBlock: false, passwordEntry: false, credentialFile: false)
            if var acl = try readText(aclFile).map(ProvisioningACL.init(text:)), acl.removeUser(username) {
                try writeShared(acl.text, to: aclFile)
                revocation.aclBlock = true
            }
            if passwordEntries().contains(username) {
                try runPasswd(["-D", passwordFile, username], input: nil)
                try shareWithBroker(passwordFile)
                revocation.passwordEntry = true
            }
            let credentialPath = credentialFile(of: username)
            if FileManager.default.fileExists(atPath: credentialPath) {
                try systemCall("cannot delete \(credentialPath)") { unlink(credentialPath) }
                revocation.credentialFile = true
            }
            return revocation
        }
    }

    /// The user names in the password file.
    public func passwordEntries() -> [String] {
        guard let text = try? readText(passwordFile) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            line.firstIndex(of: ":").map { String(line[..<$0]) }
        }
    }

    // MARK: - Files

    /// Runs `body` holding an exclusive lock on the credentials folder (created if missing, mode 0711).
    private func withLock<T>(_ body: () throws(ProvisioningError) -> T) throws(ProvisioningError) -> T {
        try makeDirectory(credentials, mode: 0o711)
        try makeDirectory((passwordFile as NSString).deletingLastPathComponent, mode: 0o755)
        try makeDirectory((aclFile as NSString).deletingLastPathComponent, mode: 0o755)
        let descriptor = try systemCall("cannot open the credentials folder \(credentials)") {
            open(credentials, O_RDONLY | O_DIRECTORY)
        }
        defer { close(descriptor) }
        try systemCall("cannot lock the credentials folder \(credentials)") { flock(descriptor, LOCK_EX) }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    private func makeDirectory(_ path: String, mode: mode_t) throws(ProvisioningError) {
        guard !path.isEmpty, !FileManager.default.fileExists(atPath: path) else { return }
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: Int(mode)])
        } catch {
            throw ProvisioningError(.fileAccess, "cannot create the folder \(path): \(error.localizedDescription)")
        }
    }

    /// The file's text, or `nil` when it does not exist.
    private func readText(_ path: String) throws(ProvisioningError) -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ProvisioningError(.fileAccess, "cannot read \(path) (permission denied? run as root)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    private func readFirstLine(_ path: String) -> String? {
        guard let text = try? readText(path),
            let line = text.split(separator: "\n").first.map({ String($0).trimmingCharacters(in: .whitespaces) }),
            !line.isEmpty
        else { return nil }
        return line
    }

    /// Replaces `path` with `text`, mode 0600, owned by `owner` when given, running as root and that user exists.
    private func writePrivately(_ text: String, to path: String, owner: String?) throws(ProvisioningError) {
        var uid: uid_t = geteuid()
        var gid: gid_t = getegid()
        if let owner, geteuid() == 0, let entry = getpwnam(owner) {
            uid = entry.pointee.pw_uid
            gid = entry.pointee.pw_gid
        }
        try replace(path, with: text, mode: 0o600, uid: uid, gid: gid)
    }

    /// Replaces `path` with `text`, mode 0640, group `brokerGroup` when running as root and the group exists.
    private func writeShared(_ text: String, to path: String) throws(ProvisioningError) {
        try replace(path, with: text, mode: 0o640, uid: geteuid(), gid: brokerGID ?? getegid())
    }

    private var brokerGID: gid_t? {
        guard geteuid() == 0, let brokerGroup, let entry = getgrnam(brokerGroup) else { return nil }
        return entry.pointee.gr_gid
    }

    /// Gives `path` mode 0640 and the broker's group (mosquitto must read it; nobody else may).
    private func shareWithBroker(_ path: String) throws(ProvisioningError) {
        if let gid = brokerGID { _ = chown(path, geteuid(), gid) }
        try systemCall("cannot set the mode of \(path)") { chmod(path, 0o640) }
    }

    /// Replaces `path` with `text`, with the mode and owner, all or nothing.
    private func replace(_ path: String, with text: String, mode: mode_t, uid: uid_t, gid: gid_t) throws(ProvisioningError) {
        do throws(AtomicFile.Failure) {
            try AtomicFile.replace(path, with: Array(text.utf8), mode: mode, owner: (uid, gid))
        } catch {
            throw ProvisioningError(.fileAccess, error.description)
        }
    }

    // MARK: - mosquitto_passwd

    /// Adds or updates `username` in the password file; the password goes to `mosquitto_passwd` on its standard
    /// input, never on a command line.
    private func setPasswordEntry(_ username: String, password: String) throws(ProvisioningError) {
        if !FileManager.default.fileExists(atPath: passwordFile) {
            try replace(passwordFile, with: "", mode: 0o640, uid: geteuid(), gid: brokerGID ?? getegid())
        }
        try runPasswd([passwordFile, username], input: "\(password)\n\(password)\n")
        try shareWithBroker(passwordFile)
    }

    private func runPasswd(_ arguments: [String], input: String?) throws(ProvisioningError) {
        let executable = try findPasswd()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdin = Pipe()
        let output = Pipe()
        process.standardInput = stdin
        process.standardOutput = output
        process.standardError = output
        do {
            try process.run()
        } catch {
            throw ProvisioningError(.passwordTool, "cannot run \(executable): \(error.localizedDescription)")
        }
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try? stdin.fileHandleForWriting.close()
        let transcript = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let said = transcript.split(separator: "\n").filter { !$0.hasPrefix("Password:") && !$0.hasPrefix("Reenter") }
                .joined(separator: " ")
            throw ProvisioningError(
                .passwordTool,
                "mosquitto_passwd could not update \(passwordFile): \(said.isEmpty ? "exit \(process.terminationStatus)" : said)")
        }
    }

    private func findPasswd() throws(ProvisioningError) -> String {
        if let mosquittoPasswd { return mosquittoPasswd }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { "\($0)/mosquitto_passwd" } + ["/usr/bin/mosquitto_passwd"]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw ProvisioningError(.passwordTool, "mosquitto_passwd was not found; install the broker (apt-get install mosquitto)")
        }
        return found
    }
}

extension ProvisioningRole {
    /// Whether the credential belongs to a BeaconMesh service running on this machine (a node, coordinator or dashboard),
    /// whose file should be owned by the service user rather than handed to a person.
    var isService: Bool {
        switch self {
        case .node, .coordinator, .dashboard: true
        case .monitor, .till, .member, .bridge, .fleet: false
        }
    }
}

/// The one place `ProvisioningFiles` reads `errno`: runs one system call and, when it fails (a negative result),
/// reads `errno` at once and throws "`failure`: the reason".
@discardableResult
private func systemCall<Result: BinaryInteger>(
    _ failure: @autoclosure () -> String, _ body: () -> Result
) throws(ProvisioningError) -> Result {
    let result = body()
    let savedErrno = errno
    guard result >= 0 else { throw ProvisioningError(.fileAccess, "\(failure()): \(String(cString: strerror(savedErrno)))") }
    return result
}
