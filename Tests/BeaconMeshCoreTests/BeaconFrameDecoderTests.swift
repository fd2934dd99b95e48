import BeaconMeshCore
import Testing

@Suite("Beacon frame decoder")
struct BeaconFrameDecoderTests {
    private static let uuid = BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!

    /// `1A FF 4C 00 02 15 uuid major minor power`, optionally with a different length byte or tail.
    private static func iBeaconStructure(major: UInt16 = 9, minor: UInt16 = 6, power: Int8 = -59) -> [UInt8] {
        [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid.bytes
            + [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), UInt8(bitPattern: power)]
    }

    private static func eddystone(_ frame: [UInt8]) -> [UInt8] {
        [UInt8(frame.count + 3), 0x16, 0xAA, 0xFE] + frame
    }

    @Test("an iBeacon gives uuid, big-endian major and minor, signed measured power, and its key")
    func iBeacon() throws {
        let frames = BeaconFrameDecoder.frames(
            inAdvertisingData: [0x02, 0x01, 0x06] + Self.iBeaconStructure(major: 0x1234, minor: 0xFEDC, power: -59))
        #expect(frames == [.iBeacon(uuid: Self.uuid, major: 0x1234, minor: 0xFEDC, measuredPower: -59)])
        let frame = try #require(frames.first)
        #expect(frame.key?.description == "ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:4660:65244")
        #expect(frame.measuredPower == -59)
    }

    /// `bytes` with some bytes replaced: (index, new value).
    private static func changed(_ bytes: [UInt8], _ changes: [(Int, UInt8)]) -> [UInt8] {
        var result = bytes
        for (index, value) in changes { result[index] = value }
        return result
    }

