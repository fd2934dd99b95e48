import ArgumentParser
import BeaconMeshCore

/// A duration on the command line as the config spells them (`250ms`, `20s`, `3h`), optionally negative (`-3h`)
/// where a flag allows it.
public struct DurationArgument: ExpressibleByArgument, Sendable, Equatable {
    public var duration: Duration

    public init(_ duration: Duration) {
        self.duration = duration
    }

    public init?(argument: String) {
        let negative = argument.hasPrefix("-")
        guard let magnitude = DurationText.parse(negative ? String(argument.dropFirst()) : argument) else { return nil }
        duration = negative ? .zero - magnitude : magnitude
    }

    public var defaultValueDescription: String {
        duration < .zero ? "-" + DurationText.format(.zero - duration) : DurationText.format(duration)
    }
}
