/// Where a program's HTTP endpoint listens: `HOST:PORT`, as `--listen` and the coordinator's `metrics:` key give it.
///
/// The host is a name or an IPv4 address (`127.0.0.1`, `0.0.0.0`, `localhost`) or a bracketed IPv6 address
/// (`[::1]:8080`); the port is 1–65535, or 0 for any free port (tests).
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Reads `HOST:PORT`; `nil` when it is not of that form or the port is out of range.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            return nil
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" }),
            !portText.isEmpty, portText.allSatisfy(\.isASCII), let port = Int(portText), (0...65535).contains(port)
        else { return nil }
        self.host = host
        self.port = port
    }

    /// `HOST:PORT` (IPv6 hosts in brackets).
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The URL of `path` on this address, e.g. `http://127.0.0.1:8080/` (`scheme` `https` under TLS).
    public func url(path: String = "/", scheme: String = "http") -> String { "\(scheme)://\(description)\(path)" }

    /// Whether only this machine can reach the address: `localhost`, 127.0.0.0/8 or `::1`.
    public var isLoopback: Bool {
        let host = host.lowercased()
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { part in UInt8(part) != nil }
    }
}
