extension PresenceEngine {
    /// Time constant of the per-node smoothing of batch readings.
    static let smoothing: Duration = .milliseconds(600)

    /// `e^-x` for the smoothing weight, without a C math library.
    static func decay(_ x: Double) -> Double {
        guard x < 20 else { return 0 }
        // e^-x = (e^-(x/16))^16; the series is accurate for small arguments.
        let small = x / 16
        var value = 1 - small + small * small / 2 - small * small * small / 6 + small * small * small * small / 24
        for _ in 0..<4 { value *= value }
        return value
    }

    /// One node's latest smoothed reading of one person (member or guest).
    struct Reading: Sendable {
        var node: Int32
        var store: UInt16
        var department: UInt16
        /// Smoothed over the node's successive batches.
        var rssi: Double
        /// As the latest batch said it (for the decisive switch, which must not wait for the smoothing).
        var latest: Double
        var proximity: Proximity
        /// For a guest: this reading is the one that counts the guest in its store's occupancy (`GuestTracker`).
        var counted = false
        /// A surveyed store's department as its belief weighs it (`rssi` and `latest` are the department's
        /// probability given the readings so far, as a natural log), not a node's reading.
        var fromSurvey = false
        /// Milliseconds since the epoch, on our clock (the node's time turned into ours by its `SenderClock`).
        var lastSeen: Int64

        /// Whether this reading places a person rather than `other`: stronger, then nearer, then the lower store and
        /// department (so that the same readings always give the same answer).
        func outranks(_ other: Reading) -> Bool {
            rssi > other.rssi
                || rssi == other.rssi
                    && (proximity < other.proximity
                        || proximity == other.proximity && (store, department) < (other.store, other.department))
        }
    }
}

extension Array where Element == PresenceEngine.Reading {
    /// Folds a node's reading into these readings, smoothing successive readings of the same node; a reading older
    /// than the one held is ignored. Returns whether it added a node not heard before.
    @discardableResult
    mutating func absorb(_ reading: PresenceEngine.Reading) -> Bool {
        guard let index = firstIndex(where: { $0.node == reading.node }) else {
            append(reading)
            return true
        }
        let previous = self[index]
        guard reading.lastSeen >= previous.lastSeen else { return false }
        let elapsed = Double(reading.lastSeen - previous.lastSeen) / 1000
        let weight = elapsed >= 5 ? 1 : 1 - PresenceEngine.decay(elapsed / PresenceEngine.smoothing.inSeconds)
        self[index].rssi = previous.rssi + weight * (reading.rssi - previous.rssi)
        self[index].latest = reading.rssi
        self[index].proximity = reading.proximity
        self[index].lastSeen = reading.lastSeen
        return false
    }
}

extension PresenceEngine.Person {
    /// Folds a node's reading into this person's readings (see `Array.absorb`); the first one starts the arrival's
    /// settling. Returns whether it added a node not heard before.
    @discardableResult
    mutating func absorb(_ reading: PresenceEngine.Reading, now: Int64) -> Bool {
        if firstHeard == nil { firstHeard = now }
        return readings.absorb(reading)
    }
}
