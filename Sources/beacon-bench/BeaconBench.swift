import ArgumentParser
import BeaconMeshService

/// `beacon-bench`: prints the speed and memory figures the issues name, measured on this machine.
@main
struct BeaconBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon-bench",
        abstract:
            "Measure BeaconMesh: scanner hot path, presence engine, sighting batch decoding, coordinator service (sighting batches, ranging reports) through a real broker, dashboard, soak.",
        discussion: "Build in release mode: swift run -c release beacon-bench <benchmark>",
        version: BeaconMeshVersion.current,
        subcommands: [
            ScannerBenchmark.self, ScannerLiveBenchmark.self, ScannerLiveProcessBenchmark.self, ScannerProcessBenchmark.self,
            EngineBenchmark.self, CrowdBenchmark.self,
            CrowdArrivalBenchmark.self, WireBenchmark.self, CoordinatorBenchmark.self, CoordinatorInMemoryBenchmark.self,
            RangingBenchmark.self, RegistryBenchmark.self, RegistryLoadBenchmark.self, FailoverBenchmark.self, AnalyticsBenchmark.self,
            DashboardBenchmark.self, SoakBenchmark.self, AccuracyBenchmark.self, SurveyFitBenchmark.self, WebhookBenchmark.self,
            BenchWebhookReceiver.self, NodesBenchmark.self, EIDBenchmark.self,
        ])

    static func main() {
        CommandLineProgram.mainSynchronously(BeaconBench.self, name: "beacon-bench")
    }
}
