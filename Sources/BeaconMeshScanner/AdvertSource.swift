/// Where a scanner hears adverts: a Bluetooth adapter, a recorded capture, or simulated shoppers.
public enum AdvertSource: Sendable, Equatable, CustomStringConvertible {
    /// A local adapter through a raw HCI socket: `hci0`, `hci1`, …
    case adapter(index: Int)
    /// A btsnoop file (`btmon -w` or an Android HCI snoop log), replayed.
    case capture(path: String)
    /// Simulated shoppers walking the store.
    case simulation

    /// Parses `hci0`, `btsnoop:PATH` or `sim`; `nil` for anything else.
    public init?(_ text: String) {
        if text == "sim" {
            self = .simulation
        } else if text.hasPrefix("btsnoop:"), text.count > "btsnoop:".count {
            self = .capture(path: String(text.dropFirst("btsnoop:".count)))
        } else if text.hasPrefix("hci"), let index = Int(text.dropFirst(3)), index >= 0, String(index) == text.dropFirst(3) {
            self = .adapter(index: index)
        } else {
            return nil
        }
    }

    /// The spelling of the `--source` flag, as the node status reports it.
    public var description: String {
        switch self {
        case .adapter(let index): return "hci\(index)"
        case .capture(let path): return "btsnoop:\(path)"
        case .simulation: return "sim"
        }
    }
}

/// How fast a capture is replayed: at a multiple of recorded pace, or as fast as possible.
public enum ReplaySpeed: Sendable, Equatable, CustomStringConvertible {
    case factor(Double)
    case maximum

    /// Parses `max` or a positive number (`1`, `2.5`); `nil` for anything else.
    public init?(_ text: String) {
        if text == "max" {
            self = .maximum
        } else if let factor = Double(text), factor > 0, factor.isFinite {
            self = .factor(factor)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .factor(let factor): return "\(factor)"
        case .maximum: return "max"
        }
    }
}
