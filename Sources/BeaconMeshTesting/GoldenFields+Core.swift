import BeaconMeshCore

/// Golden-file records of Core's decoded values, so captures and vectors can be compared with refdecode's lines.
extension GoldenFields {
    /// The keys that describe the frame itself (`type` and the beacon fields).
    public static func of(_ frame: BeaconFrame) -> GoldenRecord {
        switch frame {
        case .iBeacon(let uuid, let major, let minor, let measuredPower):
            return [
                "type": .string("ibeacon"), "uuid": .string(uuid.description), "major": GoldenValue(major),
                "minor": GoldenValue(minor), "tx": GoldenValue(measuredPower),
            ]
        case .altBeacon(let company, let id1, let id2, let id3, let measuredPower, let mfgReserved):
            return [
                "type": .string("altbeacon"), "company": .string("0x" + HexDigits.string(UInt64(company), digits: 4)),
                "id1": .string(id1.description), "id2": GoldenValue(id2), "id3": GoldenValue(id3),
                "tx": GoldenValue(measuredPower), "mfg_reserved": mfgReserved.map { GoldenValue($0) } ?? .null,
            ]
        case .eddystoneUID(let namespace, let instance, let txPower):
            return [
                "type": .string("eddystone_uid"), "tx": GoldenValue(txPower),
                "namespace": .string(namespace.description), "instance": .string(instance.description),
            ]
        case .eddystoneURL(let url, let txPower):
            return ["type": .string("eddystone_url"), "tx": GoldenValue(txPower), "url": .string(url)]
        case .eddystoneTLM(let version, let battery, let temperature, let advertCount, let uptime):
            return [
                "type": .string("eddystone_tlm"), "version": GoldenValue(version), "vbatt_mv": GoldenValue(battery),
                "temp_c": temperature.map { .number($0) } ?? .null, "adv_cnt": GoldenValue(advertCount),
                "sec_cnt": GoldenValue(uptime),
            ]
        case .eddystoneETLM(let encrypted, let salt, let check):
            // No golden or vector holds an eTLM yet: these key names are our guess at the reference decoder's.
            return [
                "type": .string("eddystone_etlm"), "version": GoldenValue(1),
                "etlm": .string(HexDigits.string(encrypted)), "salt": GoldenValue(salt), "mic": GoldenValue(check),
            ]
        case .eddystoneEID(let ephemeralID, let txPower):
            return [
                "type": .string("eddystone_eid"), "tx": GoldenValue(txPower),
                "eid": .string(HexDigits.string(ephemeralID, digits: 16)),
            ]
        }
    }

    /// The keys that describe the report a frame came in (`src`, `adv_type`, `addr`, `addr_type`, `rssi`).
    public static func of(_ header: AdvertisingReport.Header) -> GoldenRecord {
        [
            "src": .string(header.kind == .legacy ? "adv" : "ext"), "adv_type": GoldenValue(header.eventType),
            "addr": .string(header.address.description), "addr_type": GoldenValue(header.addressType),
            "rssi": GoldenValue(header.rssi),
        ]
    }
}
