/// Decides whether a department's promo fires for a member now: in the department for `dwell`, at or closer than
/// `proximity`, and not fired for this member and promo within `cooldown`.
public struct PromoEligibility: Hashable, Sendable {
    /// The farthest proximity that counts.
    public var proximity: Proximity
    /// How long the member must have been in the department.
    public var dwell: Duration
    /// At most one firing per member and promo within this time.
    public var cooldown: Duration

    public init(proximity: Proximity, dwell: Duration, cooldown: Duration) {
        self.proximity = proximity
        self.dwell = dwell
        self.cooldown = cooldown
    }

    /// Whether the promo fires for `visit` at `now`, given when it last fired for this member (if ever).
    public func shouldFire(for visit: PresenceEngine.Visit, lastFiredAt: Timestamp?, at now: Timestamp) -> Bool {
        guard visit.leftAt == nil, visit.proximity != .unknown, visit.proximity <= proximity else { return false }
        guard now - visit.inDepartmentSince >= dwell else { return false }
        if let lastFiredAt, now - lastFiredAt < cooldown { return false }
        return true
    }
}
