extension EIDResolver {
    /// An empty place of the index.
    static let emptyEntry = UInt32.max
    /// Bits of an entry for the place in its fob's ring (rings are at most 602 long: K = 0).
    static let ringBits: UInt32 = 10

    // The index: open addressing with linear probing, at most three quarters full, of 4-byte entries, each a fob's
    // slot and a place in its ring of ids; the id itself is read from `ids`. An id is the output of AES under a key
    // nobody else knows, so its bits are as good as a hash's; they are mixed all the same, for ids a sender makes up.

    /// The entry of the slot's id of `window`.
    func entry(slot: Int, window: Int64) -> UInt32 {
        UInt32(slot) << Self.ringBits | UInt32(ringPlace(slot, window: window) - Int(ringStarts[slot]))
    }

    /// The id an entry stands for.
    func id(of entry: UInt32) -> UInt64 {
        ids[Int(ringStarts[Int(entry >> Self.ringBits)]) + Int(entry & (1 << Self.ringBits - 1))]
    }

    /// Where probing for `id` starts.
    func home(of id: UInt64) -> Int {
        Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - index.count.trailingZeroBitCount))
    }

    /// The slot holding `id` and the window it is the id of, or `nil`.
    func find(_ id: UInt64) -> (slot: Int, window: Int64)? {
        let mask = index.count - 1
        var place = home(of: id)
        while index[place] != Self.emptyEntry {
            let entry = index[place]
            if self.id(of: entry) == id {
                let slot = Int(entry >> Self.ringBits)
                let ring = Int64(Self.ringCapacity(exponents[slot]))
                let exponent = Int64(exponents[slot])
                // The held window whose place in the ring the entry names.
                let first = Int64(firstHeld[slot])
                let steps = (Int64(entry & (1 << Self.ringBits - 1)) - (first >> exponent) % ring + ring) % ring
                return (slot, first + steps << exponent)
            }
            place = (place + 1) & mask
        }
        return nil
    }

    /// Makes room in the index for `count` entries in all.
    mutating func reserveIndex(for count: Int) {
        var size = index.count
        while count * 4 > size * 3 { size *= 2 }
        guard size > index.count else { return }
        let entries = index.filter { $0 != Self.emptyEntry }
        index = [UInt32](repeating: Self.emptyEntry, count: size)
        for entry in entries { insert(entry, id: id(of: entry)) }
    }

    /// Indexes the slot's id of `window` (already in `ids`).
    mutating func insertEntry(slot: Int, window: Int64, id: UInt64) {
        reserveIndex(for: indexed + 1)
        insert(entry(slot: slot, window: window), id: id)
        indexed += 1
    }

    private mutating func insert(_ entry: UInt32, id: UInt64) {
        let mask = index.count - 1
        var place = home(of: id)
        while index[place] != Self.emptyEntry { place = (place + 1) & mask }
        index[place] = entry
    }

    /// Takes the slot's id of `window` out of the index (the id still in `ids`), moving back the entries after it
    /// that probing would otherwise no longer reach.
    mutating func removeEntry(slot: Int, window: Int64) {
        let target = entry(slot: slot, window: window)
        let mask = index.count - 1
        var hole = home(of: id(of: target))
        while index[hole] != target {
            guard index[hole] != Self.emptyEntry else { return }
            hole = (hole + 1) & mask
        }
        var next = (hole + 1) & mask
        while index[next] != Self.emptyEntry {
            // An entry may fill the hole when the hole lies between its home and where it is.
            let home = home(of: id(of: index[next]))
            if (next - home) & mask >= (next - hole) & mask {
                index[hole] = index[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        index[hole] = Self.emptyEntry
        indexed -= 1
    }
}
