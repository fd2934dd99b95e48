/// Something that happened in a store, published on `stores/{store}/events`: the contract's event.
public struct StoreEvent: Hashable, Sendable {
    /// Unique per event, so a QoS 1 redelivery can be recognised.
    public var id: String
    public var store: UInt16
    public var at: Timestamp
    public var kind: Kind

    /// The contract's event types with their fields.
    public enum Kind: Hashable, Sendable {
        /// A visit began; `evidence` says why this department (`nil` from a coordinator older than the field).
        case arrived(
            member: MemberProfile, department: UInt16, departmentName: String, visit: VisitNumber, greeting: String,
            evidence: DecisionEvidence?)
        /// The member changed department; `evidence` says why (`nil` from a coordinator older than the field).
        case moved(member: MemberProfile, from: UInt16, to: UInt16, fromName: String, toName: String, evidence: DecisionEvidence?)
        /// The member came back within `visitGap` of a `left`: the same visit goes on, no greeting.
        case resumed(member: MemberProfile, department: UInt16, departmentName: String, visit: VisitNumber, evidence: DecisionEvidence?)
        /// The visit's presence ended; `dwellSeconds` runs from the visit's `arrived` to this `left`.
        case left(member: MemberProfile, department: UInt16, dwellSeconds: Int)
        case promo(member: MemberProfile, department: UInt16, departmentName: String, promo: Promo)
        case node(department: UInt16, node: String, state: LinkState)
        /// A till checked the member in; `checkins` is their count after this one, `verified` is `false` for a
        /// check-in on proximity alone.
        case checkin(member: MemberProfile, department: UInt16, departmentName: String, request: String, checkins: Int, verified: Bool)
        /// A till's request was refused; `member` is the id asked for.
        case checkinRefused(request: String, member: String, department: UInt16, reason: CheckinRefusal)
    }

    public init(id: String, store: UInt16, at: Timestamp, kind: Kind) {
        self.id = id
        self.store = store
        self.at = at
        self.kind = kind
    }

    /// The contract's `type` string.
    public var type: String {
        switch kind {
        case .arrived: return "arrived"
        case .moved: return "moved"
        case .resumed: return "resumed"
        case .left: return "left"
        case .promo: return "promo"
        case .node: return "node"
        case .checkin: return "checkin"
        case .checkinRefused: return "checkin-refused"
        }
    }

    /// The member the event is about, if any.
    public var member: MemberProfile? {
        switch kind {
        case .arrived(let member, _, _, _, _, _), .moved(let member, _, _, _, _, _), .left(let member, _, _),
            .resumed(let member, _, _, _, _),
            .promo(let member, _, _, _), .checkin(let member, _, _, _, _, _):
            return member
        case .node, .checkinRefused:
            return nil
        }
    }

    /// Why the presence engine took the decision the event reports (`arrived`, `moved`), if the event says.
    public var evidence: DecisionEvidence? {
        switch kind {
        case .arrived(_, _, _, _, _, let evidence), .moved(_, _, _, _, _, let evidence), .resumed(_, _, _, _, let evidence):
            return evidence
        case .left, .promo, .node, .checkin, .checkinRefused: return nil
        }
    }
}

/// Which visit an arrival starts: its number and when the previous one was.
public struct VisitNumber: Hashable, Sendable {
    public var number: Int
    public var previousAt: Timestamp?

    public init(number: Int, previousAt: Timestamp?) {
        self.number = number
        self.previousAt = previousAt
    }
}
