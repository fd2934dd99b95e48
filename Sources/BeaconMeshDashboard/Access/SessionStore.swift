import Synchronization

/// The signed-in browsers: a random token (the session cookie's value) for each, with the user's name and when it
/// expires. In memory only: a restart signs everybody out.
public final class SessionStore: Sendable {
    /// How long a session lasts after sign-in (a working day); the cookie carries the same `Max-Age`.
    public static let lifetime: Duration = .seconds(12 * 3600)

    private struct Session {
        let user: String
        let expires: ContinuousClock.Instant
    }

    private let sessions = Mutex<[String: Session]>([:])

    public init() {}

    /// A new session for `user` starting at `now`; returns its token: 32 random bytes as hex.
    public func create(for user: String, at now: ContinuousClock.Instant) -> String {
        var generator = SystemRandomNumberGenerator()
        let token = (0..<32).map { _ in
            let byte = UInt8.random(in: .min ... .max, using: &generator)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
        sessions.withLock { sessions in
            sessions = sessions.filter { now < $0.value.expires }
            sessions[token] = Session(user: user, expires: now + Self.lifetime)
        }
        return token
    }

    /// The user of session `token` at `now`, or `nil` when there is no such session or it expired.
    public func user(of token: String, at now: ContinuousClock.Instant) -> String? {
        sessions.withLock { sessions in
            guard let session = sessions[token] else { return nil }
            guard now < session.expires else {
                sessions[token] = nil
                return nil
            }
            return session.user
        }
    }

    /// Ends session `token` (sign-out).
    public func remove(_ token: String) {
        _ = sessions.withLock { $0.removeValue(forKey: token) }
    }

    /// How many sessions are open.
    public var count: Int { sessions.withLock { $0.count } }
}
