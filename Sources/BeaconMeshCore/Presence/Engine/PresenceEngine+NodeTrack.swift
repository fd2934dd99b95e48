extension PresenceEngine {
    /// What the engine knows of a node.
    struct NodeTrack: Sendable {
        var address: NodeAddress
        var state: LinkState
        /// The order of its batches within its boot (the track's epoch).
        var sequence = SequenceTrack()
        /// The node's department's `staleAfter`, in milliseconds.
        var staleAfter: Int64
        /// The node's clock against ours: its readings' times are turned into ours with it.
        var clock = SenderClock()
        /// A department as members' phones range it (one track per store and department, shared by all phones).
        var isPhone = false
        /// The node's feature in its store's survey fit, or -1 (no fit, or a node the survey did not hear).
        var surveyFeature: Int32 = -1
    }
}
