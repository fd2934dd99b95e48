import Crypto

/// The coordinator's table of the ids its members' Eddystone-EID fobs may advertise now, so that a sighting's id is
/// one lookup (a pure value: time passed in, no I/O; refresh it ahead of each rotation, off the decision thread).
///
/// For each fob it holds the ids of the windows the contract accepts around the fob's expected counter (the Unix time
/// minus the fob's `offset`): the window holding it, the ones just before and after, and any within
/// `driftAllowance` of it. An id of any other window — a recording replayed later — resolves to nobody. Each time a
/// fob resolves, its offset follows what it advertises (to the second when it is heard changing window), so a fob
/// whose clock drifts a little every day keeps resolving however far it drifts over months.
///
/// A chain has a million fobs, so they are kept flat, a slot each in a few arrays (91 bytes a fob with K = 10,
/// `beacon-bench eid`), never an object per fob: the identity keys in one buffer, each fob's ids in a ring of its own
/// (`ringCapacity`), and the ids indexed by an open-addressed table of 4-byte entries (`EIDResolver+Index.swift`).
/// A fob added or removed changes its own slot and ids only.
public struct EIDResolver: Sendable {
    /// One member's fob: the handle it is decided under, its ids, and where its counter stands (`offset`: Unix
    /// seconds minus the counter).
    public struct Fob: Sendable {
        public var handle: UInt64
        public var eid: EddystoneEID
        public var offset: Int64

        public init(handle: UInt64, eid: EddystoneEID, offset: Int64) {
            self.handle = handle
            self.eid = eid
            self.offset = offset
        }
    }

    /// How far from the expected counter a window may be and still be accepted (a fob's clock drift).
    public static let driftAllowance: Int64 = 300
    /// A fob heard in one window and then in the next within this many seconds changed window in between.
    static let changeHeardWithin: Int64 = 10
    /// The most fobs a resolver holds: an index entry is a fob's slot (22 bits) and a place in its ring (10 bits).
    public static let capacity = 1 << 22 - 1

    // One slot per fob, the arrays side by side. A free slot has handle 0 (handles are never 0).
    var handles: [UInt64] = []
    var identityKeys: [UInt8] = []
    var exponents: [UInt8] = []
    var offsets: [Int64] = []
    /// How far each fob's offset has moved (seconds) since it was registered or last taken by `takeDrifted`.
    var offsetDrifts: [Int32] = []
    /// Where the slot's ring of ids starts in `ids`.
    var ringStarts: [UInt32] = []
    /// The first window whose id the slot holds, and how many it holds (consecutive windows).
    var firstHeld: [UInt32] = []
    var heldCounts: [UInt16] = []
    /// The window the fob was last heard in, and when (Unix seconds; 0: not heard yet).
    var heardWindows: [UInt32] = []
    var heardAt: [UInt32] = []
    /// Every slot's ring of ids: the id of window w is at `ringStarts[slot] + (w >> K) % ringCapacity(K)`.
    var ids: [UInt64] = []
    /// Free slots by their ring's capacity (a slot is reused by a fob whose ring is as long).
    var freeSlots: [Int: [Int]] = [:]
    /// How many fobs have each K.
    var fobsByExponent = [Int](repeating: 0, count: 16)
    /// The open-addressed index of `ids` (`EIDResolver+Index.swift`).
    var index = [UInt32](repeating: emptyEntry, count: 16)
    var indexed = 0

    /// A resolver of `fobs` (their handles distinct and never 0); no ids until `refresh`.
    public init(fobs: [Fob]) {
        self.init(capacity: fobs.count)
        for fob in fobs.prefix(Self.capacity) { place(fob) }
    }

    /// An empty resolver with room for `capacity` fobs of K 9 or more (three windows each), so that adding them one by
    /// one never copies its arrays.
    public init(capacity: Int) {
        handles.reserveCapacity(capacity)
        identityKeys.reserveCapacity(capacity * 16)
        exponents.reserveCapacity(capacity)
        offsets.reserveCapacity(capacity)
        offsetDrifts.reserveCapacity(capacity)
        ringStarts.reserveCapacity(capacity)
        firstHeld.reserveCapacity(capacity)
        heldCounts.reserveCapacity(capacity)
        heardWindows.reserveCapacity(capacity)
        heardAt.reserveCapacity(capacity)
        ids.reserveCapacity(capacity * 3)
        reserveIndex(for: capacity * 3)
    }

