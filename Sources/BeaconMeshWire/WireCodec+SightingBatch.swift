import BeaconMeshCore

extension WireCodec {
    /// The sighting batch payload of `stores/{s}/departments/{d}/nodes/{n}/sightings`.
    ///
    /// A node with thousands of beacons in view sends this twice a second, so it is written as bytes straight into
    /// one buffer, beacon keys included: nothing is built per sighting but its text.
    public static func encode(_ batch: SightingBatch) -> [UInt8] {
        payload(capacity: 160 + batch.sightings.count * 170) { body in
            body.member("v", 1)
            body.member("store", batch.node.store)
            body.member("department", batch.node.department)
            body.member("node", batch.node.node)
            body.member("boot", batch.boot)
            body.member("seq", batch.seq)
            body.member("sentAt", batch.sentAt.milliseconds)
            body.key("sightings")
            body.array(batch.sightings) { sighting, item in
                item.object { item in
                    item.key("beacon")
                    item.string(sighting.beacon)
                    item.member("rssi", sighting.rssi)
                    item.member("count", sighting.count)
                    item.member("txPower", orNull: sighting.txPower)
                    item.member("distance", orNull: sighting.distance)
                    item.member("proximity", sighting.proximity.rawValue)
                    item.member("lastSeen", sighting.lastSeen.milliseconds)
                    if let address = sighting.address { item.member("addr", address.description) }
                    if let rssiMax = sighting.rssiMax { item.member("rssiMax", rssiMax) }
                    if let firstSeen = sighting.firstSeen { item.member("firstSeen", firstSeen.milliseconds) }
                    if let battery = sighting.battery { item.member("battery", battery) }
                    if let temperature = sighting.temperature { item.member("temperature", temperature) }
                }
            }
            if !batch.lost.isEmpty {
                body.key("lost")
                body.array(batch.lost) { key, writer in writer.string(key) }
            }
        }
    }

    /// Reads a sighting batch; every field the contract names must be there with its type and a possible value.
    public static func decodeSightingBatch(_ bytes: [UInt8]) throws(WireError) -> SightingBatch {
        try JSONReader.withVersion1Document(bytes) { body throws(WireError) in
            let store = try body.uint16(.store)
            let department = try body.uint16(.department)
            let nodeID = try body.string(.node)
            guard let node = NodeAddress(store: store, department: department, node: nodeID) else {
                throw .absurdValue(field: "node", value: nodeID)
            }
            let sequence = try body.int(.seq)
            guard sequence >= 1 else { throw .absurdValue(field: "seq", value: String(sequence)) }
            var sightings: [Sighting] = []
            // Room for all at once (a hostile array of empty objects gets no more than a real batch would).
            sightings.reserveCapacity(min(try body.count(.sightings), 8_192))
            try body.forEachObject(.sightings) { item throws(WireError) in sightings.append(try decodeSighting(item)) }
            return SightingBatch(
                node: node, boot: try body.string(.boot), seq: UInt64(sequence),
                sentAt: try body.timestamp(.sentAt), sightings: sightings, lost: try body.optionalBeaconKeys(.lost))
        }
    }

    private static func decodeSighting(_ item: JSONReader) throws(WireError) -> Sighting {
        let beacon = try item.beaconKey(.beacon)
        let rssi = try item.double(.rssi)
        guard rssi >= -127, rssi <= 20 else { throw .absurdValue(field: "\(item.path).rssi", value: String(rssi)) }
        let count = try item.int(.count)
        guard count >= 0 else { throw .absurdValue(field: "\(item.path).count", value: String(count)) }
        let txPower = try item.optionalInt(.txPower)
        if let txPower, !(-127...20).contains(txPower) {
            throw .absurdValue(field: "\(item.path).txPower", value: String(txPower))
        }
        let distance = try item.optionalDouble(.distance)
        if let distance, !(distance >= 0 && distance < 100_000) {
            throw .absurdValue(field: "\(item.path).distance", value: String(distance))
        }
        return Sighting(
            beacon: beacon, rssi: rssi, count: Int(count), txPower: txPower.map(Int.init), distance: distance,
            proximity: try item.proximity(.proximity), lastSeen: try item.timestamp(.lastSeen),
            address: try item.optionalString(.address).flatMap(BluetoothAddress.init),
            rssiMax: try item.optionalInt(.rssiMax).map(Int.init), firstSeen: try item.optionalTimestamp(.firstSeen),
            battery: try item.optionalInt(.battery).map(Int.init), temperature: try item.optionalDouble(.temperature))
    }
}

/// The members of a sighting batch, hashed once.
extension JSONKey {
    fileprivate static let store = JSONKey("store")
    fileprivate static let department = JSONKey("department")
    fileprivate static let node = JSONKey("node")
    fileprivate static let boot = JSONKey("boot")
    fileprivate static let seq = JSONKey("seq")
    fileprivate static let sentAt = JSONKey("sentAt")
    fileprivate static let sightings = JSONKey("sightings")
    fileprivate static let lost = JSONKey("lost")
    fileprivate static let beacon = JSONKey("beacon")
    fileprivate static let rssi = JSONKey("rssi")
    fileprivate static let count = JSONKey("count")
    fileprivate static let txPower = JSONKey("txPower")
    fileprivate static let distance = JSONKey("distance")
    fileprivate static let proximity = JSONKey("proximity")
    fileprivate static let lastSeen = JSONKey("lastSeen")
    fileprivate static let address = JSONKey("addr")
    fileprivate static let rssiMax = JSONKey("rssiMax")
    fileprivate static let firstSeen = JSONKey("firstSeen")
    fileprivate static let battery = JSONKey("battery")
    fileprivate static let temperature = JSONKey("temperature")
}
