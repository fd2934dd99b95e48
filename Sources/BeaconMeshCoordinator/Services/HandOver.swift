import Synchronization

/// A value passed to another task or queue by moving it, not by copying it: `take()` gives the value out once.
///
/// A struct captured by an escaping closure is copied into it, and the capture keeps its storage alive while the
/// closure runs: the first change made to the copy then copies every dictionary it holds (the registry's 105,000
/// members: ≈ 12 ms of a core each time). Taken out of a hand-over, the value is the only reference to its storage.
final class HandOver<Value: Sendable>: Sendable {
    private let value: Mutex<Value?>

    init(_ value: consuming sending Value) {
        self.value = Mutex(Optional(value))
    }

    /// The value; a second call is a programming error.
    func take() -> Value {
        guard let value = value.withLock({ $0.take() }) else { preconditionFailure("a hand-over's value is taken once") }
        return value
    }
}
