import BeaconMeshCore
import Foundation
import Testing

@testable import BeaconMeshCoordinator

@Suite("Coordinator config cache")
struct CacheConfigTests {
    private func load(_ yaml: String) throws -> CoordinatorConfiguration {
        let folder = NSTemporaryDirectory() + "cache-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/coordinator.yaml"
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        var configuration = try CoordinatorConfiguration.load(path: path, defaultID: "host")
        // Paths beside the config, named from the folder on.
        configuration.cache = configuration.cache?.replacingOccurrences(of: folder, with: "FOLDER")
        return configuration
    }

    @Test("with PostgreSQL the cache is {id}.cache beside the config unless given; a relative one is beside the config too")
    func paths() throws {
        let stores = "stores: [{id: 1, departments: [{id: 10}]}]"
        #expect(try load("id: porto\ndatabase: postgres://chain@db/chain\n\(stores)").cache == "FOLDER/porto.cache")
        #expect(try load("database: postgres://chain@db/chain\n\(stores)").cache == "FOLDER/host.cache")
        #expect(try load("database: postgres://chain@db/chain\ncache: state/p.json\n\(stores)").cache == "FOLDER/state/p.json")
        #expect(try load("database: postgres://chain@db/chain\ncache: /var/lib/x.cache\n\(stores)").cache == "/var/lib/x.cache")
        #expect(try load("database: shop.sqlite\n\(stores)").cache == nil)
    }

    @Test("cache with a SQLite database, or empty, is a one-line error naming the line")
    func errors() {
        for (yaml, message) in [
            ("database: shop.sqlite\ncache: a.cache", "c.yaml:2: cache is for a PostgreSQL database only"),
            ("database: postgres://chain@db/chain\ncache: \"\"", "c.yaml:2: cache must name a file"),
        ] {
            #expect {
                _ = try CoordinatorConfiguration.parse(
                    yaml: yaml + "\nstores: [{id: 1, departments: [{id: 10}]}]", file: "c.yaml", defaultID: "x")
            } throws: { error in
                "\(error)".hasPrefix(message) && !"\(error)".contains("\n")
            }
        }
    }
}
