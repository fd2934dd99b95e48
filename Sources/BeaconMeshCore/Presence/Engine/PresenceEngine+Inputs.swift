extension PresenceEngine {
    /// Applies one node's batch received at `now`.
    public mutating func ingest(_ batch: SightingBatch, at now: Timestamp) -> (verdict: BatchVerdict, outputs: [Output]) {
        let address = batch.node
        guard timings.serves(store: address.store) else { return (.unknownStore, []) }
        var outputs: [Output] = []
        let isNew = nodeNumbers[address] == nil
        let node = nodeNumber(for: address)
        var track = nodes[Int(node)]
        if track.sequence.epoch == batch.boot, track.state == .offline {
            // Its last will said offline. A batch it numbered before that is dropped; a newer one proves a
            // reconnection (its resent queue may reach the broker before its `online` status does).
            guard track.sequence.isNewer(batch.seq) else {
                if track.sequence.drop(batch.seq) { counters.gaps -= 1 }
                counters.fromOfflineNodes += 1
                nodes[Int(node)] = track
                return (.nodeOffline, [])
            }
            track.state = .online
            outputs.append(.node(address, .online, at: now))
            outputs.append(.presenceChanged(store: address.store))
        }
        switch admit(batch.seq, epoch: batch.boot, sentAt: batch.sentAt, at: now, from: &track) {
        case .duplicate:
            return (.duplicate, [])
        case .late:
            // Its readings are older than ones applied: dropped (if it was counted missing, it was only late).
            nodes[Int(node)] = track
            return (.late, [])
        case .next:
            break
        case .newEpoch:
            if track.state == .offline || isNew {
                outputs.append(.node(address, .online, at: now))
                outputs.append(.presenceChanged(store: address.store))
            }
            track.state = .online
        }
        let nowMilliseconds = now.milliseconds
        nodes[Int(node)] = track
        counters.batches += 1
        counters.sightings += UInt64(batch.sightings.count)
        batchNumber += 1

        var touched: [Int32] = []
        for sighting in batch.sightings {
            let reading = Reading(
                node: node, store: address.store, department: address.department, rssi: sighting.rssi,
                latest: sighting.rssi,
                proximity: sighting.proximity,
                lastSeen: track.clock.local(sighting.lastSeen.milliseconds, now: nowMilliseconds))
            let beacon = sighting.beacon
            if let position = owners.position(of: beacon) {
                let member = owners.values[position]
                let wasTracked = members[Int(member)].isTracked
                if members[Int(member)].absorb(reading, now: nowMilliseconds) { membersHeardBy[Int(node)].insert(member) }
                if !wasTracked { trackedMembers += 1 }
                if members[Int(member)].lastBatch != batchNumber {
                    members[Int(member)].lastBatch = batchNumber
                    touched.append(member)
                }
            } else if !references.isEmpty, references[beacon] != nil {
                references[beacon]!.absorb(reading)
            } else {
                guests.hear(beacon, reading, at: nowMilliseconds)
            }
        }
        for beacon in batch.lost {
            if let position = owners.position(of: beacon) {
                let member = owners.values[position]
                changeMember(member) { $0.readings.removeAll { $0.node == node } }
                if members[Int(member)].lastBatch != batchNumber {
                    members[Int(member)].lastBatch = batchNumber
                    touched.append(member)
                }
            } else if !references.isEmpty, references[beacon] != nil {
                references[beacon]!.removeAll { $0.node == node }
            } else {
                guests.lose(beacon, node: node, at: nowMilliseconds)
            }
        }
        if !batch.sightings.isEmpty || !batch.lost.isEmpty { outputs.append(.presenceChanged(store: address.store)) }
        for member in touched {
            // A surveyed decision weighs every department: one is taken at most every `surveyDecisionInterval`; the
            // readings of batches in between are kept and decided at the next one (a tick, or a later batch).
            let surveyedAt = members[Int(member)].surveyedAt
            if surveyedAt > nowMilliseconds - Self.surveyDecisionInterval {
                let due = surveyedAt + Self.surveyDecisionInterval
                members[Int(member)].nextCheck = min(members[Int(member)].nextCheck, due)
                scheduleMember(member, at: due)
                continue
            }
            evaluate(member: member, at: nowMilliseconds, into: &outputs)
        }
        return (.applied, outputs)
    }

    /// Applies a ranging report of `member`'s phone in `store`, received at `now`: each ranged department beacon
    /// is a reading of the member in that department, under the same rules as node sightings; a department the
    /// phone no longer ranges stops counting at once (as a node's `lost`).
    public mutating func ingest(_ report: RangingReport, store: UInt16, at now: Timestamp) -> (verdict: RangingVerdict, outputs: [Output]) {
        guard timings.serves(store: store) else { return (.unknownStore, []) }
        guard let member = memberNumbers[report.member] else { return (.unknownMember, []) }
        let key = PhoneKey(store: store, member: member)
        var phone = phones[key] ?? PhoneTrack()
        switch admit(report.seq, epoch: report.session, sentAt: report.sentAt, at: now, from: &phone) {
        case .duplicate:
            return (.duplicate, [])
        case .late:
            phones[key] = phone
            return (.late, [])
        case .next, .newEpoch:
            break
        }
        let nowMilliseconds = now.milliseconds
        phones[key] = phone
        counters.rangingReports += 1
        counters.sightings += UInt64(report.beacons.count)

        let seen = phone.clock.local(report.sentAt.milliseconds, now: nowMilliseconds)
        let before = marks(of: member)
        var ranged: [Int32] = []
        for beacon in report.beacons where departments[store]?[beacon.department] != nil {
            let node = phoneNode(store: store, department: beacon.department)
            ranged.append(node)
            members[Int(member)].absorb(
                Reading(
                    node: node, store: store, department: beacon.department, rssi: beacon.signal,
                    latest: beacon.signal, proximity: beacon.proximity, lastSeen: seen),
                now: nowMilliseconds)
        }
        members[Int(member)].readings.removeAll { reading in
            reading.store == store && nodes[Int(reading.node)].isPhone && !ranged.contains(reading.node)
        }
        reindex(member, from: before)
        var outputs: [Output] = [.presenceChanged(store: store)]
        batchNumber += 1
        members[Int(member)].lastBatch = batchNumber
        evaluate(member: member, at: nowMilliseconds, into: &outputs)
        return (.applied, outputs)
    }

    /// Applies a node's status change (its retained status or last will).
    public mutating func nodeStatusChanged(_ address: NodeAddress, state: LinkState, boot: String?, at now: Timestamp) -> [Output] {
        guard timings.serves(store: address.store) else { return [] }
        let known = nodeNumbers[address].map { nodes[Int($0)] }
        if let known, known.state == state, state == .offline || known.sequence.epoch == boot { return [] }
        let node = nodeNumber(for: address)
        nodes[Int(node)].state = state
        nodes[Int(node)].sequence.statusChanged(epoch: boot)
        var outputs: [Output] = [.node(address, state, at: now), .presenceChanged(store: address.store)]
        if state == .offline {
            let heard = membersHeardBy[Int(node)].sorted()
            membersHeardBy[Int(node)] = []
            for number in heard where members[Int(number)].readings.contains(where: { $0.node == node }) {
                changeMember(number) { $0.readings.removeAll { $0.node == node } }
                evaluate(member: number, at: now.milliseconds, into: &outputs)
            }
            guests.dropReadings(of: node, at: now.milliseconds)
        }
        return outputs
    }

    /// Advances time: settles arrivals, completes switches whose dwell has passed, ends presences, drops old guests.
    public mutating func tick(at now: Timestamp) -> [Output] {
        var outputs: [Output] = []
        let nowMilliseconds = now.milliseconds
        // The members whose time has come, each once, in member order (those pushed again below wait for the next tick).
        var due: [Int32] = []
        while let entry = memberDeadlines.popDue(at: nowMilliseconds) {
            guard memberQueuedAt[Int(entry.id)] == entry.deadline else { continue }
            memberQueuedAt[Int(entry.id)] = .max
            due.append(entry.id)
        }
        if evaluatesEveryoneOnTick { due = members.indices.map { Int32($0) } }
        due.sort()
        for number in due {
            // Read in place: a copy of the person would retain (and then release) each of its arrays.
            let index = Int(number)
            guard members[index].firstHeard != nil || members[index].visit != nil && members[index].visit?.leftAt == nil else { continue }
            let nextCheck = members[index].nextCheck
            guard nextCheck <= nowMilliseconds || evaluatesEveryoneOnTick else {
                scheduleMember(number, at: nextCheck)
                continue
            }
            evaluate(member: number, at: nowMilliseconds, into: &outputs)
        }
        if outputs.count > 1 { outputs = PresenceEngine.inMemberOrder(outputs) }
        outputs += guests.expire(at: nowMilliseconds).sorted().map { .presenceChanged(store: $0) }
        return outputs
    }
}
