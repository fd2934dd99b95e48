import BeaconMeshCore

/// A mosquitto `acl_file` as text, with the blocks `beacon-coordinator provision` manages inside it.
///
/// Managed blocks sit between `# >>> beaconmesh NAME` and `# <<< beaconmesh NAME` lines: one `patterns` block at the
/// top (rules for every user, such as the member apps' `%u` pattern) and one `user USERNAME` block per credential.
/// Everything outside the marks is kept as written, so an IT person may add rules of their own. Setting a block that
/// already holds the same lines changes nothing, which makes provisioning idempotent.
public struct ProvisioningACL: Sendable, Equatable {
    /// The whole file.
    public private(set) var text: String

    /// The file's text (empty for a new file).
    public init(text: String = "") {
        self.text = text
    }

    /// The comment that opens a file this type creates.
    public static let header = [
        "# BeaconMesh broker ACL (mosquitto acl_file). Anonymous clients get nothing: there are no topic lines before",
        "# the first user line. Blocks between '# >>> beaconmesh' and '# <<< beaconmesh' are rewritten by",
        "# `beacon-coordinator provision`; edit outside them. Reload mosquitto (SIGHUP) after a change.",
    ]

    /// The rules for every user: a member app's user name is its member id; it may publish only its own ranging
    /// reports (in any store) and read only its own offers and check-ins.
    public static func patternLines(topicRoot: String = Topics.defaultRoot) -> [String] {
        let topics = Topics(root: topicRoot)
        return [
            "# A member app's user name is its member id: it may publish only its own ranging reports and read only",
            "# its own offers and check-ins.",
            "pattern write \(topics.rangingFilter(store: nil, member: "%u"))",
            "pattern read \(topics.offers(member: "%u"))",
            "pattern read \(topics.checkins(member: "%u"))",
        ]
    }

    /// Puts the `patterns` block at the top of the file (after the header comment), replacing an older one.
    public mutating func setPatterns(_ lines: [String]) {
        if replaceBlock(named: "patterns", with: lines) { return }
        var all = splitLines()
        if all.isEmpty { all = Self.header + [""] }
        // Before the first non-comment line, so that no user block precedes it (patterns apply to all users anyway).
        let insertAt = all.firstIndex { !$0.hasPrefix("#") && !$0.trimmingSpaces.isEmpty } ?? all.count
        all.insert(contentsOf: Self.block(named: "patterns", lines: lines) + [""], at: insertAt)
        text = Self.join(all)
    }

    /// Sets the block of `username` to `user USERNAME` followed by `lines`, replacing an older block, else appending.
    public mutating func setUser(_ username: String, lines: [String]) {
        let body = ["user \(username)"] + lines
        if replaceBlock(named: "user \(username)", with: body) { return }
        var all = splitLines()
        if all.isEmpty { all = Self.header + [""] }
        if let last = all.last, !last.trimmingSpaces.isEmpty { all.append("") }
        all += Self.block(named: "user \(username)", lines: body)
        text = Self.join(all)
    }

    /// Removes the block of `username`; `false` when there was none.
    @discardableResult
    public mutating func removeUser(_ username: String) -> Bool {
        var all = splitLines()
        guard let range = blockRange(named: "user \(username)", in: all) else { return false }
        var upper = range.upperBound
        if upper < all.count && all[upper].trimmingSpaces.isEmpty { upper += 1 }  // the blank line that followed it
        all.removeSubrange(range.lowerBound..<upper)
        text = Self.join(all)
        return true
    }

    /// The user names that have a managed block, in file order.
    public var users: [String] {
        splitLines().compactMap { line in
            line.hasPrefix("# >>> beaconmesh user ") ? String(line.dropFirst("# >>> beaconmesh user ".count)) : nil
        }
    }

    /// The lines inside the managed block of `username` (starting with `user USERNAME`), or `nil`.
    public func userLines(_ username: String) -> [String]? {
        let all = splitLines()
        guard let range = blockRange(named: "user \(username)", in: all) else { return nil }
        return Array(all[(range.lowerBound + 1)..<(range.upperBound - 1)])
    }

    private static func block(named name: String, lines: [String]) -> [String] {
        ["# >>> beaconmesh \(name)"] + lines + ["# <<< beaconmesh \(name)"]
    }

    /// Replaces the block `name` in place; `false` when the file has none.
    private mutating func replaceBlock(named name: String, with lines: [String]) -> Bool {
        var all = splitLines()
        guard let range = blockRange(named: name, in: all) else { return false }
        all.replaceSubrange(range, with: Self.block(named: name, lines: lines))
        text = Self.join(all)
        return true
    }

    /// The lines from the opening mark to the closing mark of block `name`, both included.
    private func blockRange(named name: String, in lines: [String]) -> Range<Int>? {
        guard let start = lines.firstIndex(of: "# >>> beaconmesh \(name)"),
            let end = lines[start...].firstIndex(of: "# <<< beaconmesh \(name)")
        else { return nil }
        return start..<(end + 1)
    }

    private func splitLines() -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    private static func join(_ lines: [String]) -> String {
        lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    fileprivate var trimmingSpaces: Substring {
        self.drop { $0 == " " || $0 == "\t" }
    }
}
