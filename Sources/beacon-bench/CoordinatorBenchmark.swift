import ArgumentParser

/// The coordinator service through a real mosquitto (filled in below).
struct CoordinatorBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coordinator",
        abstract: "Coordinator service through a real mosquitto: sustained rate against mosquitto_sub, and event latency.")

    func run() throws {
        throw ValidationError("the coordinator service benchmark is not written yet")
    }
}
