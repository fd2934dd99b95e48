/// The till's "near the till" list: members the store's snapshots show `immediate` or `near` in the till's
/// department, each kept until 5 s after they were last heard there, numbered 1–9 so that the shopkeeper can check
/// one in with a key.
///
/// Pure: snapshots and the time come in. A member counts as heard again when a snapshot shows them near the till
/// with a later `lastSeen` than before; times are the till's own clock (the coordinator's `lastSeen` only tells
/// whether they were heard again). A number stays with its member while they are listed.
public struct TillPanel: Hashable, Sendable {
    /// One member near the till.
    public struct Entry: Hashable, Sendable {
        /// 1–9, the key that checks them in.
        public var number: Int
        public var member: MemberProfile
        public var proximity: Proximity
        /// When the till last saw them heard near it (its own clock).
        public var heardAt: Timestamp
        /// The coordinator's `lastSeen` that told so.
        public var lastSeen: Timestamp
    }

    /// The till's department.
    public let department: UInt16
    /// Members listed, by number.
    public private(set) var entries: [Entry] = []
    /// The `lastSeen` of members dropped from the list while the snapshots still show them near the till: they come
    /// back only when heard again.
    private var dropped: [String: Timestamp] = [:]
    /// How long a member stays listed after last heard near the till.
    public static let keep: Duration = .seconds(5)

    public init(department: UInt16) {
        self.department = department
    }

    /// Takes a store's snapshot received at `now`.
    public mutating func apply(_ snapshot: PresenceSnapshot, at now: Timestamp) {
        prune(at: now)
        let near = snapshot.members.filter { $0.department == department && ($0.proximity == .immediate || $0.proximity == .near) }
        dropped = dropped.filter { id, _ in near.contains { $0.member.id == id } }
        for present in near {
            if let lastSeen = dropped[present.member.id] {
                guard present.lastSeen > lastSeen else { continue }
                dropped[present.member.id] = nil
            }
            if let index = entries.firstIndex(where: { $0.member.id == present.member.id }) {
                entries[index].member = present.member
                entries[index].proximity = present.proximity
                if present.lastSeen > entries[index].lastSeen {
                    entries[index].lastSeen = present.lastSeen
                    entries[index].heardAt = now
                }
            } else if let number = (1...9).first(where: { number in !entries.contains { $0.number == number } }) {
                entries.append(
                    Entry(
                        number: number, member: present.member, proximity: present.proximity, heardAt: now,
                        lastSeen: present.lastSeen))
            }
        }
        entries.sort { $0.number < $1.number }
    }

    /// Drops members last heard near the till more than `keep` before `now`.
    public mutating func prune(at now: Timestamp) {
        for entry in entries where now - entry.heardAt > Self.keep { dropped[entry.member.id] = entry.lastSeen }
        entries.removeAll { now - $0.heardAt > Self.keep }
    }

    /// The member listed under `number`, if any.
    public func member(numbered number: Int) -> MemberProfile? {
        entries.first { $0.number == number }?.member
    }
}