    @Test(
        "an iBeacon needs company 0x004C, 02 15 and 23 bytes after the company",
        arguments: [
            ("22 bytes after the company id", changed(Array(iBeaconStructure().dropLast()), [(0, 0x19)])),
            ("another company", changed(iBeaconStructure(), [(2, 0x4D)])),
            ("Apple Continuity, not 02 15", changed(iBeaconStructure(), [(4, 0x10), (5, 0x05)])),
            ("0x16 instead of 0x15 after 02", changed(iBeaconStructure(), [(5, 0x16)])),
            ("service data, not manufacturer data", changed(iBeaconStructure(), [(1, 0x16)])),
        ])
    func notAnIBeacon(_ reason: String, _ bytes: [UInt8]) {
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: bytes).isEmpty, "\(reason)")
    }

    @Test("an iBeacon with extra bytes in its structure is still an iBeacon")
    func iBeaconWithExtraBytes() {
        var structure = Self.iBeaconStructure() + [0xAA]
        structure[0] += 1
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: structure).count == 1)
    }

    @Test("a zero length byte ends the data: structures after it are not read")
    func zeroLengthEndsData() {
        let data = [0x02, 0x01, 0x06, 0x00] + Self.iBeaconStructure()
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: data).isEmpty)
    }

    @Test("a structure running past the end is dropped together with everything after it")
    func overrunDropsRest() {
        let overrunning: [UInt8] = [0x05, 0x09, 0x41, 0x42]  // claims 5 bytes, 3 follow
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: Self.iBeaconStructure() + overrunning).count == 1)
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: Array(Self.iBeaconStructure().dropLast())).isEmpty)
        var lengthTooBig = Self.iBeaconStructure()
        lengthTooBig[0] += 1
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: lengthTooBig).isEmpty)
    }

    @Test("one advertisement can carry several frames; they come out in order")
    func severalFramesInOneAdvertisement() {
        let uid = Self.eddystone([0x00, 0xE7] + Array(0..<10) + [1, 2, 3, 4, 5, 6])
        let frames = BeaconFrameDecoder.frames(inAdvertisingData: uid + Self.iBeaconStructure(major: 1, minor: 2))
        #expect(frames.count == 2)
        #expect(frames.first?.key?.description == "eddystone:00010203040506070809:010203040506")
        #expect(frames.last?.key == .iBeacon(uuid: Self.uuid, major: 1, minor: 2))
    }

    @Test("AltBeacon: company, ids, power, and the mfg-reserved byte only when present")
    func altBeacon() {
        let body: [UInt8] = [0x18, 0x01, 0xBE, 0xAC] + Self.uuid.bytes + [0x00, 0x05, 0x00, 0x03, 0xBE]
        #expect(
            BeaconFrameDecoder.frames(inAdvertisingData: [0x1B, 0xFF] + body + [0x02]) == [
                .altBeacon(company: 0x0118, id1: Self.uuid, id2: 5, id3: 3, measuredPower: -66, mfgReserved: 2)
            ])
        #expect(
            BeaconFrameDecoder.frames(inAdvertisingData: [0x1A, 0xFF] + body) == [
                .altBeacon(company: 0x0118, id1: Self.uuid, id2: 5, id3: 3, measuredPower: -66, mfgReserved: nil)
            ])
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: [0x19, 0xFF] + body.dropLast()).isEmpty)
        var wrongCode = body
        wrongCode[2] = 0xFF
        wrongCode[3] = 0xFF
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: [0x1A, 0xFF] + wrongCode).isEmpty)
        let frame = BeaconFrameDecoder.frames(inAdvertisingData: [0x1A, 0xFF] + body).first
        #expect(frame?.key?.description == "altbeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:5:3")
        #expect(frame?.measuredPower == -66)
    }

    @Test("Eddystone-UID: namespace, instance and power at 0 m; RFU bytes optional")
    func eddystoneUID() {
        let frame: [UInt8] = [0x00, 0xE7] + Array(0..<10) + [0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6]
        let expected = BeaconFrame.eddystoneUID(
            namespace: EddystoneNamespace(high: 0x0001_0203_0405_0607, low: 0x0809),
            instance: EddystoneInstance(value: 0xA1B2_C3D4_E5F6), txPower: -25)
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: Self.eddystone(frame)) == [expected])
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: Self.eddystone(frame + [0, 0])) == [expected])
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: Self.eddystone(Array(frame.dropLast()))).isEmpty)
        #expect(expected.measuredPower == -66, "0 m power minus 41 dB")
        #expect(expected.key?.description == "eddystone:00010203040506070809:a1b2c3d4e5f6")
    }

    @Test(
        "Eddystone-URL expands scheme and suffix bytes",
        arguments: [
            ([0x03] + Array("github".utf8) + [0x00] + Array("citruz".utf8), "https://github.com/citruz"),
            ([0x00] + Array("example".utf8) + [0x0D], "http://www.example.gov"),
            ([0x01, 0x41, 0x08], "https://www.A.org"),
            ([0x02], "http://"),
        ] as [([UInt8], String)])
    func eddystoneURL(encoded: [UInt8], url: String) {
        #expect(
            BeaconFrameDecoder.frames(inAdvertisingData: Self.eddystone([0x10, 0xF8] + encoded)) == [
                .eddystoneURL(url: url, txPower: -8)
            ])
    }

    @Test(
        "Eddystone-URL with an unknown scheme, a reserved byte or no scheme byte yields nothing",
        arguments: [
            [0x10, 0xF8, 0x04, 0x41],
            [0x10, 0xF8, 0x03, 0x41, 0x0E],
            [0x10, 0xF8, 0x03, 0x20],
            [0x10, 0xF8, 0x03, 0x80],
            [0x10, 0xF8],
        ] as [[UInt8]])
    func badEddystoneURL(frame: [UInt8]) {
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: Self.eddystone(frame)).isEmpty)
    }

    @Test("Eddystone-TLM: battery, signed 8.8 temperature (0x8000 → nil), counters; no key, no power")
    func eddystoneTLM() throws {
        let tlm: [UInt8] = [0x20, 0x00, 0x0B, 0x18, 0xFE, 0x80, 0x00, 0x00, 0x14, 0x67, 0x00, 0x00, 0x2A, 0xC4]
        let frame = try #require(BeaconFrameDecoder.frames(inAdvertisingData: Self.eddystone(tlm)).first)
        #expect(
            frame
                == .eddystoneTLM(
                    version: 0, batteryMillivolts: 2840, temperatureCelsius: -1.5, advertCount: 5223,
                    uptimeTenthsOfSeconds: 10948))
        #expect(frame.key == nil)
        #expect(frame.measuredPower == nil)
        var noSensor = tlm
        noSensor[4] = 0x80
        noSensor[5] = 0x00
        #expect(
            BeaconFrameDecoder.frames(inAdvertisingData: Self.eddystone(noSensor)) == [
                .eddystoneTLM(
                    version: 0, batteryMillivolts: 2840, temperatureCelsius: nil, advertCount: 5223,
                    uptimeTenthsOfSeconds: 10948)
            ])
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: Self.eddystone(Array(tlm.dropLast()))).isEmpty)
        var unknownVersion = tlm
        unknownVersion[1] = 0x02
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: Self.eddystone(unknownVersion)).isEmpty)
    }

    @Test("Eddystone eTLM needs its salt and MIC inside the structure")
    func eddystoneETLM() {
        let encrypted = Array(repeating: UInt8(0x41), count: 12)
        let etlm: [UInt8] = [0x20, 0x01] + encrypted + [0xDE, 0xAD, 0xBE, 0xFF]
        #expect(
            BeaconFrameDecoder.frames(inAdvertisingData: Self.eddystone(etlm)) == [
                .eddystoneETLM(encryptedTLM: encrypted, salt: 0xDEAD, messageIntegrityCheck: 0xBEFF)
            ])
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: Self.eddystone(Array(etlm.dropLast()))).isEmpty)
    }

    @Test("Eddystone-EID gives its 8-byte identifier; unknown frame types yield nothing")
    func eddystoneEIDAndUnknown() {
        let eid: [UInt8] = [0x30, 0xE3] + Array("EID_test".utf8)
        #expect(
            BeaconFrameDecoder.frames(inAdvertisingData: Self.eddystone(eid)) == [
                .eddystoneEID(ephemeralID: 0x4549_445F_7465_7374, txPower: -29)
            ])
        #expect(
            BeaconFrameDecoder.frames(inAdvertisingData: Self.eddystone(eid)).first?.key?.description
                == "eddystone-eid:4549445f74657374")
        // Google's EID frame has no optional bytes: one byte more or less is malformed, dropped and counted.
        for wrong in [eid + [0x00], Array(eid.dropLast())] {
            let data = Self.eddystone(wrong)
            #expect(BeaconFrameDecoder.frames(inAdvertisingData: data).isEmpty)
            #expect(data.withUnsafeBytes { BeaconFrameDecoder.forEachFrame(inAdvertisingData: $0) { _ in } } == 1)
        }
        #expect(Self.eddystone(eid).withUnsafeBytes { BeaconFrameDecoder.forEachFrame(inAdvertisingData: $0) { _ in } } == 0)
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: Self.eddystone([0x40, 0x00] + Array(repeating: 0, count: 16))).isEmpty)
        // Service data for another UUID (Estimote 0xFE9A) is not Eddystone.
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: [UInt8(eid.count + 3), 0x16, 0x9A, 0xFE] + eid).isEmpty)
    }

    @Test("empty and garbage data yield nothing", arguments: [[], [0x00], [0xFF], [0x01], [0x30, 0x30, 0x30]] as [[UInt8]])
    func garbage(data: [UInt8]) {
        #expect(BeaconFrameDecoder.frames(inAdvertisingData: data).isEmpty)
    }

    @Test("random bytes after a complete iBeacon never crash the decoder nor hide the iBeacon")
    func randomDataIsSafe() {
        var generator = SplitMix64(seed: 0xEDD1_5704)
        let iBeacon = BeaconFrameDecoder.frames(inAdvertisingData: Self.iBeaconStructure())
        #expect(iBeacon.count == 1)
        for _ in 0..<20_000 {
            var tail = (0..<Int(generator.next() % 40)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            // Often make the tail look like manufacturer or Eddystone data so that those paths get exercised.
            if tail.count > 4 && generator.next() % 2 == 0 {
                tail[0] = UInt8(tail.count - 1)
                tail[1] = [0xFF, 0x16][Int(generator.next() % 2)]
                tail[2] = [0x4C, 0xAA][Int(generator.next() % 2)]
                tail[3] = [0x00, 0xFE, 0xBE][Int(generator.next() % 3)]
            }
            let frames = BeaconFrameDecoder.frames(inAdvertisingData: Self.iBeaconStructure() + tail)
            #expect(frames.first == iBeacon.first, "tail \(HexDigits.string(tail))")
        }
    }
}
