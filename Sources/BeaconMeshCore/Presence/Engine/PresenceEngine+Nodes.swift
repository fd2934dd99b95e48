extension PresenceEngine {
    /// Restores what the engine knew of a node (from its retained status), without emitting events.
    /// The same retained status comes again at every re-subscription (after a reconnect): the order of the boot the
    /// engine already follows is kept, so that the next batch is not taken for a gap or a late one for new.
    public mutating func restoreNode(_ node: NodeAddress, state: LinkState, boot: String?) {
        let number = nodeNumber(for: node)
        nodes[Int(number)].sequence.restore(epoch: boot)
        nodes[Int(number)].state = state
    }

    mutating func nodeNumber(for node: NodeAddress) -> Int32 {
        if let number = nodeNumbers[node] { return number }
        let number = Int32(nodes.count)
        let staleAfter = timing(store: node.store, department: node.department).staleAfter
        nodes.append(NodeTrack(address: node, state: .online, staleAfter: staleAfter))
        if !surveys.isEmpty { nodes[Int(number)].surveyFeature = surveyFeature(of: nodes[Int(number)]) }
        guests.addNode(number, store: node.store, department: node.department, staleAfter: staleAfter)
        membersHeardBy.append([])
        nodeNumbers[node] = number
        nodesByStore[node.store, default: []].append(number)
        return number
    }

    mutating func phoneNode(store: UInt16, department: UInt16) -> Int32 {
        let key = UInt32(store) << 16 | UInt32(department)
        if let number = phoneNodes[key] { return number }
        let number = Int32(nodes.count)
        var track = NodeTrack(
            address: NodeAddress(store: store, department: department, node: "phone")!, state: .online,
            staleAfter: timing(store: store, department: department).staleAfter)
        track.isPhone = true
        nodes.append(track)
        guests.addNode(number, store: store, department: department, staleAfter: track.staleAfter)
        membersHeardBy.append([])
        phoneNodes[key] = number
        return number
    }
}
