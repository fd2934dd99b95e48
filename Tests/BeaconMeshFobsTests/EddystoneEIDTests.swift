import BeaconMeshCore
import BeaconMeshFobs
import Testing

/// The ids of Google's Eddystone-EID computation, checked against published vectors.
@Suite("Eddystone-EID ids")
struct EddystoneEIDTests {
    /// RadiusNetworks' `ephemeral_calc` test suite: identity key 0102…16, K = 10.
    let fob = EddystoneEID(
        identityKey: [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16],
        rotationExponent: 10)!

    @Test("counter 0 gives A9B76A71C5F89290; every counter of the window 1024-2047 gives 4144413E45FEFA58")
    func publishedVectors() {
        #expect(fob.ephemeralID(counter: 0) == 0xA9B7_6A71_C5F8_9290)
        #expect(fob.ephemeralID(counter: 1023) == 0xA9B7_6A71_C5F8_9290)
        for counter: UInt32 in [1024, 1500, 2047] { #expect(fob.ephemeralID(counter: counter) == 0x4144_413E_45FE_FA58) }
        #expect(fob.ephemeralID(counter: 2048) != 0x4144_413E_45FE_FA58)
        #expect(fob.beaconKey(counter: 0).description == "eddystone-eid:a9b76a71c5f89290")
    }

    @Test("windows last 2^K seconds; another K or another key gives other ids")
    func windowsAndKeys() throws {
        #expect(fob.rotationSeconds == 1024 && fob.windowStart(of: 3000) == 2048)
        let everySecond = try #require(EddystoneEID(identityKey: Array(repeating: 0x01, count: 16), rotationExponent: 0))
        #expect(everySecond.ephemeralID(counter: 7) != everySecond.ephemeralID(counter: 8))
        let otherK = try #require(
            EddystoneEID(
                identityKey: [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16],
                rotationExponent: 11))
        #expect(otherK.ephemeralID(counter: 0) != fob.ephemeralID(counter: 0))
        // The temporary key changes with the counter's top 16 bits: ids of the same low bits in two such eras differ.
        #expect(fob.ephemeralID(counter: 0x0001_0000) != fob.ephemeralID(counter: 0x0002_0000))
    }

    @Test("a key not of 16 bytes or a K over 15 makes no fob")
    func badParameters() {
        #expect(EddystoneEID(identityKey: Array(repeating: 1, count: 15), rotationExponent: 10) == nil)
        #expect(EddystoneEID(identityKey: Array(repeating: 1, count: 17), rotationExponent: 10) == nil)
        #expect(EddystoneEID(identityKey: Array(repeating: 1, count: 16), rotationExponent: 16) == nil)
    }
}
