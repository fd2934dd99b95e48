import BeaconMeshCore

extension JSONStreamWriter {
    /// Writes `key` as its canonical text (exactly `key.description`), spelled straight into the output: the
    /// scanner writes one per sighting, and building a `String` for each cost more than the rest of the sighting.
    mutating func string(_ key: BeaconKey) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { text in
            var end = 0
            func literal(_ part: StaticString) {
                part.withUTF8Buffer { bytes in
                    for byte in bytes {
                        text[end] = byte
                        end += 1
                    }
                }
            }
            func hex(_ value: UInt64, digits: Int) {
                HexDigits.write(value, digits: digits, into: text, at: end)
                end += digits
            }
            func uuid(_ uuid: BeaconUUID) {
                hex(uuid.high >> 32, digits: 8)
                literal("-")
                hex(uuid.high >> 16 & 0xFFFF, digits: 4)
                literal("-")
                hex(uuid.high & 0xFFFF, digits: 4)
                literal("-")
                hex(uuid.low >> 48, digits: 4)
                literal("-")
                hex(uuid.low & 0xFFFF_FFFF_FFFF, digits: 12)
            }
            func decimal(_ value: UInt16) {
                var digits = 1
                var limit = 10
                while Int(value) >= limit {
                    digits += 1
                    limit *= 10
                }
                var rest = value
                for index in stride(from: end + digits - 1, through: end, by: -1) {
                    text[index] = UInt8(truncatingIfNeeded: rest % 10) &+ UInt8(ascii: "0")
                    rest /= 10
                }
                end += digits
            }
            switch key {
            case .iBeacon(let id, let major, let minor):
                literal("ibeacon:")
                uuid(id)
                literal(":")
                decimal(major)
                literal(":")
                decimal(minor)
            case .altBeacon(let id1, let id2, let id3):
                literal("altbeacon:")
                uuid(id1)
                literal(":")
                decimal(id2)
                literal(":")
                decimal(id3)
            case .eddystone(let namespaceHigh, let namespaceLow, let instance):
                literal("eddystone:")
                hex(namespaceHigh, digits: 16)
                hex(UInt64(namespaceLow), digits: 4)
                literal(":")
                hex(instance, digits: 12)
            }
            string(ascii: UnsafeBufferPointer(rebasing: text[..<end]))
        }
    }
}
