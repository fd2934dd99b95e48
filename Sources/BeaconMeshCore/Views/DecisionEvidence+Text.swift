extension DecisionEvidence {
    /// A confidence as the monitor and the dashboard show it: a whole percentage, `92%`.
    public static func percent(_ confidence: Double) -> String {
        "\(Int((min(1, max(0, confidence.isNaN ? 0 : confidence)) * 100).rounded()))%"
    }

    /// The evidence in one line for an event feed: the confidence, then the reason
    /// (`92%: node a hears -61.0 dBm, 8.5 dB above department 10 (node b), for 3.0 s`).
    public var summary: String { "\(Self.percent(confidence)): \(reason)" }
}
