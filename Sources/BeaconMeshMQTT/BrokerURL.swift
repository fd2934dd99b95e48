/// Where the broker is: `mqtt://host:port` (plain TCP) or `mqtts://host:port` (TLS); the port defaults to 1883 / 8883.
///
/// Anything else — another scheme, a path, credentials in the URL, a port outside 1…65535 — is rejected with an
/// `MQTTError.invalidBrokerURL` naming the URL and the problem. IPv6 literals are written in brackets: `mqtt://[::1]:1883`.
public struct BrokerURL: Sendable, Hashable, CustomStringConvertible {
    /// Plain MQTT or MQTT over TLS.
    public enum Scheme: String, Sendable, Hashable {
        case mqtt
        case mqtts

        /// The port used when the URL names none: 1883 for `mqtt`, 8883 for `mqtts`.
        public var defaultPort: Int {
            switch self {
            case .mqtt: 1883
            case .mqtts: 8883
            }
        }
    }

    /// `mqtt` or `mqtts`.
    public let scheme: Scheme
    /// Host name or IP address, without brackets for IPv6.
    public let host: String
    /// TCP port, 1…65535.
    public let port: Int

    /// Whether the connection is encrypted (the `mqtts` scheme).
    public var usesTLS: Bool { scheme == .mqtts }

    /// A broker URL from its parts; the port must be 1…65535 and the host non-empty.
    public init(scheme: Scheme, host: String, port: Int? = nil) throws(MQTTError) {
        let port = port ?? scheme.defaultPort
        let shown = "\(scheme.rawValue)://\(host):\(port)"
        guard !host.isEmpty else { throw .invalidBrokerURL(url: shown, problem: "the host is missing") }
        guard (1...65535).contains(port) else {
            throw .invalidBrokerURL(url: shown, problem: "port \(port) is outside 1…65535")
        }
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// Parses `mqtt://host[:port]` or `mqtts://host[:port]`; a trailing `/` is tolerated, anything else is an error.
    public init(_ string: String) throws(MQTTError) {
        func invalid(_ problem: String) -> MQTTError { .invalidBrokerURL(url: string, problem: problem) }

        guard let separator = string.firstRange(of: "://") else {
            throw invalid("the scheme is missing")
        }
        let schemeText = string[..<separator.lowerBound].lowercased()
        guard let scheme = Scheme(rawValue: schemeText) else {
            throw invalid("unknown scheme \"\(schemeText)\"")
        }
        var rest = Substring(string[separator.upperBound...])
        if rest.hasSuffix("/") { rest.removeLast() }
        if rest.contains("@") {
            throw invalid("user names and passwords do not belong in the URL; pass them separately (password file or environment)")
        }
        if rest.contains("/") || rest.contains("?") || rest.contains("#") {
            throw invalid("a broker URL has no path, query or fragment")
        }
        if rest.contains(where: { $0.isWhitespace }) {
            throw invalid("it contains white space")
        }

        let host: Substring
        let portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw invalid("an IPv6 address is missing its closing \"]\"") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let afterHost = rest[rest.index(after: close)...]
            if afterHost.isEmpty {
                portText = nil
            } else if afterHost.hasPrefix(":") {
                portText = afterHost.dropFirst()
            } else {
                throw invalid("unexpected text \"\(afterHost)\" after the IPv6 address")
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
            portText = nil
        }
        guard !host.isEmpty else { throw invalid("the host is missing") }

        var port = scheme.defaultPort
        if let portText {
            guard !portText.isEmpty else { throw invalid("the port after \":\" is missing") }
            guard portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber), let number = Int(portText) else {
                throw invalid("port \"\(portText)\" is not a number")
            }
            guard (1...65535).contains(number) else { throw invalid("port \(number) is outside 1…65535") }
            port = number
        }
        self.scheme = scheme
        self.host = String(host)
        self.port = port
    }

    /// The canonical form, always with the port: `mqtt://127.0.0.1:1883`.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(scheme.rawValue)://\(shownHost):\(port)"
    }
}
