import Testing

@testable import BeaconMeshCore

@Suite("Beacon keys")
struct BeaconKeyTests {
    @Test(
        "canonical keys parse and print back exactly",
        arguments: [
            "ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:9:6",
            "altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:2",
            "eddystone:8b0ca750e7a74e14bd99:0000000004d2", "eddystone-eid:a9b76a71c5f89290",
        ])
    func roundTrip(text: String) throws {
        let key = try #require(BeaconKey(text))
        #expect(key.description == text)
    }

    @Test(
        "malformed keys are refused",
        arguments: [
            "", "ibeacon", "ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:9", "ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:9:70000",
            "ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e902:9:6", "ibeacon:0cf052c2x97ca-407c-84f8-b62aac4e9020:9:6",
            "ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:-1:6", "eddystone:8b0ca750e7a74e14bd9:0000000004d2",
            "eddystone:8b0ca750e7a74e14bd99:0000000004d2:1", "bluetooth:1:2:3", "eddystone-eid:a9b76a71c5f8929",
            "eddystone-eid:a9b76a71c5f892900", "eddystone-eid:a9b76a71c5f8929g", "eddystone-eid:", "eddystone:a9b76a71c5f89290",
        ])
    func refused(text: String) {
        #expect(BeaconKey(text) == nil)
    }

    @Test("keys order by kind, then numerically")
    func ordering() throws {
        let nine = try #require(BeaconKey("ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:9"))
        let ten = try #require(BeaconKey("ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:10"))
        let alt = try #require(BeaconKey("altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:2"))
        #expect([ten, nine, alt].sorted() == [alt, nine, ten])
        // Eddystone-EID sorts where its key does: after Eddystone-UID, before iBeacon; ids as numbers.
        let uid = try #require(BeaconKey("eddystone:8b0ca750e7a74e14bd99:0000000004d2"))
        let low = try #require(BeaconKey("eddystone-eid:0000000000000009"))
        let high = try #require(BeaconKey("eddystone-eid:00000000000000a0"))
        #expect([nine, high, uid, low, alt].sorted() == [alt, uid, low, high, nine])
        #expect(BeaconKey("EDDYSTONE-EID:A9B76A71C5F89290".lowercased()) == BeaconKey("eddystone-eid:a9b76a71c5f89290"))
    }
}
