/// The sequence numbers each sender skipped that have not arrived since: a late message that fills one was reordered
/// on the way (MQTT keeps order only within one connection), not lost.
///
/// Remembers at most `limit` numbers per sender, the newest; older ones stay counted as lost.
struct MissingSequences<Sender: Hashable & Sendable>: Sendable {
    private var missing: [Sender: [UInt64]] = [:]
    let limit: Int

    init(limit: Int = 256) {
        precondition(limit > 0)
        self.limit = limit
    }

    /// Records that `sender` went from `lastSeq` straight to `seq`: the numbers between are missing. Returns how many
    /// there are (all of them count, even those beyond `limit`).
    mutating func skipped(by sender: Sender, after lastSeq: UInt64, before seq: UInt64) -> UInt64 {
        guard seq > lastSeq + 1 else { return 0 }
        let count = seq - lastSeq - 1
        let first = count > UInt64(limit) ? seq - UInt64(limit) : lastSeq + 1
        var numbers = missing[sender] ?? []
        numbers.append(contentsOf: first..<seq)
        if numbers.count > limit { numbers.removeFirst(numbers.count - limit) }
        missing[sender] = numbers
        return count
    }

    /// Whether `seq` of `sender` was missing; from now on it is not.
    mutating func arrived(_ seq: UInt64, from sender: Sender) -> Bool {
        guard var numbers = missing[sender], let index = numbers.firstIndex(of: seq) else { return false }
        numbers.remove(at: index)
        missing[sender] = numbers.isEmpty ? nil : numbers
        return true
    }

    /// Forgets what `sender` skipped: it numbers afresh (a new boot or session).
    mutating func forget(_ sender: Sender) {
        missing[sender] = nil
    }
}
