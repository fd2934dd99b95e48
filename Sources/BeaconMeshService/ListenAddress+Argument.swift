import ArgumentParser

/// `--listen HOST:PORT` and the like: a bad value is a usage error (exit 2) naming the expected form.
extension ListenAddress: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(argument)
    }

    public static var defaultCompletionKind: CompletionKind { .default }
}
