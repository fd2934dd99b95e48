import Foundation
import Logging
import Synchronization

/// Who may see what when the dashboard runs with `--users`: checks names and passwords (bcrypt, off the concurrency
/// pool), counts failures (`SignInLimiter`), keeps the sessions of signed-in browsers (`SessionStore`), and logs.
///
/// Logs a successful and a failed sign-in at `info` and the start of a block at `warning`, each once, with the name
/// and address as metadata; never a password. A correct HTTP Basic header is remembered for `basicReuse`, so a
/// script or Prometheus that sends it with every request does not pay bcrypt's cost each time.
public final class DashboardAccess: Sendable {
    /// How long a checked HTTP Basic header is taken without checking it again.
    public static let basicReuse: Duration = .seconds(300)

    /// The answer to a sign-in.
    public enum Outcome: Sendable, Equatable {
        case signedIn(DashboardUser)
        case wrongPassword
        /// Too many failures for this name or address: refused without checking the password.
        case tooManyAttempts
    }

    /// Whether the session cookie gets `Secure` (the dashboard serves HTTPS).
    public let secureCookies: Bool
    public let sessions = SessionStore()
    private let users: [String: DashboardUser]
    private let limiter = Mutex(SignInLimiter())
    private let basicChecked = Mutex<[String: (user: String, until: ContinuousClock.Instant)]>([:])
    private let logger: Logger

    public init(users: [DashboardUser], secureCookies: Bool, logger: Logger) {
        self.users = Dictionary(users.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.secureCookies = secureCookies
        self.logger = logger
        _ = PasswordHash.decoy  // made now, so that the first unknown name takes no longer than the next
    }

    /// The user called `name`, if any.
    public func user(named name: String) -> DashboardUser? { users[name] }

    /// Checks `name` and `password` from `address`.
    public func signIn(name: String, password: String, address: String) async -> Outcome {
        let now = ContinuousClock.now
        if limiter.withLock({ $0.isBlocked(name: name, address: address, at: now) }) { return .tooManyAttempts }
        let user = users[name]
        let matches = await PasswordHash.verifyOffPool(password, against: user?.passwordHash ?? PasswordHash.decoy)
        if let user, matches {
            logger.info("signed in", metadata: ["user": "\(name)", "address": "\(address)"])
            return .signedIn(user)
        }
        let started = limiter.withLock { $0.failed(name: name, address: address, at: ContinuousClock.now) }
        logger.info("failed sign-in", metadata: ["user": "\(name)", "address": "\(address)"])
        if !started.isEmpty {
            let counted = started.map { key -> String in
                switch key {
                case .name: "name"
                case .address: "address"
                }
            }
            logger.warning(
                "\(SignInLimiter.limit) failed sign-ins within a minute: sign-ins refused for a minute (429)",
                metadata: ["user": "\(name)", "address": "\(address)", "counted": "\(counted.joined(separator: ","))"])
        }
        return .wrongPassword
    }

    /// Checks an `Authorization: Basic …` header's value from `address`; `nil` when it is not a Basic header.
    public func signIn(basicHeader header: String, address: String) async -> Outcome? {
        guard let (name, password) = Self.basicCredentials(header) else { return nil }
        let now = ContinuousClock.now
        if let known = basicChecked.withLock({ $0[header] }), now < known.until, let user = users[known.user] {
            return .signedIn(user)
        }
        let outcome = await signIn(name: name, password: password, address: address)
        if case .signedIn(let user) = outcome {
            basicChecked.withLock { checked in
                if checked.count > 1000 { checked = checked.filter { now < $0.value.until } }
                checked[header] = (user.name, now + Self.basicReuse)
            }
        }
        return outcome
    }

    /// The user of session cookie `token`, or `nil`.
    public func user(ofSession token: String) -> DashboardUser? {
        sessions.user(of: token, at: .now).flatMap { users[$0] }
    }

    /// The name and password of a `Basic …` header value (RFC 7617: base64 of `name:password`, UTF-8).
    static func basicCredentials(_ header: String) -> (name: String, password: String)? {
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let data = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }
}
