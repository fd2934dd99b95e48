import Foundation

/// Which stores a dashboard user may see: every store (`all`, head office) or the stores listed.
///
/// As a flag and in the users file it is spelled `all` or store numbers separated by commas (`1,2`); a user whose
/// access does not allow a store gets 403 for its page, API and stream, and the overview leaves it out.
public enum StoreAccess: Sendable, Hashable, CustomStringConvertible {
    /// Every store of the chain (head office).
    case all
    /// Only these stores.
    case stores(Set<UInt16>)

    /// Whether `store` may be seen.
    public func allows(_ store: UInt16) -> Bool {
        switch self {
        case .all: true
        case .stores(let stores): stores.contains(store)
        }
    }

    /// Reads `all` or `1,2` (store numbers 0–65535, at least one); `nil` otherwise.
    public init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed == "all" {
            self = .all
            return
        }
        var stores: Set<UInt16> = []
        for part in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let number = part.trimmingCharacters(in: .whitespaces)
            guard !number.isEmpty, number.allSatisfy({ $0.isASCII && $0.isNumber }), let store = UInt16(number) else { return nil }
            stores.insert(store)
        }
        guard !stores.isEmpty else { return nil }
        self = .stores(stores)
    }

    /// `all`, or the store numbers in order separated by commas.
    public var description: String {
        switch self {
        case .all: "all"
        case .stores(let stores): stores.sorted().map(String.init).joined(separator: ",")
        }
    }
}
