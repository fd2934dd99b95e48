import BeaconMeshFobs
import Testing

/// The coordinator's table of accepted EID ids: what resolves, what does not, and a drifting fob followed.
@Suite("Eddystone-EID resolution")
struct EIDResolverTests {
    static let key: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16]
    static let eid = EddystoneEID(identityKey: key, rotationExponent: 10)!
    /// 2026-12-02 00:00 UTC, and a fob that started counting 30 days before.
    static let now: Int64 = 1_796_169_600
    static let started = now - 30 * 86_400
    /// The handles the fobs are decided under.
    static let ana: UInt64 = 0xA1A
    static let ben: UInt64 = 0xBE1

    static func resolver() -> EIDResolver {
        let other = EddystoneEID(identityKey: Array(repeating: 0x42, count: 16), rotationExponent: 12)!
        var resolver = EIDResolver(fobs: [
            .init(handle: ana, eid: eid, offset: started), .init(handle: ben, eid: other, offset: 0),
        ])
        resolver.refresh(at: now)
        return resolver
    }

    @Test("the window holding the expected counter, the ones either side, and those within 5 minutes resolve; further ones do not")
    func acceptedWindows() {
        let counter = UInt32(Self.now - Self.started)
        // Each heard by a resolver of its own: hearing one moves the fob's offset toward it.
        for heard in [counter, counter - 1024, counter + 1024] {
            var resolver = Self.resolver()
            #expect(resolver.resolve(Self.eid.ephemeralID(counter: heard), at: Self.now) == Self.ana, "\(heard)")
        }
        // Two windows away is neither adjacent nor within 5 minutes: a recording replayed, or another fob's.
        var fresh = Self.resolver()
        #expect(fresh.resolve(Self.eid.ephemeralID(counter: counter + 3 * 1024), at: Self.now) == nil)
        #expect(fresh.resolve(Self.eid.ephemeralID(counter: counter - 3 * 1024), at: Self.now) == nil)
        #expect(fresh.resolve(0x0123_4567_89AB_CDEF, at: Self.now) == nil)
        let ben = EddystoneEID(identityKey: Array(repeating: 0x42, count: 16), rotationExponent: 12)!
        #expect(fresh.resolve(ben.ephemeralID(counter: UInt32(Self.now)), at: Self.now) == Self.ben)
        #expect((5...8).contains(fresh.count), "three or four windows a fob: \(fresh.count)")
    }

    @Test("an id recorded now and replayed two hours later resolves to nobody")
    func replayedRecording() {
        var resolver = Self.resolver()
        let recorded = Self.eid.ephemeralID(counter: UInt32(Self.now - Self.started))
        let later = Self.now + 7200
        resolver.refresh(at: later)
        #expect(resolver.resolve(recorded, at: later) == nil)
    }

    @Test("refreshing across rotations keeps the table the same size and the fob's new ids resolving")
    func rotations() {
        var resolver = Self.resolver()
        let size = resolver.count
        for step in 1...10 {
            let time = Self.now + Int64(step) * 1024
            resolver.refresh(at: time)
            #expect(resolver.count == size)
            #expect(resolver.resolve(Self.eid.ephemeralID(counter: UInt32(time - Self.started)), at: time) == Self.ana, "\(step)")
        }
    }

    @Test("fobs 60 s fast and 60 s slow resolve; one drifting 13 s a day keeps resolving for 300 days (65 minutes off)")
    func drift() {
        for skew: Int64 in [60, -60] {
            var resolver = Self.resolver()
            let counter = UInt32(Self.now - Self.started + skew)
            #expect(resolver.resolve(Self.eid.ephemeralID(counter: counter), at: Self.now) == Self.ana, "\(skew)")
        }
        var resolver = Self.resolver()
        for day: Int64 in 1...300 {
            let time = Self.now + day * 86_400
            resolver.refresh(at: time)
            let counter = UInt32(time - Self.started + day * 13)
            #expect(resolver.resolve(Self.eid.ephemeralID(counter: counter), at: time) == Self.ana, "day \(day)")
        }
        #expect(abs(resolver.offset(of: Self.ana)! - (Self.started - 300 * 13)) < 1024, "the offset followed the fob")
        // For the registry: the fob has moved more than a minute from where it was registered; taken once.
        let drifted = resolver.takeDrifted(by: 60)
        #expect(drifted.keys.sorted() == [Self.ana] && drifted[Self.ana] == resolver.offset(of: Self.ana))
        #expect(resolver.takeDrifted(by: 60).isEmpty)
    }

    @Test("heard changing window, the fob's offset is known to the second")
    func rotationPinsTheOffset() {
        var resolver = Self.resolver()
        // The fob is 200 s fast: its counter reaches the next window 200 s before the expected one does.
        let fast: Int64 = 200
        let counter = Self.now - Self.started + fast
        let nextWindow = (counter / 1024 + 1) * 1024
        let before = Self.started - fast + nextWindow - 1
        #expect(resolver.resolve(Self.eid.ephemeralID(counter: UInt32(nextWindow - 1)), at: before) == Self.ana)
        #expect(resolver.resolve(Self.eid.ephemeralID(counter: UInt32(nextWindow)), at: before + 1) == Self.ana)
        #expect(resolver.offset(of: Self.ana)! == Self.started - fast)
    }

    @Test("fobs added and removed among many keep the others resolving: each change touches its own ids, not the table")
    func addAndRemove() {
        // K from 2 to 12: rings of 3 to 152 windows, an index that grows, and entries moved back on removal.
        let fobs = (1...600).map { number -> EIDResolver.Fob in
            let key = (0..<16).map { UInt8(truncatingIfNeeded: number * 31 + $0 * 7) }
            return .init(
                handle: UInt64(number), eid: EddystoneEID(identityKey: key, rotationExponent: UInt8(2 + number % 11))!,
                offset: Self.started - Int64(number))
        }
        func counter(_ fob: EIDResolver.Fob, at time: Int64) -> UInt32 { UInt32(time - fob.offset) }
        var resolver = EIDResolver(fobs: Array(fobs.prefix(400)))
        resolver.refresh(at: Self.now)
        let heldBefore = resolver.count
        let gone = Set(fobs.prefix(400).map(\.handle).filter { $0 % 3 == 0 })
        let removed = resolver.remove(gone)
        #expect(removed == gone.count)
        let added = fobs.suffix(200).filter { resolver.add($0, at: Self.now) }
        #expect(added.count == 200)
        #expect(resolver.fobCount == 400 - gone.count + 200)
        for step: Int64 in [0, 3, 700, 5_000] {
            let time = Self.now + step
            resolver.refresh(at: time)
            for fob in fobs {
                let expected: UInt64? = gone.contains(fob.handle) ? nil : fob.handle
                let resolved = resolver.resolve(fob.eid.ephemeralID(counter: counter(fob, at: time)), at: time)
                #expect(resolved == expected, "\(fob.handle) at +\(step)")
            }
        }
        let all = resolver.remove(Set(fobs.map(\.handle)))
        #expect(all == 600 - gone.count)
        #expect(resolver.count == 0 && resolver.fobCount == 0)
        #expect(heldBefore > 400 * 3, "short rotations hold many windows: \(heldBefore)")
        // Slots freed are taken again, and resolve as new.
        let again = resolver.add(fobs[0], at: Self.now)
        let resolved = resolver.resolve(fobs[0].eid.ephemeralID(counter: counter(fobs[0], at: Self.now)), at: Self.now)
        #expect(again && resolved == fobs[0].handle)
    }
}
