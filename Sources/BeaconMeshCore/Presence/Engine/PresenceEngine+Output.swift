extension PresenceEngine {
    /// What the caller must do after an input.
    public enum Output: Hashable, Sendable {
        /// A new visit began: greet the member and count the visit; `evidence` says why this department.
        case arrived(member: String, store: UInt16, department: UInt16, at: Timestamp, evidence: DecisionEvidence)
        /// The member came back within `visitGap`: the visit goes on, nobody is greeted.
        case resumed(member: String, store: UInt16, department: UInt16, at: Timestamp, evidence: DecisionEvidence)
        /// The member changed department; `evidence` says why.
        case moved(member: String, store: UInt16, from: UInt16, to: UInt16, at: Timestamp, evidence: DecisionEvidence)
        /// The member left; `dwell` is the length of the whole visit up to the last reading.
        case left(member: String, store: UInt16, department: UInt16, dwell: Duration, at: Timestamp)
        case node(NodeAddress, LinkState, at: Timestamp)
        /// Something a store's snapshot shows changed.
        case presenceChanged(store: UInt16)
        /// The member's visit as it stands after an arrival, a resumption, a move or a departure (the outputs just
        /// before this one): what the registry keeps of it.
        case visitChanged(Visit)
    }

    /// Orders one tick's outputs by member id, so that the same inputs always give the same sequence.
    static func inMemberOrder(_ outputs: [Output]) -> [Output] {
        func member(_ output: Output) -> String {
            switch output {
            case .arrived(let member, _, _, _, _), .resumed(let member, _, _, _, _), .moved(let member, _, _, _, _, _),
                .left(let member, _, _, _, _):
                return member
            case .visitChanged(let visit):
                return visit.member
            case .node, .presenceChanged:
                return ""
            }
        }
        return outputs.enumerated().sorted { (member($0.element), $0.offset) < (member($1.element), $1.offset) }.map(\.element)
    }
}

extension PresenceEngine.Output {
    /// Whether this output changes a member's visit (an arrival, a resumption, a move or a departure).
    var changesVisit: Bool {
        switch self {
        case .arrived, .resumed, .moved, .left: true
        case .node, .presenceChanged, .visitChanged: false
        }
    }
}
