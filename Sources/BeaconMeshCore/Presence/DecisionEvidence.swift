/// Why the engine placed a member in a department, and how sure it is: the contract's `confidence` and `reason`.
///
/// `confidence` runs from 0 (a guess) to 1 (beyond doubt); `reason` is one line of words for the shopkeeper and for
/// the "why did it switch?" question: which node or phone, how many dB above the runner-up, for how long.
public struct DecisionEvidence: Hashable, Sendable {
    public var confidence: Double
    public var reason: String

    public init(confidence: Double, reason: String) {
        self.confidence = min(1, max(0, confidence.isNaN ? 0 : confidence))
        self.reason = reason
    }

    /// What a decision restored from before a restart carries: the engine no longer knows the readings behind it.
    public static let restored = DecisionEvidence(confidence: 0.5, reason: "restored after a restart")
}
