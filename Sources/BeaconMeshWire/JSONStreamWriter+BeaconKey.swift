import BeaconMeshCore

extension JSONStreamWriter {
    /// Writes `key` as its canonical text (exactly `key.description`), spelled straight into the output: the
    /// scanner writes one per sighting, and building a `String` for each cost more than the rest of the sighting.
    mutating func string(_ key: BeaconKey) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { text in
            let end: Int
            switch key {
            case .iBeacon(let id, let major, let minor):
                end = BeaconKeyText.identifiers(id, major, minor, into: text, at: BeaconKeyText.literal("ibeacon:", into: text, at: 0))
            case .altBeacon(let id1, let id2, let id3):
                end = BeaconKeyText.identifiers(id1, id2, id3, into: text, at: BeaconKeyText.literal("altbeacon:", into: text, at: 0))
            case .eddystone(let namespaceHigh, let namespaceLow, let instance):
                var at = BeaconKeyText.literal("eddystone:", into: text, at: 0)
                HexDigits.write(namespaceHigh, digits: 16, into: text, at: at)
                HexDigits.write(UInt64(namespaceLow), digits: 4, into: text, at: at + 16)
                text[at + 20] = UInt8(ascii: ":")
                at += 21
                HexDigits.write(instance, digits: 12, into: text, at: at)
                end = at + 12
            case .eddystoneEID(let ephemeralID):
                let at = BeaconKeyText.literal("eddystone-eid:", into: text, at: 0)
                HexDigits.write(ephemeralID, digits: 16, into: text, at: at)
                end = at + 16
            }
            string(ascii: UnsafeBufferPointer(rebasing: text[..<end]))
        }
    }
}

/// The pieces of a canonical beacon key's text, each written at an offset of a buffer and returning the offset
/// after it (no captured state, so no exclusivity checks at run time).
private enum BeaconKeyText {
    static func literal(_ part: StaticString, into text: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        part.withUTF8Buffer { bytes in
            _ = UnsafeMutableBufferPointer(rebasing: text[offset...]).initialize(from: bytes)
            return offset + bytes.count
        }
    }

    /// `uuid:first:second`, the UUID in lower-case 8-4-4-4-12.
    static func identifiers(
        _ uuid: BeaconUUID, _ first: UInt16, _ second: UInt16, into text: UnsafeMutableBufferPointer<UInt8>,
        at offset: Int
    ) -> Int {
        HexDigits.write(uuid.high >> 32, digits: 8, into: text, at: offset)
        text[offset + 8] = UInt8(ascii: "-")
        HexDigits.write(uuid.high >> 16 & 0xFFFF, digits: 4, into: text, at: offset + 9)
        text[offset + 13] = UInt8(ascii: "-")
        HexDigits.write(uuid.high & 0xFFFF, digits: 4, into: text, at: offset + 14)
        text[offset + 18] = UInt8(ascii: "-")
        HexDigits.write(uuid.low >> 48, digits: 4, into: text, at: offset + 19)
        text[offset + 23] = UInt8(ascii: "-")
        HexDigits.write(uuid.low & 0xFFFF_FFFF_FFFF, digits: 12, into: text, at: offset + 24)
        text[offset + 36] = UInt8(ascii: ":")
        let afterFirst = decimal(first, into: text, at: offset + 37)
        text[afterFirst] = UInt8(ascii: ":")
        return decimal(second, into: text, at: afterFirst + 1)
    }

    static func decimal(_ value: UInt16, into text: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        let digits = value < 10 ? 1 : value < 100 ? 2 : value < 1000 ? 3 : value < 10000 ? 4 : 5
        var rest = value
        var index = offset + digits
        repeat {
            index -= 1
            text[index] = UInt8(truncatingIfNeeded: rest % 10) &+ UInt8(ascii: "0")
            rest /= 10
        } while rest > 0
        return offset + digits
    }
}