    /// How many ids the table holds.
    public var count: Int { indexed }

    /// How many fobs it resolves.
    public var fobCount: Int { fobsByExponent.reduce(0, +) }

    /// The shortest rotation of its fobs, in seconds (`nil`: no fobs).
    public var shortestRotation: UInt32? { fobsByExponent.firstIndex { $0 > 0 }.map { 1 << UInt32($0) } }

    /// Where the counter of the fob `handle` stands as the resolver follows it (Unix seconds minus the counter).
    public func offset(of handle: UInt64) -> Int64? { handles.firstIndex(of: handle).map { offsets[$0] } }

    /// Brings every fob's ids up to `now` (Unix seconds): adds the windows that came into range and drops the ones
    /// that left it. Costs an id per fob per rotation (two AES-128 blocks), nothing for a fob already up to date.
    public mutating func refresh(at now: Int64) {
        for slot in handles.indices where handles[slot] != 0 { refreshSlot(slot, at: now) }
    }

    /// The handle of the fob that advertises `id` at `now`, or `nil` (no member's fob, or a window out of range).
    /// Notes the fob's offset from what it advertised.
    public mutating func resolve(_ id: UInt64, at now: Int64) -> UInt64? {
        guard let (slot, window) = find(id) else { return nil }
        let rotation = Int64(1) << Int64(exponents[slot])
        var offset = offsets[slot]
        if heardAt[slot] > 0, Int64(heardWindows[slot]) + rotation == window, now - Int64(heardAt[slot]) <= Self.changeHeardWithin {
            // Heard in the window after the one it was heard in moments ago: it changed window about now.
            offset = now - window
        } else if now - offset < window {
            offset = now - window
        } else if now - offset >= window + rotation {
            offset = now - (window + rotation - 1)
        }
        heardWindows[slot] = UInt32(window)
        heardAt[slot] = UInt32(clamping: now)
        if offset != offsets[slot] {
            offsetDrifts[slot] = Int32(clamping: Int64(offsetDrifts[slot]) + offset - offsets[slot])
            offsets[slot] = offset
            refreshSlot(slot, at: now)
        }
        return handles[slot]
    }

    /// Adds `fob` (a handle it does not hold yet) with its ids for `now`; `false` when it holds `capacity` fobs.
    @discardableResult
    public mutating func add(_ fob: Fob, at now: Int64) -> Bool {
        guard let slot = place(fob) else { return false }
        refreshSlot(slot, at: now)
        return true
    }

    /// Removes the fobs of `gone` (handles) and their ids, their identity keys overwritten; returns how many it held.
    @discardableResult
    public mutating func remove(_ gone: Set<UInt64>) -> Int {
        // A few handles are looked for one by one (a scan of 8 MB for a million fobs, under a millisecond); many in
        // one pass, each slot's handle looked up in `gone`.
        let slots =
            gone.count <= 16
            ? gone.compactMap { $0 == 0 ? nil : handles.firstIndex(of: $0) }
            : handles.indices.filter { handles[$0] != 0 && gone.contains(handles[$0]) }
        var removed = 0
        for slot in slots {
            let exponent = exponents[slot]
            for window in held(slot) { removeEntry(slot: slot, window: window) }
            for byte in (slot * 16)..<(slot * 16 + 16) { identityKeys[byte] = 0 }
            handles[slot] = 0
            heldCounts[slot] = 0
            fobsByExponent[Int(exponent)] -= 1
            freeSlots[Self.ringCapacity(exponent), default: []].append(slot)
            removed += 1
        }
        return removed
    }

    /// The fobs whose offset has moved `threshold` seconds or more since it was registered (or since it was last taken
    /// here), with their offsets now, by handle: for the registry, so that a restart starts each fob from where it was
    /// last heard. From now on each one's drift counts from these.
    public mutating func takeDrifted(by threshold: Int64) -> [UInt64: Int64] {
        var drifted: [UInt64: Int64] = [:]
        for slot in offsetDrifts.indices where handles[slot] != 0 && abs(Int64(offsetDrifts[slot])) >= threshold {
            drifted[handles[slot]] = offsets[slot]
            offsetDrifts[slot] = 0
        }
        return drifted
    }

