import BeaconMeshCore

extension WireCodec {
    /// The ranging report payload of `stores/{store}/members/{member}/ranging`.
    public static func encode(_ report: RangingReport) -> [UInt8] {
        serialize(.object([
            ("v", .integer(1)), ("member", .string(report.member)), ("session", .string(report.session)),
            ("seq", .integer(report.seq)), ("sentAt", .timestamp(report.sentAt)),
            ("beacons", .array(report.beacons.map { beacon in
                .object([
                    ("department", .integer(beacon.department)), ("proximity", .string(beacon.proximity.rawValue)),
                    ("rssi", beacon.rssi.map(JSONValue.double) ?? .null), ("accuracy", beacon.accuracy.map(JSONValue.double) ?? .null),
                ])
            })),
        ]))
    }

    /// Reads a ranging report: every field typed as the contract says, `seq` from 1, at most 256 beacons.
    public static func decodeRangingReport(_ bytes: [UInt8]) throws(WireError) -> RangingReport {
        let body = try parseVersion1(bytes)
        let seq = try body.int("seq")
        guard seq >= 1 else { throw .absurdValue(field: "seq", value: String(seq)) }
        let list = try body.array("beacons")
        guard list.count <= 256 else { throw .absurdValue(field: "beacons", value: "\(list.count) beacons") }
        var beacons: [RangingReport.RangedBeacon] = []
        beacons.reserveCapacity(list.count)
        for (index, element) in list.enumerated() {
            let beacon = try JSONReader(element, path: "beacons[\(index)]")
            let rssi = try beacon.optionalDouble("rssi")
            if let rssi, !(-127...20).contains(rssi) { throw .absurdValue(field: "beacons[\(index)].rssi", value: "\(rssi)") }
            let accuracy = try beacon.optionalDouble("accuracy")
            if let accuracy, !(accuracy >= 0 && accuracy.isFinite) {
                throw .absurdValue(field: "beacons[\(index)].accuracy", value: "\(accuracy)")
            }
            beacons.append(.init(department: try beacon.uint16("department"), proximity: try beacon.proximity("proximity"),
                                 rssi: rssi, accuracy: accuracy))
        }
        let session = try body.string("session")
        guard !session.isEmpty, session.utf8.count <= 64 else { throw .absurdValue(field: "session", value: session) }
        return RangingReport(member: try body.string("member"), session: session, seq: UInt64(seq),
                             sentAt: try body.timestamp("sentAt"), beacons: beacons)
    }

    /// The check-in request payload of `stores/{store}/checkins`.
    public static func encode(_ request: CheckinRequest) -> [UInt8] {
        serialize(.object([
            ("v", .integer(1)), ("id", .string(request.id)), ("member", .string(request.member)),
            ("department", .integer(request.department)), ("till", .string(request.till)), ("at", .timestamp(request.at)),
        ]))
    }

    /// Reads a check-in request; its `id` must be 1 to 128 characters.
    public static func decodeCheckinRequest(_ bytes: [UInt8]) throws(WireError) -> CheckinRequest {
        let body = try parseVersion1(bytes)
        let id = try body.string("id")
        guard (1...128).contains(id.utf8.count) else { throw .absurdValue(field: "id", value: id) }
        return CheckinRequest(id: id, member: try body.string("member"), department: try body.uint16("department"),
                              till: try body.optionalString("till") ?? "", at: try body.optionalTimestamp("at") ?? Timestamp(milliseconds: 0))
    }

    /// The registry event payload of `registry/events`: ids only.
    public static func encode(_ event: RegistryEvent) -> [UInt8] {
        serialize(.object([
            ("v", .integer(1)), ("id", .string(event.id)), ("type", .string(event.kind.rawValue)), ("member", .string(event.member)),
            ("at", .timestamp(event.at)),
        ]))
    }

    /// Reads a registry event.
    public static func decodeRegistryEvent(_ bytes: [UInt8]) throws(WireError) -> RegistryEvent {
        let body = try parseVersion1(bytes)
        guard let kind = RegistryEvent.Kind(rawValue: try body.string("type")) else {
            throw .wrongType(field: "type", expected: RegistryEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return RegistryEvent(id: try body.string("id"), kind: kind, member: try body.string("member"), at: try body.timestamp("at"))
    }
}
