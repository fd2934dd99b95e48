// swift-tools-version: 6.1
import PackageDescription

// Data flows one way: radio → scanner → broker → coordinator → broker → monitor / member apps.
// Each C library is reached from exactly one Swift module:
//   libmosquitto → BeaconMeshMQTT, libbluetooth (GPL-2+) → BeaconMeshBLE (scanner only), json-c → BeaconMeshWire.
let package = Package(
    name: "BeaconMesh",
    products: [
        .executable(name: "beacon-scanner", targets: ["beacon-scanner"]),
        .executable(name: "beacon-coordinator", targets: ["beacon-coordinator"]),
        .executable(name: "beacon-monitor", targets: ["beacon-monitor"]),
        .executable(name: "beacon-dashboard", targets: ["beacon-dashboard"]),
        .executable(name: "beacon-phone", targets: ["beacon-phone"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Webhooks: the POSTs (async-http-client) and their HMAC-SHA256 signatures (swift-crypto).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        // System libraries: a module map and a shim header each, nothing else.
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CJSONC", pkgConfig: "json-c", providers: [.apt(["libjson-c-dev"])]),
        // ncursesw's pkg-config flags are two defines SwiftPM refuses (a warning at every build): the shim defines
        // them, and the module map links ncursesw and tinfo (libncurses-dev).
        .systemLibrary(name: "CNcurses"),
        // glibc's <malloc.h> (mallopt), part of the C library every program links: the scanner tunes its allocator.
        .systemLibrary(name: "CMalloc"),

        // Pure Swift domain: no I/O, no threads, no wall clock.
        .target(name: "BeaconMeshCore"),
        // How work moves between threads and tasks: the one thread type, for blocking work off the concurrency pool
        // (MQTT's network loop, HCI reads, the registry's writer and change feed, the coordinator's lease keeper and
        // registry poll), and the one mailbox that hands work to a consuming task (received MQTT messages, the
        // coordinator's decisions and snapshots, the scanner's inputs).
        .target(name: "BeaconMeshThreads"),
        // The contract's JSON payloads <-> Core types; the only user of json-c.
        .target(name: "BeaconMeshWire", dependencies: ["BeaconMeshCore", "CJSONC"]),
        // The only user of libmosquitto.
        .target(
            name: "BeaconMeshMQTT",
            dependencies: [
                "CMosquitto", "BeaconMeshThreads", .product(name: "Logging", package: "swift-log"),
            ]),
        // The members registry behind one protocol: SQLite (GRDB) for one store, PostgreSQL (postgres-nio) for a chain.
        .target(
            name: "BeaconMeshRegistry",
            dependencies: [
                "BeaconMeshCore", "BeaconMeshThreads", .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        // The only user of libbluetooth: HCI scanner, btsnoop reader and writer, advertiser.
        .target(name: "BeaconMeshBLE", dependencies: ["BeaconMeshCore", "BeaconMeshThreads", "BeaconMeshCaptures", "CBlueZ"]),
        // btsnoop capture files (what `btmon -w` and Android's HCI snoop log write), read and written in Swift: no
        // libbluetooth, so the coordinator can import a recorded survey without linking GPL code.
        .target(name: "BeaconMeshCaptures"),

        // What the three services share: wall clock, broker credentials, memory figures, throttled logging.
        .target(
            name: "BeaconMeshService",
            dependencies: [
                "BeaconMeshCore", "BeaconMeshMQTT", .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        // Services behind the three executables.
        .target(
            name: "BeaconMeshScanner",
            dependencies: [
                "BeaconMeshCore", "BeaconMeshWire", "BeaconMeshMQTT", "BeaconMeshService", "BeaconMeshBLE", "BeaconMeshCaptures", "CMalloc",
                "BeaconMeshThreads", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .target(
            name: "BeaconMeshCoordinator",
            dependencies: [
                "BeaconMeshCore", "BeaconMeshWire", "BeaconMeshMQTT", "BeaconMeshService", "BeaconMeshRegistry",
                "BeaconMeshThreads", "BeaconMeshFobs", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        .target(
            name: "BeaconMeshMonitor",
            dependencies: [
                "BeaconMeshCore", "BeaconMeshWire", "BeaconMeshMQTT", "BeaconMeshService", "CNcurses",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),

        // The web view of the chain and its stores: reads the broker, serves HTML, server-sent events and JSON.
        .target(
            name: "BeaconMeshDashboard",
            dependencies: [
                "BeaconMeshCore", "BeaconMeshWire", "BeaconMeshMQTT", "BeaconMeshService", "BeaconMeshRegistry",
                "BeaconMeshMetrics",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // HTTPS (NIOSSL) and the users file's passwords (bcrypt; never a hash function of our own).
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            // The pages' HTML, CSS and script as real files (linted by deploy/lint-web.sh), compiled into the program:
            // one binary to install, as before.
            resources: [
                .embedInCode("Web/dashboard.js"), .embedInCode("Web/dashboard.css"), .embedInCode("Web/overview.html"),
                .embedInCode("Web/store.html"), .embedInCode("Web/account.html"), .embedInCode("Web/login.html"),
                .embedInCode("Web/survey.html"), .embedInCode("Web/survey.js"),
            ]),
        // The Prometheus endpoint the executables serve (only executables bootstrap the metrics backend).
        .target(
            name: "BeaconMeshMetrics",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]),
        // A member's phone app, simulated: ranging reports out, offers and check-ins in.
        .target(
            name: "BeaconMeshPhone",
            dependencies: [
                "BeaconMeshCore", "BeaconMeshWire", "BeaconMeshMQTT", "BeaconMeshService",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),

        // Thin executables: parse options, bootstrap logging, run services.
        .executableTarget(
            name: "beacon-scanner",
            dependencies: [
                "BeaconMeshScanner", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // Release builds (the Pi's) link the Swift runtime into the program: 2.5 MiB less resident than the
            // shared libraries (scanner-process benchmark). FoundationEssentials, which swift-argument-parser
            // imports, needs its two helper archives named when only the link is static. Debug builds, and the
            // tests that link this target, keep the shared runtime.
            // They also link a fixed-address program (`-no-pie`) that exports no symbols (`--no-export-dynamic`,
            // undoing the static runtime's `-export-dynamic`): no 1 MB table of start-up relocations and no 400 kB
            // of relocated metadata, and 0.5 MB less symbol table mapped; 1.0–1.4 MiB less at peak. The cost: the
            // program's own code has no address randomisation (the libraries, heap and stack keep theirs).
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-stdlib", "-Xlinker", "-l_FoundationCollections", "-Xlinker", "-l_FoundationCShims",
                        "-Xclang-linker", "-no-pie", "-Xlinker", "--no-export-dynamic",
                    ],
                    .when(configuration: .release))
            ]),
        .executableTarget(
            name: "beacon-coordinator",
            dependencies: [
                "BeaconMeshCoordinator", "BeaconMeshRegistry", "BeaconMeshMetrics", "BeaconMeshWire", "BeaconMeshFobs",
                // `survey import` replays labelled recordings (btsnoop captures read in Swift: no libbluetooth).
                "BeaconMeshAccuracy",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "beacon-monitor",
            dependencies: [
                "BeaconMeshMonitor", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "beacon-dashboard",
            dependencies: [
                "BeaconMeshDashboard", "BeaconMeshMetrics", "BeaconMeshRegistry",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "beacon-phone",
            dependencies: [
                "BeaconMeshPhone", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        // Benchmarks that print figures: `swift run -c release beacon-bench scanner|engine|coordinator|dashboard`
        // (the dashboard's drives a real Chromium with BeaconMeshTesting's WebDriver client).
        .executableTarget(
            name: "beacon-bench",
            dependencies: [
                "BeaconMeshCore", "BeaconMeshWire", "BeaconMeshMQTT", "BeaconMeshService", "BeaconMeshTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // `scanner-live` runs the scanner service on a fake controller (so the bench links libbluetooth too).
                "BeaconMeshScanner", "BeaconMeshBLE", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // `coordinator-in-memory` runs the coordinator service in the benchmark's process.
                "BeaconMeshCoordinator", "BeaconMeshRegistry",
                // `accuracy` scores presence decisions on labelled real recordings.
                "BeaconMeshAccuracy",
                // `eid` times the coordinator's table of members' EID fobs.
                "BeaconMeshFobs",
            ],
            // C for an LD_PRELOAD library that `scanner-live-process` compiles with clang at run time: it gives the
            // real beacon-scanner an hci0 without Bluetooth in the kernel (not Swift: the scanner must not load a
            // second Swift runtime for it). README.md holds the measurements the benchmarks print.
            exclude: ["FakeHCIAdapter.c", "README.md"]),

        // Presence accuracy on labelled real recordings: converters of the public recordings into per-node btsnoop
        // captures and ground truth, a virtual-time replay through the scanner pipeline and the presence engine, the
        // naive rules to compare with, and the scoreboard.
        .target(name: "BeaconMeshAccuracy", dependencies: ["BeaconMeshCore", "BeaconMeshCaptures"]),

        // Loyalty fobs nobody else can track: Eddystone-EID's rotating ids from a fob's identity key (AES-128 from
        // swift-crypto, never our own).
        .target(
            name: "BeaconMeshFobs",
            dependencies: [
                "BeaconMeshCore", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]),

        // Test support: a mosquitto broker on a free loopback port, process helpers, and the seams for fast service
        // tests: an in-memory broker and client (`MQTTClientProtocol`) and a manual clock (`ServiceClock`).
        // And a webhook receiver (Hummingbird, HTTPS with a test CA) that checks signatures as receivers are told to.
        .target(
            name: "BeaconMeshTesting",
            dependencies: [
                "BeaconMeshCore", "BeaconMeshMQTT", "BeaconMeshService", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"), .product(name: "Crypto", package: "swift-crypto"),
            ]),

        .testTarget(name: "BeaconMeshCoreTests", dependencies: ["BeaconMeshCore", "BeaconMeshTesting"]),
        .testTarget(name: "BeaconMeshWireTests", dependencies: ["BeaconMeshWire"]),
        .testTarget(name: "BeaconMeshFobsTests", dependencies: ["BeaconMeshFobs"]),
        .testTarget(name: "BeaconMeshThreadsTests", dependencies: ["BeaconMeshThreads", "BeaconMeshTesting"]),
        .testTarget(name: "BeaconMeshMQTTTests", dependencies: ["BeaconMeshMQTT", "BeaconMeshTesting"]),
        .testTarget(name: "BeaconMeshBLETests", dependencies: ["BeaconMeshBLE", "BeaconMeshCaptures", "BeaconMeshTesting"]),
        .testTarget(
            name: "BeaconMeshCoordinatorTests",
            dependencies: ["BeaconMeshCoordinator", "BeaconMeshRegistry", "BeaconMeshTesting", "BeaconMeshFobs", "beacon-coordinator"]),
        .testTarget(
            name: "BeaconMeshRegistryTests",
            dependencies: [
                "BeaconMeshRegistry", "BeaconMeshTesting", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "BeaconMeshMonitorTests",
            dependencies: [
                "BeaconMeshMonitor", "beacon-monitor", "BeaconMeshTesting", "BeaconMeshMQTT", "BeaconMeshService", "BeaconMeshWire",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "BeaconMeshDashboardTests",
            dependencies: [
                "BeaconMeshDashboard", "BeaconMeshTesting", "beacon-dashboard", "BeaconMeshMQTT", "BeaconMeshService",
                .product(name: "Logging", package: "swift-log"), .product(name: "HummingbirdTesting", package: "hummingbird"),
                // The survey page's browser test runs the dashboard's server and feed in a ServiceGroup.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .testTarget(
            name: "BeaconMeshScannerTests",
            dependencies: [
                "BeaconMeshScanner", "BeaconMeshTesting", "BeaconMeshWire", "BeaconMeshMQTT", "BeaconMeshService", "beacon-scanner",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "BeaconMeshPhoneTests",
            dependencies: [
                "BeaconMeshPhone", "beacon-phone", "BeaconMeshTesting", "BeaconMeshMQTT", "BeaconMeshService", "BeaconMeshWire",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(name: "BeaconMeshTestingTests", dependencies: ["BeaconMeshTesting", "BeaconMeshMQTT", "BeaconMeshService"]),
        .testTarget(
            name: "BeaconMeshAccuracyTests",
            dependencies: ["BeaconMeshAccuracy", "BeaconMeshCore", "BeaconMeshBLE", "BeaconMeshCaptures", "BeaconMeshTesting"]),
        // The survey's end-to-end test seeds a registry through its API before running the commands.
        .testTarget(name: "EndToEndTests", dependencies: ["BeaconMeshTesting", "BeaconMeshCore", "BeaconMeshRegistry", "BeaconMeshFobs"]),
    ]
)

// The language settings of every Swift target of ours, as Hummingbird's manifest sets them: `any` spelled out for
// existentials, and a file sees only the members of the modules it imports.
for target in package.targets where target.type != .system {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility"),
        ]
}