    /// The first and last window start of the ids accepted for the fob in `slot` at `now`, or `nil`.
    func acceptedWindows(of slot: Int, at now: Int64) -> (first: Int64, last: Int64)? {
        let rotation = Int64(1) << Int64(exponents[slot])
        let expected = now - offsets[slot]
        let mask = ~(rotation - 1)
        let holding = expected & mask
        let low = max(0, min(holding - rotation, (expected - Self.driftAllowance) & mask))
        let high = min(Int64(UInt32.max) & mask, max(holding + rotation, (expected + Self.driftAllowance) & mask))
        return low <= high ? (low, high) : nil
    }

    /// The most windows a fob with this K has accepted at once: the length of its ring of ids.
    static func ringCapacity(_ exponent: UInt8) -> Int { max(3, Int(2 * driftAllowance) >> Int(exponent) + 2) }

    /// The windows a fob with this K usually has accepted (for sizing the index).
    static func heldWindows(_ exponent: UInt8) -> Int { max(3, Int(2 * driftAllowance) >> Int(exponent) + 1) }

    /// Takes a slot for `fob` (a free one with a ring as long, or a new one) and fills it, holding no ids yet.
    @discardableResult
    private mutating func place(_ fob: Fob) -> Int? {
        let exponent = fob.eid.rotationExponent
        let ring = Self.ringCapacity(exponent)
        let slot: Int
        if let free = freeSlots[ring]?.popLast() {
            slot = free
            handles[slot] = fob.handle
            exponents[slot] = exponent
            identityKeys.replaceSubrange((slot * 16)..<(slot * 16 + 16), with: fob.eid.identityKeyBytes)
            offsets[slot] = fob.offset
            offsetDrifts[slot] = 0
            heardAt[slot] = 0
        } else {
            guard handles.count < Self.capacity else { return nil }
            slot = handles.count
            handles.append(fob.handle)
            identityKeys += fob.eid.identityKeyBytes
            exponents.append(exponent)
            offsets.append(fob.offset)
            offsetDrifts.append(0)
            ringStarts.append(UInt32(ids.count))
            firstHeld.append(0)
            heldCounts.append(0)
            heardWindows.append(0)
            heardAt.append(0)
            ids += repeatElement(0, count: ring)
        }
        fobsByExponent[Int(exponent)] += 1
        return slot
    }

    /// Makes the ids the slot holds those of the windows accepted at `now`: drops the ones that left, adds those
    /// that came (their ids computed), keeps the rest.
    private mutating func refreshSlot(_ slot: Int, at now: Int64) {
        let rotation = Int64(1) << Int64(exponents[slot])
        let held =
            heldCounts[slot] == 0
            ? nil : (first: Int64(firstHeld[slot]), last: Int64(firstHeld[slot]) + Int64(heldCounts[slot] - 1) * rotation)
        let wanted = acceptedWindows(of: slot, at: now)
        if let held, let wanted, held == wanted { return }
        if held == nil && wanted == nil { return }
        // The ones that left first: a window that came may take a place in the ring one that left had.
        for window in self.held(slot) where wanted.map({ window < $0.first || window > $0.last }) ?? true {
            removeEntry(slot: slot, window: window)
        }
        guard let wanted else {
            heldCounts[slot] = 0
            return
        }
        for window in stride(from: wanted.first, through: wanted.last, by: Int(rotation))
        where held.map({ window < $0.first || window > $0.last }) ?? true {
            let id = identityKeys.withUnsafeBufferPointer { keys in
                EddystoneEID.ephemeralID(
                    identityKey: SymmetricKey(
                        data: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: keys[(slot * 16)..<(slot * 16 + 16)]))),
                    rotationExponent: exponents[slot], counter: UInt32(window))
            }
            let place = ringPlace(slot, window: window)
            ids[place] = id
            insertEntry(slot: slot, window: window, id: id)
        }
        firstHeld[slot] = UInt32(wanted.first)
        heldCounts[slot] = UInt16((wanted.last - wanted.first) / rotation + 1)
    }

    /// The windows whose ids the slot holds.
    func held(_ slot: Int) -> StrideTo<Int64> {
        let rotation = Int64(1) << Int64(exponents[slot])
        return stride(from: Int64(firstHeld[slot]), to: Int64(firstHeld[slot]) + Int64(heldCounts[slot]) * rotation, by: Int(rotation))
    }

    /// The place in `ids` of the slot's id of `window`.
    func ringPlace(_ slot: Int, window: Int64) -> Int {
        Int(ringStarts[slot]) + Int((window >> Int64(exponents[slot])) % Int64(Self.ringCapacity(exponents[slot])))
    }
}
