import BeaconMeshTesting
import Foundation
import Testing

/// `deploy/package.sh`'s bad input: a tree with uncommitted changes says so in the version, a bad flag is one line.
@Suite("package script")
struct PackageScriptTests {
    static func run(_ script: String, _ arguments: [String]) async throws -> TestProcess {
        let process = try TestProcess(executable: "/bin/bash", arguments: [script] + arguments)
        #expect(await process.waitForExit(timeout: .seconds(60)) != nil, "\(process.transcript)")
        return process
    }

    @Test("a bad flag exits 2 with one line naming it")
    func badFlag() async throws {
        let script = BuiltProducts.packageRoot.appendingPathComponent("deploy/package.sh").path
        for arguments in [["--bogus"], ["--out"], ["--compression", "lzma"], ["--package-version", "not a version"]] {
            let process = try await Self.run(script, arguments)
            #expect(process.exitStatus == .exited(2), "\(arguments): \(process.transcript)")
            let errors = process.stderrLines.filter { !$0.isEmpty }
            #expect(errors.count == 1 && errors.first?.hasPrefix("package: ") == true, "\(arguments): \(errors)")
        }
    }

    @Test("the version is the commit's on a clean tree and ends in +dirty, said on standard error, once a file is changed")
    func dirtyTree() async throws {
        let directory = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clone = directory + "/clone"
        let git = try TestProcess(executable: "/usr/bin/git", arguments: ["clone", "-q", BuiltProducts.packageRoot.path, clone])
        #expect(await git.waitForExit(timeout: .seconds(60)) == .exited(0), "\(git.transcript)")
        let script = clone + "/deploy/package.sh"

        let clean = try await Self.run(script, ["--print-version"])
        let version = clean.stdoutLines.first ?? ""
        #expect(clean.exitStatus == .exited(0), "\(clean.transcript)")
        #expect(version.wholeMatch(of: #/\d+\.\d+\.\d+\+git\d{14}\.[0-9a-f]{7}/#) != nil, "\(version)")

        try "# changed\n".write(toFile: clone + "/deploy/README.md", atomically: true, encoding: .utf8)
        let dirty = try await Self.run(script, ["--print-version"])
        #expect(dirty.stdoutLines.first == version + "+dirty", "\(dirty.transcript)")
        #expect(dirty.stderrLines.contains { $0.contains("uncommitted changes") && $0.contains("+dirty") }, "\(dirty.transcript)")
    }
}
