import BeaconMeshCore

extension WireCodec {
    /// The ranging report payload of `stores/{store}/members/{member}/ranging`.
    public static func encode(_ report: RangingReport) -> [UInt8] {
        payload { body in
            body.member("v", 1)
            body.member("member", report.member)
            body.member("session", report.session)
            body.member("seq", report.seq)
            body.member("sentAt", report.sentAt)
            body.key("beacons")
            body.array(report.beacons) { beacon, writer in
                writer.object { item in
                    item.member("department", beacon.department)
                    item.member("proximity", beacon.proximity.rawValue)
                    item.member("rssi", orNull: beacon.rssi)
                    item.member("accuracy", orNull: beacon.accuracy)
                }
            }
        }
    }

    /// Reads a ranging report: every field typed as the contract says, `seq` from 1, at most 256 beacons.
    public static func decodeRangingReport(_ bytes: [UInt8]) throws(WireError) -> RangingReport {
        try JSONReader.withVersion1Document(bytes) { body throws(WireError) in
            let seq = try body.int("seq")
            guard seq >= 1 else { throw .absurdValue(field: "seq", value: String(seq)) }
            let count = try body.count("beacons")
            guard count <= 256 else { throw .absurdValue(field: "beacons", value: "\(count) beacons") }
            var beacons: [RangingReport.RangedBeacon] = []
            beacons.reserveCapacity(count)
            try body.forEachObject("beacons") { beacon throws(WireError) in
                let rssi = try beacon.optionalDouble("rssi")
                if let rssi, !(-127...20).contains(rssi) { throw .absurdValue(field: "\(beacon.path).rssi", value: "\(rssi)") }
                let accuracy = try beacon.optionalDouble("accuracy")
                if let accuracy, !(accuracy >= 0 && accuracy.isFinite) {
                    throw .absurdValue(field: "\(beacon.path).accuracy", value: "\(accuracy)")
                }
                beacons.append(
                    .init(
                        department: try beacon.uint16("department"), proximity: try beacon.proximity("proximity"),
                        rssi: rssi, accuracy: accuracy))
            }
            let session = try body.string("session")
            guard !session.isEmpty, session.utf8.count <= 64 else { throw .absurdValue(field: "session", value: session) }
            return RangingReport(
                member: try body.string("member"), session: session, seq: UInt64(seq),
                sentAt: try body.timestamp("sentAt"), beacons: beacons)
        }
    }

    /// The check-in request payload of `stores/{store}/checkins`.
    public static func encode(_ request: CheckinRequest) -> [UInt8] {
        payload { body in
            body.member("v", 1)
            body.member("id", request.id)
            body.member("member", request.member)
            body.member("department", request.department)
            body.member("till", request.till)
            body.member("at", request.at)
        }
    }

    /// Reads a check-in request; its `id` must be 1 to 128 characters.
    public static func decodeCheckinRequest(_ bytes: [UInt8]) throws(WireError) -> CheckinRequest {
        try JSONReader.withVersion1Document(bytes) { body throws(WireError) in
            let id = try body.string("id")
            guard (1...128).contains(id.utf8.count) else { throw .absurdValue(field: "id", value: id) }
            return CheckinRequest(
                id: id, member: try body.string("member"), department: try body.uint16("department"),
                till: try body.optionalString("till") ?? "", at: try body.optionalTimestamp("at") ?? Timestamp(milliseconds: 0))
        }
    }

    /// The registry event payload of `registry/events`: ids only.
    public static func encode(_ event: RegistryEvent) -> [UInt8] {
        payload { body in
            body.member("v", 1)
            body.member("id", event.id)
            body.member("type", event.kind.rawValue)
            body.member("member", event.member)
            body.member("at", event.at)
        }
    }

    /// Reads a registry event.
    public static func decodeRegistryEvent(_ bytes: [UInt8]) throws(WireError) -> RegistryEvent {
        try JSONReader.withVersion1Document(bytes) { body throws(WireError) in
            guard let kind = RegistryEvent.Kind(rawValue: try body.string("type")) else {
                throw .wrongType(field: "type", expected: RegistryEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return RegistryEvent(id: try body.string("id"), kind: kind, member: try body.string("member"), at: try body.timestamp("at"))
        }
    }
}
