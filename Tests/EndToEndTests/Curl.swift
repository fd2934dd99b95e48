import BeaconMeshTesting
import Foundation

/// One HTTP(S) exchange through curl, as a script or a person at a shell would make it: no redirect followed, every
/// header seen, HTTPS verified against the CA given (`--cacert`). A stream is read for `maxTime` seconds and then
/// cut off (curl's exit 28), with what arrived until then as the body.
struct CurlReply {
    /// curl's exit status (0; 28 when `maxTime` cut a stream; 60 when the certificate could not be verified …).
    let exit: Int32
    let status: Int
    /// Header lines as `name: value`, names lower-cased.
    let headers: [String]
    let body: String

    /// The values of header `name` (any case).
    func header(_ name: String) -> [String] {
        let prefix = name.lowercased() + ":"
        return headers.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces) }
    }

    /// The session cookie's `name=value`, from a `Set-Cookie` of this reply.
    var sessionCookie: String? {
        header("set-cookie").first { $0.hasPrefix("beaconmesh_session=") }.map { String($0.prefix { $0 != ";" }) }
    }
}

enum Curl {
    static let executable = "/usr/bin/curl"

    /// `curl -sS -i` of `url` with `options` (e.g. `-u`, `-H`, `--data-urlencode`, `--cacert`).
    static func request(_ url: String, _ options: [String] = [], maxTime: Int = 15) async throws -> CurlReply {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw TestSupportError("\(executable) is missing: run deploy/install-deps.sh tests (apt-get install curl)")
        }
        let process = try TestProcess(
            executable: executable, arguments: ["-sS", "-i", "-N", "--max-time", "\(maxTime)"] + options + [url])
        guard let status = await process.waitForExit(timeout: .seconds(maxTime + 10)), case .exited(let code) = status else {
            process.send(SIGKILL)
            throw TestSupportError("curl \(url) did not finish: \(process.transcript)")
        }
        var lines = process.stdoutLines.map { $0.hasSuffix("\r") ? String($0.dropLast()) : $0 }
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/") else {
            return CurlReply(exit: code, status: 0, headers: [], body: process.stderrLines.joined(separator: "\n"))
        }
        lines.removeFirst()
        let end = lines.firstIndex(of: "") ?? lines.count
        let headers = lines[..<end].map { line -> String in
            guard let colon = line.firstIndex(of: ":") else { return line.lowercased() }
            return line[..<colon].lowercased() + line[colon...]
        }
        let body = lines[min(end + 1, lines.count)...].joined(separator: "\n")
        let number = statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return CurlReply(exit: code, status: number, headers: headers, body: body)
    }

    /// Basic sign-in options for `name` and `password`.
    static func basic(_ name: String, _ password: String) -> [String] { ["-u", "\(name):\(password)"] }

    /// The sign-in form's post.
    static func loginForm(_ name: String, _ password: String, next: String? = nil) -> [String] {
        ["--data-urlencode", "name=\(name)", "--data-urlencode", "password=\(password)"]
            + (next.map { ["--data-urlencode", "next=\($0)"] } ?? [])
    }
}
