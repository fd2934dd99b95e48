/// A map from beacon keys to per-beacon state, built for the scanner's hot path: a lookup costs a multiply-xor
/// hash and usually one probe, where `Dictionary`'s SipHash alone costs hundreds of instructions.
///
/// Entries live in insertion order in two dense arrays (so iterating is a plain loop and a position stays valid
/// until the next removal); an open-addressing index with linear probing finds them. The hash is seeded per table,
/// so adverts crafted to collide cannot be prepared in advance.
public struct BeaconTable<Value: Sendable>: Sendable {
    public private(set) var keys: [BeaconKey] = []
    /// The values, position by position with `keys`; mutate in place through `values[position]`.
    public var values: [Value] = []
    private var slots: [Int32]
    private var mask: Int
    private let seed: UInt64

    public init(seed: UInt64 = UInt64.random(in: .min ... .max)) {
        self.seed = seed
        slots = [Int32](repeating: -1, count: 16)
        mask = 15
    }

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    /// The position of `key`, if present.
    public func position(of key: BeaconKey) -> Int? {
        var slot = Int(truncatingIfNeeded: hash(key)) & mask
        while true {
            let entry = slots[slot]
            if entry < 0 { return nil }
            if keys[Int(entry)] == key { return Int(entry) }
            slot = (slot + 1) & mask
        }
    }

    /// Adds `key` (which must not be present) with `value`; returns its position.
    @discardableResult
    public mutating func insert(_ key: BeaconKey, _ value: Value) -> Int {
        if (keys.count + 1) * 2 > slots.count { grow() }
        let position = keys.count
        keys.append(key)
        values.append(value)
        place(position)
        return position
    }

    /// Removes `key` and returns its value; the last entry moves into its position.
    @discardableResult
    public mutating func remove(_ key: BeaconKey) -> Value? {
        guard let position = position(of: key) else { return nil }
        removeSlot(of: position)
        let last = keys.count - 1
        if position != last {
            removeSlot(of: last)
            keys.swapAt(position, last)
            values.swapAt(position, last)
            place(position)
        }
        keys.removeLast()
        return values.removeLast()
    }

    func hash(_ key: BeaconKey) -> UInt64 {
        var value: UInt64
        switch key {
        case .iBeacon(let uuid, let major, let minor):
            value = uuid.high &* 0x9E37_79B9_7F4A_7C15 ^ uuid.low ^ (UInt64(major) << 16 | UInt64(minor))
        case .altBeacon(let id1, let id2, let id3):
            value = id1.high &* 0xC2B2_AE3D_27D4_EB4F ^ id1.low ^ (UInt64(id2) << 16 | UInt64(id3))
        case .eddystone(let namespaceHigh, let namespaceLow, let instance):
            value = namespaceHigh &* 0x1656_67B1_9E37_79F9 ^ instance ^ UInt64(namespaceLow) << 48
        case .eddystoneEID(let ephemeralID):
            value = ephemeralID &* 0x27D4_EB2F_1656_67C5
        }
        value ^= seed
        value = (value ^ (value >> 32)) &* 0xD6E8_FEB8_6659_FD93
        return value ^ (value >> 29)
    }

    private mutating func place(_ position: Int) {
        var slot = Int(truncatingIfNeeded: hash(keys[position])) & mask
        while slots[slot] >= 0 { slot = (slot + 1) & mask }
        slots[slot] = Int32(position)
    }

    /// Empties the slot pointing at `position`, shifting later entries of its probe run back (no tombstones).
    private mutating func removeSlot(of position: Int) {
        var slot = Int(truncatingIfNeeded: hash(keys[position])) & mask
        while Int(slots[slot]) != position { slot = (slot + 1) & mask }
        var hole = slot
        var next = (slot + 1) & mask
        while slots[next] >= 0 {
            let home = Int(truncatingIfNeeded: hash(keys[Int(slots[next])])) & mask
            // Move the entry back if its home is not cyclically within (hole, next].
            let distanceToNext = (next - home) & mask
            let distanceToHole = (hole - home) & mask
            if distanceToHole < distanceToNext {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = -1
    }

    private mutating func grow() {
        slots = [Int32](repeating: -1, count: slots.count * 2)
        mask = slots.count - 1
        for position in keys.indices { place(position) }
    }
}
