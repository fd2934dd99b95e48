import BeaconMeshCore
import Testing

@testable import BeaconMeshWire

private let uuid = BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!
private let key = "ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:9:6"

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// The contract's survey mark with the given members after `v` (JSON text), for the hostile cases.
private func mark(_ members: String) -> [UInt8] { Array(#"{"v":1,\#(members)}"#.utf8) }

@Suite("Survey mark on the wire")
struct SurveyMarkWireTests {
    @Test("the contract's example decodes: a beacon marked in department 10")
    func contractExample() throws {
        let decoded = try WireCodec.decodeSurveyMark(mark(#""beacon":"\#(key)","department":10,"at":1763769600500"#))
        #expect(
            decoded
                == SurveyMark(beacon: .iBeacon(uuid: uuid, major: 9, minor: 6), department: 10, at: .init(milliseconds: 1_763_769_600_500)))
        #expect(decoded.stop == false)
    }

    @Test("a mark is written exactly as the contract spells it; `stop` appears only on a stop")
    func exactBytes() {
        let beacon = BeaconKey.iBeacon(uuid: uuid, major: 9, minor: 6)
        let at = Timestamp(milliseconds: 1_763_769_600_000)
        #expect(
            text(WireCodec.encode(SurveyMark(beacon: beacon, department: 10, at: at)))
                == #"{"v":1,"beacon":"\#(key)","department":10,"at":1763769600000}"#)
        #expect(
            text(WireCodec.encode(SurveyMark(beacon: beacon, department: nil, at: at)))
                == #"{"v":1,"beacon":"\#(key)","department":null,"at":1763769600000}"#)
        #expect(
            text(WireCodec.encode(.stop(beacon, at: at))) == #"{"v":1,"beacon":"\#(key)","department":null,"at":1763769600000,"stop":true}"#
        )
    }

    @Test(
        "every kind of mark survives a round trip, with every kind of beacon key and the extreme departments",
        arguments: [
            SurveyMark(beacon: .iBeacon(uuid: uuid, major: 0, minor: 65535), department: 0, at: .init(milliseconds: 0)),
            SurveyMark(beacon: .altBeacon(id1: uuid, id2: 1, id3: 2), department: 65535, at: .init(milliseconds: 1)),
            SurveyMark(
                beacon: .eddystone(namespaceHigh: 0x0102_0304_0506_0708, namespaceLow: 0x090A, instance: 0x0B0C_0D0E_0F10), department: nil,
                at: .init(milliseconds: 1_763_769_600_000)),
            .stop(.iBeacon(uuid: uuid, major: 1, minor: 2), at: .init(milliseconds: -5)),
        ])
    func roundTrip(original: SurveyMark) throws {
        #expect(try WireCodec.decodeSurveyMark(WireCodec.encode(original)) == original)
    }

    @Test("`stop: false`, a null department and fields the contract may add later are read as they are")
    func lenientWhereTheContractIs() throws {
        let plain = try WireCodec.decodeSurveyMark(mark(#""beacon":"\#(key)","department":null,"at":5,"stop":false,"surveyor":"ana""#))
        #expect(plain.department == nil && plain.stop == false)
        let stop = try WireCodec.decodeSurveyMark(mark(#""beacon":"\#(key)","department":null,"at":5,"stop":true"#))
        #expect(stop.stop)
    }

    @Test(
        "hostile marks are refused with the reason and the field they break",
        arguments: [
            // Not a v1 object at all.
            ("", "invalid-json", nil),
            ("{", "invalid-json", nil),
            (#"{"v":1,"beacon":"\#(key)","department":10,"at":1} {"#, "invalid-json", nil),
            ("[1]", "wrong-type", "payload"),
            ("null", "invalid-json", nil),
            (#"{"beacon":"\#(key)","department":10,"at":1}"#, "unknown-version", nil),
            (#"{"v":2,"beacon":"\#(key)","department":10,"at":1}"#, "unknown-version", nil),
            (#"{"v":"1","beacon":"\#(key)","department":10,"at":1}"#, "unknown-version", nil),
            (#"{"v":1.0,"beacon":"\#(key)","department":10,"at":1}"#, "unknown-version", nil),
            // The beacon: missing, not a string, not a canonical key.
            (#"{"v":1,"department":10,"at":1}"#, "wrong-type", "beacon"),
            (#"{"v":1,"beacon":null,"department":10,"at":1}"#, "wrong-type", "beacon"),
            (#"{"v":1,"beacon":7,"department":10,"at":1}"#, "wrong-type", "beacon"),
            (#"{"v":1,"beacon":["\#(key)"],"department":10,"at":1}"#, "wrong-type", "beacon"),
            (#"{"v":1,"beacon":"","department":10,"at":1}"#, "absurd-value", "beacon"),
            (#"{"v":1,"beacon":"ibeacon:x:1:2","department":10,"at":1}"#, "absurd-value", "beacon"),
            (#"{"v":1,"beacon":"ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:70000:1","department":10,"at":1}"#, "absurd-value", "beacon"),
            (#"{"v":1,"beacon":"ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1","department":10,"at":1}"#, "absurd-value", "beacon"),
            (#"{"v":1,"beacon":"ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:-2","department":10,"at":1}"#, "absurd-value", "beacon"),
            (#"{"v":1,"beacon":"\#(key) ","department":10,"at":1}"#, "absurd-value", "beacon"),
            (#"{"v":1,"beacon":"\#(key)\u0000x","department":10,"at":1}"#, "absurd-value", "beacon"),
            (#"{"v":1,"beacon":"ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:\uff11:2","department":10,"at":1}"#, "absurd-value", "beacon"),
            (#"{"v":1,"beacon":"eddystone:0102030405060708090a:0b0c0d0e0f","department":10,"at":1}"#, "absurd-value", "beacon"),
            (#"{"v":1,"beacon":"bluetooth:c4:7c:8d:6a:3e:21","department":10,"at":1}"#, "absurd-value", "beacon"),
            // The department: missing, out of 0–65535, not an integer.
            (#"{"v":1,"beacon":"\#(key)","at":1}"#, "wrong-type", "department"),
            (#"{"v":1,"beacon":"\#(key)","department":65536,"at":1}"#, "absurd-value", "department"),
            (#"{"v":1,"beacon":"\#(key)","department":-1,"at":1}"#, "absurd-value", "department"),
            (#"{"v":1,"beacon":"\#(key)","department":99999999999999999999999,"at":1}"#, "absurd-value", "department"),
            (#"{"v":1,"beacon":"\#(key)","department":"10","at":1}"#, "wrong-type", "department"),
            (#"{"v":1,"beacon":"\#(key)","department":10.5,"at":1}"#, "wrong-type", "department"),
            (#"{"v":1,"beacon":"\#(key)","department":1e1,"at":1}"#, "wrong-type", "department"),
            (#"{"v":1,"beacon":"\#(key)","department":true,"at":1}"#, "wrong-type", "department"),
            (#"{"v":1,"beacon":"\#(key)","department":[10],"at":1}"#, "wrong-type", "department"),
            (#"{"v":1,"beacon":"\#(key)","department":{"id":10},"at":1}"#, "wrong-type", "department"),
            // The time and the stop flag.
            (#"{"v":1,"beacon":"\#(key)","department":10}"#, "wrong-type", "at"),
            (#"{"v":1,"beacon":"\#(key)","department":10,"at":"now"}"#, "wrong-type", "at"),
            (#"{"v":1,"beacon":"\#(key)","department":10,"at":1.5}"#, "wrong-type", "at"),
            (#"{"v":1,"beacon":"\#(key)","department":10,"at":null}"#, "wrong-type", "at"),
            (#"{"v":1,"beacon":"\#(key)","department":null,"at":1,"stop":"yes"}"#, "wrong-type", "stop"),
            (#"{"v":1,"beacon":"\#(key)","department":null,"at":1,"stop":1}"#, "wrong-type", "stop"),
            (#"{"v":1,"beacon":"\#(key)","department":null,"at":1,"stop":null}"#, "wrong-type", "stop"),
        ] as [(String, String, String?)])
    func refused(payload: String, reason: String, field: String?) {
        do {
            let decoded = try WireCodec.decodeSurveyMark(Array(payload.utf8))
            Issue.record("\(payload) was read as \(decoded)")
        } catch {
            #expect(error.reason == reason, "\(payload): \(error)")
            switch error {
            case .wrongType(let named, _), .absurdValue(let named, _): #expect(named == field, "\(payload): \(error)")
            default: #expect(field == nil, "\(payload): \(error)")
            }
        }
    }

    @Test("a mark larger than any payload, or nested absurdly deep, is refused before it costs anything")
    func sizeAndDepth() {
        let padding = String(repeating: " ", count: WireCodec.maximumPayloadBytes)
        let huge = Array(#"{"v":1,"beacon":"\#(key)","department":10,"at":1}\#(padding)"#.utf8)
        #expect(throws: WireError.tooLarge(bytes: huge.count)) { try WireCodec.decodeSurveyMark(huge) }
        let deep = mark(#""beacon":"\#(key)","department":10,"at":1,"x":\#(String(repeating: "[", count: 5000))"#)
        #expect(throws: WireError.self) { try WireCodec.decodeSurveyMark(deep) }
    }

    /// Every byte of a valid mark changed, dropped or doubled, one at a time, then a few thousand random corruptions:
    /// each is refused with an error value or read as a mark that writes back to a mark that reads the same.
    @Test("corrupted marks never crash the reader, and whatever is read writes back the same")
    func corruptions() throws {
        let valid = WireCodec.encode(.stop(.iBeacon(uuid: uuid, major: 9, minor: 6), at: .init(milliseconds: 1_763_769_600_000)))
        var corrupted: [[UInt8]] = []
        for index in valid.indices {
            for byte: UInt8 in [0x00, 0x22, 0x2C, 0x30, 0x3A, 0x5C, 0x7B, 0x7D, 0xFF] {
                var copy = valid
                copy[index] = byte
                corrupted.append(copy)
            }
            var dropped = valid
            dropped.remove(at: index)
            corrupted.append(dropped)
            var doubled = valid
            doubled.insert(valid[index], at: index)
            corrupted.append(doubled)
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(truncatingIfNeeded: state >> 1)
        }
        for _ in 0..<3000 {
            var copy = valid
            for _ in 0..<(1 + next() % 4) { copy[next() % copy.count] = UInt8(truncatingIfNeeded: next()) }
            corrupted.append(copy)
        }
        var read = 0
        for payload in corrupted {
            guard let decoded = try? WireCodec.decodeSurveyMark(payload) else { continue }
            read += 1
            #expect(try WireCodec.decodeSurveyMark(WireCodec.encode(decoded)) == decoded, "\(text(payload))")
        }
        #expect(read > 0 && read < corrupted.count, "\(read) of \(corrupted.count) read")
    }
}

@Suite("Survey marks of a member's beacons on the wire")
struct MemberSurveyMarkWireTests {
    @Test("a member's mark is {\"member\":…} in place of the beacon, both ways; both, or an empty id, are refused naming member")
    func memberMarks() throws {
        let mark = SurveyMark(.member("ana"), department: 10, at: Timestamp(milliseconds: 5))
        let text = String(decoding: WireCodec.encode(mark), as: UTF8.self)
        #expect(text == #"{"v":1,"member":"ana","department":10,"at":5}"#)
        #expect(try WireCodec.decodeSurveyMark(Array(text.utf8)) == mark)
        let both = #"{"v":1,"member":"ana","beacon":"ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:9:6","department":10,"at":5}"#
        for hostile in [both, #"{"v":1,"member":"","department":10,"at":5}"#, #"{"v":1,"member":7,"department":10,"at":5}"#] {
            #expect {
                try WireCodec.decodeSurveyMark(Array(hostile.utf8))
            } throws: { error in
                "\(error)".contains("member")
            }
        }
    }
}
