/// Each served department's presence rules in whole milliseconds, found by store and department without hashing a
/// `Hasher` or converting a `Duration`: the engine looks rules up several times per sighting.
///
/// An open-addressing table keyed by `store << 16 | department` (Fibonacci hashing, linear probing), built once from
/// the layout; a department the layout does not name gets the default rules, a store it does not name is not served.
struct DepartmentTimings: Sendable {
    /// One department's rules as the engine's arithmetic uses them.
    struct Timing: Sendable, Equatable {
        var staleAfter: Int64
        var exitAfter: Int64
        var switchMargin: Double
        var switchDwell: Int64
        var visitGap: Int64
        var arrivalSettle: Int64
        /// Readings weaker than this (dBm) do not count (`minRssi`; minus infinity where none is set).
        var minRSSI = -Double.infinity

        init(_ rules: PresenceRules) {
            staleAfter = rules.staleAfter.wholeMilliseconds
            exitAfter = rules.exitAfter.wholeMilliseconds
            switchMargin = rules.switchMargin
            switchDwell = rules.switchDwell.wholeMilliseconds
            visitGap = rules.visitGap.wholeMilliseconds
            arrivalSettle = rules.arrivalSettle.wholeMilliseconds
        }
    }

    private static let empty = UInt32.max
    private let fallback: Timing
    /// Slot keys (`empty` where none), their timings, and the stores served, all in power-of-two tables.
    private let keys: [UInt32]
    private let timings: [Timing]
    private let storeKeys: [UInt32]
    private let shift: UInt32
    /// Whether any department sets `minRssi`: most stores set none, and then no reading needs the look-up.
    let hasMinRSSI: Bool

    init(
        default rules: PresenceRules, stores: [UInt16: [UInt16: PresenceRules]], minRSSI: [UInt16: [UInt16: Double]] = [:]
    ) {
        fallback = Timing(rules)
        let count = stores.values.reduce(0) { $0 + $1.count } + stores.count
        var bits: UInt32 = 4
        while (1 << bits) < 2 * count { bits += 1 }
        shift = 32 - bits
        var keys = [UInt32](repeating: Self.empty, count: 1 << bits)
        var timings = [Timing](repeating: fallback, count: 1 << bits)
        var storeKeys = [UInt32](repeating: Self.empty, count: 1 << bits)
        for (store, departments) in stores {
            var slot = Self.slot(UInt32(store), shift: shift)
            while storeKeys[slot] != Self.empty { slot = (slot + 1) & (storeKeys.count - 1) }
            storeKeys[slot] = UInt32(store)
            for (department, rules) in departments {
                let key = UInt32(store) << 16 | UInt32(department)
                var slot = Self.slot(key, shift: shift)
                while keys[slot] != Self.empty { slot = (slot + 1) & (keys.count - 1) }
                keys[slot] = key
                timings[slot] = Timing(rules)
                if let floor = minRSSI[store]?[department] { timings[slot].minRSSI = floor }
            }
        }
        hasMinRSSI = minRSSI.values.contains { !$0.isEmpty }
        self.keys = keys
        self.timings = timings
        self.storeKeys = storeKeys
    }

    private static func slot(_ key: UInt32, shift: UInt32) -> Int { Int((key &* 2_654_435_769) >> shift) }

    /// The rules of `department` in `store` (the default ones for a department the layout does not name).
    func timing(store: UInt16, department: UInt16) -> Timing {
        let key = UInt32(store) << 16 | UInt32(department)
        var slot = Self.slot(key, shift: shift)
        while true {
            let found = keys[slot]
            if found == key { return timings[slot] }
            if found == Self.empty { return fallback }
            slot = (slot + 1) & (keys.count - 1)
        }
    }

    /// Whether the layout names `store`.
    func serves(store: UInt16) -> Bool {
        var slot = Self.slot(UInt32(store), shift: shift)
        while true {
            let found = storeKeys[slot]
            if found == UInt32(store) { return true }
            if found == Self.empty { return false }
            slot = (slot + 1) & (storeKeys.count - 1)
        }
    }
}
