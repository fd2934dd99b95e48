/// Numbered things (people, guests, visits) by the time they next need attention, earliest first: a binary min-heap
/// of `(deadline, id)` in milliseconds.
///
/// Entries are never updated or removed in place. An owner whose deadline moves later keeps its earlier entry and,
/// when that entry comes due, pushes the new deadline; one whose deadline moves earlier pushes a new entry. Each owner
/// remembers the earliest deadline it has queued, and an entry whose deadline is not that one is outdated and skipped
/// ("lazy invalidation"). So an input costs at most one push, and a tick only touches what is due.
struct DeadlineQueue: Sendable {
    struct Entry: Sendable {
        var deadline: Int64
        var id: Int32
    }

    private(set) var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// The earliest entry.
    var first: Entry? { entries.first }

    mutating func push(_ deadline: Int64, _ id: Int32) {
        entries.append(Entry(deadline: deadline, id: id))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if it is due at `now` (its deadline is not after `now`).
    mutating func popDue(at now: Int64) -> Entry? {
        guard let top = entries.first, top.deadline <= now else { return nil }
        let last = entries.removeLast()
        guard !entries.isEmpty else { return top }
        entries[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { break }
            let right = left + 1
            let smaller = right < entries.count && entries[right].deadline < entries[left].deadline ? right : left
            guard entries[smaller].deadline < entries[parent].deadline else { break }
            entries.swapAt(smaller, parent)
            parent = smaller
        }
        return top
    }

    /// Calls `body` with every entry due at `now`, in no particular order, without removing any: the cost is the
    /// number of due entries, not the size of the queue.
    func forEachDue(at now: Int64, _ body: (Entry) -> Void) {
        guard let top = entries.first, top.deadline <= now else { return }
        var pending = [0]
        while let index = pending.popLast() {
            body(entries[index])
            let left = 2 * index + 1
            if left < entries.count, entries[left].deadline <= now { pending.append(left) }
            if left + 1 < entries.count, entries[left + 1].deadline <= now { pending.append(left + 1) }
        }
    }
}
