/// The coordinator's table of the ids its members' Eddystone-EID fobs may advertise now, so that a sighting's id is
/// one lookup (a pure value: time passed in, no I/O; refresh it ahead of each rotation, off the decision thread).
///
/// For each fob it holds the ids of the windows the contract accepts around the fob's expected counter (the Unix time
/// minus the fob's `offset`): the window holding it, the ones just before and after, and any within
/// `driftAllowance` of it. An id of any other window — a recording replayed later — resolves to nobody. Each time a
/// fob resolves, its offset follows what it advertises (to the second when it is heard changing window), so a fob
/// whose clock drifts a little every day keeps resolving however far it drifts over months.
public struct EIDResolver: Sendable {
    /// One member's fob: its ids, and where its counter stands (`offset`: Unix seconds minus the counter).
    public struct Fob: Sendable {
        public var member: String
        public var eid: EddystoneEID
        public var offset: Int64

        public init(member: String, eid: EddystoneEID, offset: Int64) {
            self.member = member
            self.eid = eid
            self.offset = offset
        }
    }

    /// How far from the expected counter a window may be and still be accepted (a fob's clock drift).
    public static let driftAllowance: Int64 = 300
    /// A fob heard in one window and then in the next within this many seconds changed window in between.
    static let changeHeardWithin: Int64 = 10

    public private(set) var fobs: [Fob]
    /// Per fob, the window starts whose ids are in `table`, in order, with their ids.
    private var windows: [[(start: UInt32, id: UInt64)]]
    /// Each accepted id: the fob (its index) and the window start it belongs to.
    private var table: [UInt64: (fob: Int32, window: UInt32)] = [:]
    /// Per fob, the last window it was heard in, and when.
    private var lastHeard: [(window: UInt32, at: Int64)?]

    public init(fobs: [Fob]) {
        self.fobs = fobs
        windows = Array(repeating: [], count: fobs.count)
        lastHeard = Array(repeating: nil, count: fobs.count)
    }

    /// How many ids the table holds.
    public var count: Int { table.count }

    /// Brings every fob's ids up to `now` (Unix seconds): adds the windows that came into range and drops the ones
    /// that left it. Costs an id per fob per rotation (two AES-128 blocks), nothing for a fob already up to date.
    public mutating func refresh(at now: Int64) {
        for index in fobs.indices { refreshFob(index, at: now) }
    }

    /// The member whose fob advertises `id` at `now`, or `nil` (no member's fob, or a window out of range). Notes the
    /// fob's offset from what it advertised.
    public mutating func resolve(_ id: UInt64, at now: Int64) -> String? {
        guard let entry = table[id] else { return nil }
        let index = Int(entry.fob)
        let rotation = Int64(fobs[index].eid.rotationSeconds)
        let window = Int64(entry.window)
        var offset = fobs[index].offset
        if let previous = lastHeard[index], Int64(previous.window) + rotation == window, now - previous.at <= Self.changeHeardWithin {
            // Heard in the window after the one it was heard in moments ago: it changed window about now.
            offset = now - window
        } else if now - offset < window {
            offset = now - window
        } else if now - offset >= window + rotation {
            offset = now - (window + rotation - 1)
        }
        lastHeard[index] = (entry.window, now)
        if offset != fobs[index].offset {
            fobs[index].offset = offset
            refreshFob(index, at: now)
        }
        return fobs[index].member
    }

    /// The window starts of the ids accepted for fob `index` at `now`, in order.
    func acceptedWindows(of index: Int, at now: Int64) -> [UInt32] {
        let eid = fobs[index].eid
        let rotation = Int64(eid.rotationSeconds)
        let expected = now - fobs[index].offset
        let mask = ~(rotation - 1)
        let holding = expected & mask
        let low = max(0, min(holding - rotation, (expected - Self.driftAllowance) & mask))
        let high = min(Int64(UInt32.max) & mask, max(holding + rotation, (expected + Self.driftAllowance) & mask))
        guard low <= high else { return [] }
        return stride(from: low, through: high, by: Int(rotation)).map { UInt32($0) }
    }

    private mutating func refreshFob(_ index: Int, at now: Int64) {
        let wanted = acceptedWindows(of: index, at: now)
        let held = windows[index]
        guard wanted.count != held.count || !zip(wanted, held).allSatisfy({ $0 == $1.start }) else { return }
        let eid = fobs[index].eid
        for window in held where !wanted.contains(window.start) { table[window.id] = nil }
        windows[index] = wanted.map { start in
            if let kept = held.first(where: { $0.start == start }) { return kept }
            let id = eid.ephemeralID(counter: start)
            table[id] = (Int32(index), start)
            return (start, id)
        }
    }
}
