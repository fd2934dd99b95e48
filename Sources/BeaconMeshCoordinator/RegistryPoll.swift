import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshWire
import Dispatch
import Logging

/// One look at the registry for what the `members` command changed: registry events it left in the outbox are
/// published, and a changed registry is handed to the decisions.
///
/// Reading the registry blocks (SQLite through GRDB, behind the writer's transactions), so `run(on:…)` does it on a
/// serial queue of its own, never on one of the concurrency pool's few threads, which decode messages and make the
/// decisions: a slow or locked database delays this poll only.
struct RegistryPoll: Sendable {
    /// The registry's data version when it was last read.
    private var version: Int64
    /// The last failure logged (a failure is logged once until the reads work again).
    private var lastFailure: String?
    private var outbox: RegistryEventOutbox

    init(version: Int64, coordinatorID: String) {
        self.version = version
        outbox = RegistryEventOutbox(coordinatorID: coordinatorID)
    }

    /// Everything one poll needs besides its own state.
    struct Parts: Sendable {
        let registry: MemberRegistry
        let publisher: any MQTTClientProtocol
        let topics: Topics
        let writer: RegistryWriter
        let inbox: DecisionInbox
        let logger: Logger
    }

    /// Polls once on `queue` and returns the poll as it stands after.
    func run(on queue: DispatchQueue, with parts: Parts) async -> RegistryPoll {
        await withCheckedContinuation { continuation in
            queue.async {
                var next = self
                next.poll(parts)
                continuation.resume(returning: next)
            }
        }
    }

    private mutating func poll(_ parts: Parts) {
        do {
            // Registry events the `members` command (or the CSV at start) left in the outbox.
            let published = try outbox.publishPending(from: parts.registry) { event in
                try parts.publisher.publish(
                    topic: parts.topics.registryEvents, payload: WireCodec.encode(event), qos: .atLeastOnce, retain: false)
            }
            parts.writer.enqueue(published)
            let current = try parts.registry.dataVersion()
            guard current != version else { return }
            let contents = try parts.registry.contents()
            version = current
            parts.inbox.registryChanged(contents)
            lastFailure = nil
        } catch {
            let cause = RegistryWriter.describe(error)
            guard cause != lastFailure else { return }
            lastFailure = cause
            parts.logger.error(
                "could not read the registry's changes; retrying",
                metadata: ["database": "\(parts.registry.path)", "cause": "\(cause)"])
        }
    }
}
