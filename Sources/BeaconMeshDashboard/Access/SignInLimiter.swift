/// Slows password guessing: `limit` failed sign-ins for one name, or from one address, within `window` block that
/// name (or address) for `blockFor`. A pure value: the caller gives the time and logs what it returns.
///
/// A blocked name or address is refused before its password is checked (the answer is 429), and refusals do not
/// extend the block. Memory stays bounded: failures older than the window are forgotten as new ones come.
public struct SignInLimiter: Sendable {
    /// Failed sign-ins that start a block.
    public static let limit = 10
    /// How far back failures count.
    public static let window: Duration = .seconds(60)
    /// How long a block lasts.
    public static let blockFor: Duration = .seconds(60)

    /// What is counted: a name as typed, or the address a request came from.
    public enum Key: Hashable, Sendable {
        case name(String)
        case address(String)
    }

    private var failures: [Key: [ContinuousClock.Instant]] = [:]
    private var blockedUntil: [Key: ContinuousClock.Instant] = [:]

    public init() {}

    /// Whether a sign-in as `name` from `address` is refused at `now`.
    public func isBlocked(name: String, address: String, at now: ContinuousClock.Instant) -> Bool {
        [Key.name(name), .address(address)].contains { key in blockedUntil[key].map { now < $0 } ?? false }
    }

    /// Counts a failed sign-in as `name` from `address` at `now`; returns the keys whose block starts now (log them).
    public mutating func failed(name: String, address: String, at now: ContinuousClock.Instant) -> [Key] {
        prune(at: now)
        var started: [Key] = []
        for key in [Key.name(name), .address(address)] {
            var times = failures[key, default: []].filter { now - $0 < Self.window }
            times.append(now)
            if times.count >= Self.limit, !(blockedUntil[key].map { now < $0 } ?? false) {
                blockedUntil[key] = now + Self.blockFor
                started.append(key)
                times.removeAll()
            }
            failures[key] = times.isEmpty ? nil : times
        }
        return started
    }

    /// How many names and addresses are remembered (failures in the window, or a block running).
    public var tracked: Int { Set(failures.keys).union(blockedUntil.keys).count }

    private mutating func prune(at now: ContinuousClock.Instant) {
        blockedUntil = blockedUntil.filter { now < $0.value }
        guard failures.count > 1000 else { return }
        failures = failures.compactMapValues { times in
            let recent = times.filter { now - $0 < Self.window }
            return recent.isEmpty ? nil : recent
        }
    }
}
