import Dispatch
import HummingbirdBcrypt

/// The users file's password hashes: bcrypt (hummingbird-auth's), salted, cost 12 (about a quarter of a second per
/// check on one core), so a stolen users file does not give the passwords away cheaply.
///
/// bcrypt reads at most 72 bytes of a password: `problem(withPassword:)` refuses longer ones rather than cut them.
public enum PasswordHash {
    /// log₂ of bcrypt's rounds.
    public static let cost: UInt8 = 12
    /// The shortest password `users add` takes.
    public static let minimumLength = 8
    /// bcrypt's limit.
    public static let maximumBytes = 72

    /// A new salted hash of `password`.
    public static func make(_ password: String) -> String {
        Bcrypt.hash(password, cost: cost)
    }

    /// Whether `password` is the one `hash` was made from; `false` for anything that is not a bcrypt hash.
    public static func verify(_ password: String, against hash: String) -> Bool {
        guard looksLikeBcrypt(hash) else { return false }
        return Bcrypt.verify(password, hash: hash)
    }

    /// `verify` on a queue of its own (one check at a time), off the concurrency pool: bcrypt is slow on purpose.
    public static func verifyOffPool(_ password: String, against hash: String) async -> Bool {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: verify(password, against: hash)) }
        }
    }

    /// A hash no password matches in practice: checked for an unknown name, so that it takes as long as a known one.
    static let decoy: String = make(String((0..<32).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! }))

    /// Whether `hash` has bcrypt's form: `$2a$`, `$2b$` or `$2y$`, a two-digit cost, 53 characters of salt and hash.
    public static func looksLikeBcrypt(_ hash: String) -> Bool {
        let bytes = Array(hash.utf8)
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
            [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(bytes[2]), bytes[3] == UInt8(ascii: "$"),
            bytes[6] == UInt8(ascii: "$")
        else { return false }
        return bytes[4...5].allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// Why `password` cannot be taken, or `nil` when it can.
    public static func problem(withPassword password: String) -> String? {
        if password.count < minimumLength { return "the password is shorter than \(minimumLength) characters" }
        if password.utf8.count > maximumBytes { return "the password is longer than \(maximumBytes) bytes (bcrypt's limit)" }
        return nil
    }

    private static let queue = DispatchQueue(label: "beacon-dashboard.password-checks")
}
