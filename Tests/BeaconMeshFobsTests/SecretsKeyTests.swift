import Foundation
import Testing

@testable import BeaconMeshFobs

/// The secrets key that seals members' fob keys in the registry (AES-256-GCM, swift-crypto).
@Suite("The secrets key")
struct SecretsKeyTests {
    static let identityKey: [UInt8] = Array(0x10...0x1F)

    static func file(_ contents: [UInt8]) throws -> String {
        let path = NSTemporaryDirectory() + "secrets-\(UUID().uuidString).key"
        try Data(contents).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("a sealed key opens for its member under its key only, and holds none of the key's bytes in the clear")
    func sealAndOpen() throws {
        let key = try #require(SecretsKey(bytes: Array(repeating: 7, count: 32)))
        let sealed = key.seal(identityKey: Self.identityKey, member: "ana")
        #expect(sealed.count == 12 + 16 + 16)
        #expect(try key.open(sealed, member: "ana") == Self.identityKey)
        #expect(!Data(sealed).contains(Data(Self.identityKey)))
        #expect(key.seal(identityKey: Self.identityKey, member: "ana") != sealed, "a new nonce each time")
        #expect(throws: SecretsKey.Failure.self) { try key.open(sealed, member: "zoe") }
        let other = try #require(SecretsKey(bytes: Array(repeating: 8, count: 32)))
        #expect(throws: SecretsKey.Failure.self) { try other.open(sealed, member: "ana") }
        var altered = sealed
        altered[20] ^= 1
        #expect(throws: SecretsKey.Failure.self) { try key.open(altered, member: "ana") }
    }

    @Test("the file holds 32 bytes or their 64 hex digits (a line break allowed); anything else is refused without its bytes")
    func file() throws {
        let bytes: [UInt8] = (0..<32).map { UInt8($0 * 7 % 256) }
        let raw = try SecretsKey(contentsOf: try Self.file(bytes))
        let hex = try SecretsKey(contentsOf: try Self.file(Array((bytes.map { String(format: "%02x", $0) }.joined() + "\n").utf8)))
        let sealed = raw.seal(identityKey: Self.identityKey, member: "ana")
        #expect(try hex.open(sealed, member: "ana") == Self.identityKey, "the same key either way")
        let short = try Self.file(Array("deadbeef".utf8))
        do {
            _ = try SecretsKey(contentsOf: short)
            Issue.record("a file of 8 bytes was taken")
        } catch {
            #expect(error.description == "\(short) must hold 32 random bytes, or their 64 hex digits (found 8 bytes)")
        }
        #expect(throws: SecretsKey.Failure.self) { try SecretsKey(contentsOf: "/nonexistent/secrets.key") }
    }
}
