import BeaconMeshRegistry
import Testing

/// A fob's key as a person gives it (`--eid`, the CSV's `eid` column).
@Suite("Fob keys as given")
struct EIDCellTests {
    static let hex = "0102030405060708090a111213141516"

    @Test("HEX32, HEX32:K and, in the CSV, HEX32:K:OFFSET are read; K defaults to 10")
    func readable() throws {
        let plain = try #require(EIDCell(Self.hex, offsetAllowed: false))
        #expect(plain.identityKey == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16])
        #expect(plain.rotationExponent == 10 && plain.offset == nil)
        #expect(EIDCell(Self.hex.uppercased() + ":0", offsetAllowed: false)?.rotationExponent == 0)
        let csv = try #require(EIDCell(Self.hex + ":15:-300", offsetAllowed: true))
        #expect(csv.rotationExponent == 15 && csv.offset == -300)
    }

    @Test(
        "anything else is not a key",
        arguments: [
            String(hex.dropLast(2)), hex + "00", String(hex.dropLast()) + "g", hex + ":16", hex + ":-1", hex + ":x", hex + ":",
            hex + ":10:5", "+" + String(hex.dropFirst()), " " + String(hex.dropFirst()),
        ])
    func unreadable(text: String) {
        #expect(EIDCell(text, offsetAllowed: false) == nil)
    }
}
