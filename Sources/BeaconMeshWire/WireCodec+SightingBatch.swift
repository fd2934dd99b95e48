import BeaconMeshCore

extension WireCodec {
    /// The sighting batch payload of `stores/{s}/departments/{d}/nodes/{n}/sightings`.
    ///
    /// A node with thousands of beacons in view sends this twice a second, so it is written straight into json-c
    /// and printed one sighting at a time: memory stays proportional to the output, not to a document tree.
    public static func encode(_ batch: SightingBatch) -> [UInt8] {
        var writer = JSONStreamWriter(capacity: 160 + batch.sightings.count * 150) { body in
            body.set("v", 1)
            body.set("store", Int(batch.node.store))
            body.set("department", Int(batch.node.department))
            body.set("node", batch.node.node)
            body.set("boot", batch.boot)
            body.set("seq", Int64(batch.seq))
            body.set("sentAt", batch.sentAt.milliseconds)
        }
        writer.objects("sightings", batch.sightings) { sighting, item in
            item.set("beacon", sighting.beacon.description)
            item.set("rssi", sighting.rssi)
            item.set("count", sighting.count)
            if let txPower = sighting.txPower { item.set("txPower", txPower) } else { item.setNull("txPower") }
            if let distance = sighting.distance { item.set("distance", distance) } else { item.setNull("distance") }
            item.set("proximity", sighting.proximity.rawValue)
            item.set("lastSeen", sighting.lastSeen.milliseconds)
            if let address = sighting.address { item.set("addr", address.description) }
            if let rssiMax = sighting.rssiMax { item.set("rssiMax", rssiMax) }
            if let firstSeen = sighting.firstSeen { item.set("firstSeen", firstSeen.milliseconds) }
            if let battery = sighting.battery { item.set("battery", battery) }
            if let temperature = sighting.temperature { item.set("temperature", temperature) }
        }
        if !batch.lost.isEmpty { writer.strings("lost", batch.lost.map(\.description)) }
        return writer.finish()
    }

    /// Reads a sighting batch; every field the contract names must be there with its type and a possible value.
    public static func decodeSightingBatch(_ bytes: [UInt8]) throws(WireError) -> SightingBatch {
        try JSONCReader.withVersion1Document(bytes) { body throws(WireError) in
            let store = try body.uint16(.store)
            let department = try body.uint16(.department)
            let nodeID = try body.string(.node)
            guard let node = NodeAddress(store: store, department: department, node: nodeID) else {
                throw .absurdValue(field: "node", value: nodeID)
            }
            let sequence = try body.int(.seq)
            guard sequence >= 1 else { throw .absurdValue(field: "seq", value: String(sequence)) }
            var sightings: [Sighting] = []
            try body.forEachObject(.sightings) { item throws(WireError) in sightings.append(try decodeSighting(item)) }
            return SightingBatch(node: node, boot: try body.string(.boot), seq: UInt64(sequence),
                                 sentAt: try body.timestamp(.sentAt), sightings: sightings, lost: try body.optionalBeaconKeys(.lost))
        }
    }

    private static func decodeSighting(_ item: JSONCReader) throws(WireError) -> Sighting {
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
private extension JSONCKey {
    static let store = JSONCKey("store")
    static let department = JSONCKey("department")
    static let node = JSONCKey("node")
    static let boot = JSONCKey("boot")
    static let seq = JSONCKey("seq")
    static let sentAt = JSONCKey("sentAt")
    static let sightings = JSONCKey("sightings")
    static let lost = JSONCKey("lost")
    static let beacon = JSONCKey("beacon")
    static let rssi = JSONCKey("rssi")
    static let count = JSONCKey("count")
    static let txPower = JSONCKey("txPower")
    static let distance = JSONCKey("distance")
    static let proximity = JSONCKey("proximity")
    static let lastSeen = JSONCKey("lastSeen")
    static let address = JSONCKey("addr")
    static let rssiMax = JSONCKey("rssiMax")
    static let firstSeen = JSONCKey("firstSeen")
    static let battery = JSONCKey("battery")
    static let temperature = JSONCKey("temperature")
}
