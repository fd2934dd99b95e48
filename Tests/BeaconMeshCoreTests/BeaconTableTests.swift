import Testing

@testable import BeaconMeshCore

@Suite("Beacon table")
struct BeaconTableTests {
    private func key(_ number: Int) -> BeaconKey {
        .iBeacon(
            uuid: BeaconUUID(high: 0x0CF0_52C2_97CA_407C, low: 0x84F8_B62A_AC4E_9020), major: UInt16(number >> 16),
            minor: UInt16(number & 0xFFFF))
    }

    @Test("random inserts and removals agree with a Dictionary at every step")
    func agreesWithDictionary() {
        var table = BeaconTable<Int>(seed: 7)
        var model: [BeaconKey: Int] = [:]
        var random = SplitMix64(seed: 99)
        for step in 0..<50_000 {
            let candidate = key(Int(random.next() % 3000))
            if random.next() % 3 == 0 {
                #expect(table.remove(candidate) == model.removeValue(forKey: candidate))
            } else if let position = table.position(of: candidate) {
                table.values[position] = step
                model[candidate] = step
            } else {
                table.insert(candidate, step)
                model[candidate] = step
            }
        }
        #expect(table.count == model.count)
        for (candidate, value) in model {
            let position = table.position(of: candidate)
            #expect(position.map { table.values[$0] } == value)
        }
        for index in 0..<3000 where model[key(index)] == nil {
            #expect(table.position(of: key(index)) == nil)
        }
    }

    @Test("keys of every kind are told apart")
    func kinds() throws {
        var table = BeaconTable<String>(seed: 1)
        let uuid = BeaconUUID(high: 1, low: 2)
        let keys: [BeaconKey] = [
            .iBeacon(uuid: uuid, major: 1, minor: 2), .altBeacon(id1: uuid, id2: 1, id3: 2),
            .eddystone(namespaceHigh: 1, namespaceLow: 2, instance: 3),
        ]
        for key in keys { table.insert(key, key.description) }
        for key in keys { #expect(table.position(of: key).map { table.values[$0] } == key.description) }
    }
}
