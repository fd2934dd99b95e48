extension PresenceEngine {
    /// Replaces which beacon belongs to which member, and who is a member (`members`: also those with no beacon,
    /// heard only through their phone's ranging reports). Beacons of no member are guests. A member who is no longer
    /// in the directory is forgotten at once; returns the stores whose snapshot changed.
    public mutating func setDirectory(_ beaconOwners: [BeaconKey: String], members allMembers: some Sequence<String> = [String]())
        -> [Output]
    {
        var known = Set(beaconOwners.values)
        known.formUnion(allMembers)
        var changedStores: Set<UInt16> = []
        for id in memberNumbers.keys where !known.contains(id) {
            if let store = forgetMember(id) { changedStores.insert(store) }
        }
        for id in known { _ = memberNumber(for: id) }
        var table = BeaconTable<Int32>()
        beaconCounts = [Int32](repeating: 0, count: members.count)
        for (beacon, id) in beaconOwners {
            let number = memberNumber(for: id)
            table.insert(beacon, number)
            beaconCounts[Int(number)] += 1
            guests.remove(beacon)
        }
        owners = table
        return changedStores.sorted().map { .presenceChanged(store: $0) }
    }

    /// The beacons the directory gives `member` (a survey mark of a member's beacons), in key order; none for a member
    /// it does not know. A pass over the beacons' owners: for a mark now and then, not for every sighting.
    public func beacons(of member: String) -> [BeaconKey] {
        guard let number = memberNumbers[member], beaconCounts[Int(number)] > 0 else { return [] }
        return owners.keys.indices.filter { owners.values[$0] == number }.map { owners.keys[$0] }.sorted()
    }

    /// Changes the directory for some members only, as `setDirectory` would with the whole of it: each member in
    /// `changed` now owns exactly the beacons listed (one no longer listed belongs to no one), and the `removed` are
    /// forgotten at once. A member whose beacons are those they had (a count changed: the usual case in a chain,
    /// where every visit counted in another store is announced) costs a lookup per beacon; only members who gave up a
    /// beacon cost a pass over the beacons' owners. Returns the stores whose snapshot changed.
    public mutating func updateDirectory(_ changed: [String: [BeaconKey]], removing removed: Set<String>) -> [Output] {
        // Members whose former beacons must be found (and freed) by a pass over the table.
        var giveUp: Set<Int32> = []
        var keeps: Set<Int32> = []
        for id in removed where changed[id] == nil {
            if let number = memberNumbers[id], beaconCounts[Int(number)] > 0 { giveUp.insert(number) }
        }
        for (id, beacons) in changed {
            guard let number = memberNumbers[id] else { continue }
            let listed = Set(beacons)
            let same =
                listed.count == Int(beaconCounts[Int(number)])
                && listed.allSatisfy { beacon in owners.position(of: beacon).map { owners.values[$0] == number } ?? false }
            if same { keeps.insert(number) } else if beaconCounts[Int(number)] > 0 { giveUp.insert(number) }
        }
        if !giveUp.isEmpty {
            let former = owners.keys.indices.filter { giveUp.contains(owners.values[$0]) }.map { owners.keys[$0] }
            for beacon in former { removeOwner(of: beacon) }
        }
        var changedStores: Set<UInt16> = []
        for id in removed where changed[id] == nil {
            if let store = forgetMember(id) { changedStores.insert(store) }
        }
        for (id, beacons) in changed {
            let number = memberNumber(for: id)
            guard !keeps.contains(number) else { continue }
            for beacon in Set(beacons) {
                removeOwner(of: beacon)
                owners.insert(beacon, number)
                beaconCounts[Int(number)] += 1
                guests.remove(beacon)
            }
        }
        return changedStores.sorted().map { .presenceChanged(store: $0) }
    }

    /// Takes `beacon` from whoever owns it.
    private mutating func removeOwner(of beacon: BeaconKey) {
        if let former = owners.remove(beacon) { beaconCounts[Int(former)] -= 1 }
    }

    /// Forgets member `id` at once (their number is free again); returns the store they were present in, if any.
    private mutating func forgetMember(_ id: String) -> UInt16? {
        guard let number = memberNumbers[id] else { return nil }
        let store = members[Int(number)].visit.flatMap { $0.leftAt == nil ? $0.store : nil }
        changeMember(number) { $0 = Person() }
        memberNumbers[id] = nil
        memberIDs[Int(number)] = ""
        freeMemberNumbers.append(number)
        phones = phones.filter { $0.key.member != number }
        return store
    }

    mutating func memberNumber(for id: String) -> Int32 {
        if let number = memberNumbers[id] { return number }
        let number: Int32
        if let reused = freeMemberNumbers.popLast() {
            number = reused
            memberIDs[Int(number)] = id
        } else {
            number = Int32(members.count)
            members.append(Person())
            memberQueuedAt.append(.max)
            beaconCounts.append(0)
            memberIDs.append(id)
        }
        memberNumbers[id] = number
        return number
    }
}
