import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshThreads
import BeaconMeshWire
import Foundation
import Logging

/// The coordinator's local cache on disk (the config's `cache:`): one JSON document (`CoordinatorCacheDocument`),
/// replaced whole and atomically (`AtomicFile`: written beside, synced, renamed), readable and writable by the
/// coordinator's user only (0600). A member forgotten, or a visit past retention, is gone from the file at its next
/// replacement: nothing is appended, nothing kept from an earlier one.
public struct CoordinatorCacheFile: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// A cache that cannot be started from, in one line naming the file.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// The cache, if the file exists; it must be `coordinator`'s, of `database`.
    public func read(coordinator: String, database: String) throws(Failure) -> CoordinatorCacheDocument? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "cannot read the local cache \(path)")
        }
        let document: CoordinatorCacheDocument
        do {
            document = try WireCodec.decodeCoordinatorCache([UInt8](data))
        } catch {
            throw Failure(description: "the local cache \(path) is damaged (\(error)); it is replaced once the database is back")
        }
        guard document.coordinator == coordinator, document.database == database else {
            throw Failure(
                description:
                    "the local cache \(path) is coordinator '\(document.coordinator)''s of \(document.database), not '\(coordinator)''s of \(database)"
            )
        }
        return document
    }

    /// Replaces the file with `contents`, and with the registry writes `writer` has not made yet.
    func write(_ contents: CoordinatorCacheContents, pendingIn writer: RegistryWriter) throws(AtomicFile.Failure) {
        var document = contents.document()
        document.pendingWrites = writer.pendingBatches().map { .init(id: $0.id, changes: $0.changes.cacheValue) }
        try AtomicFile.replace(path, with: WireCodec.encode(document), mode: 0o600)
    }

    /// Queues the registry writes `document` kept (each at most once, by its id) on `writer`.
    func replayPendingWrites(of document: CoordinatorCacheDocument, on writer: RegistryWriter, logger: Logger) {
        for write in document.pendingWrites {
            guard let changes = RegistryChanges(cacheValue: write.changes) else {
                logger.error(
                    "a registry write kept in the local cache is damaged and lost", metadata: ["cache": "\(path)", "batch": "\(write.id)"])
                continue
            }
            writer.enqueue(batch: changes, id: write.id)
        }
        if !document.pendingWrites.isEmpty {
            logger.notice(
                "registry writes kept in the local cache are written again (at most once each)",
                metadata: ["cache": "\(path)", "batches": "\(document.pendingWrites.count)"])
        }
    }

    /// Writes each cache the decisions hand over (the latest, when several wait) on its writing thread, until the
    /// mailbox is closed; a write that fails is logged (once until one works again) and the next one tried.
    func keepWriting(from mailbox: CacheMailbox, pendingIn writer: RegistryWriter, logger: Logger) async {
        var lastFailure: String?
        while let contents = await mailbox.take({ $0.take() }) {
            let failure = await Self.onWritingThread {
                do {
                    try write(contents, pendingIn: writer)
                    return nil
                } catch {
                    return "\(error)"
                }
            }
            if let failure, failure != lastFailure {
                logger.error("cannot write the local cache; a cold start would use an older one", metadata: ["error": "\(failure)"])
            } else if failure == nil, lastFailure != nil {
                logger.notice("the local cache is written again", metadata: ["file": "\(path)"])
            }
            lastFailure = failure
        }
    }

    /// Where the writes run (encoding a chain's members and syncing a file block): off the decisions' threads.
    private static let writingThread = BackgroundThread(name: "cache-writer", priority: .background)

    private static func onWritingThread(_ work: @escaping @Sendable () -> String?) async -> String? {
        do {
            return try await writingThread.run(work)
        } catch {
            return "\(error)"
        }
    }
}

/// The local cache on its way from the decisions to its writer: the latest one only.
typealias CacheMailbox = Mailbox<LatestCache>

/// The latest cache not yet written (a newer one replaces it); never full.
struct LatestCache: MailboxContents {
    var waiting: CoordinatorCacheContents?

    var isFull: Bool { false }

    mutating func take() -> CoordinatorCacheContents? {
        defer { waiting = nil }
        return waiting
    }
}
