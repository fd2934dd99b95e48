import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshThreads
import BeaconMeshWire
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Performing the decisions' actions: publications, registry writes, snapshots, health, status, take-overs, the cache.
extension CoordinatorService {
    /// What performing the decisions' actions uses.
    struct Performing: Sendable {
        let publisher: any MQTTClientProtocol
        let session: any MQTTClientProtocol
        let writer: RegistryWriter
        let snapshots: SnapshotMailbox
        let keeper: LeaseKeeper?
        /// With leases, this coordinator's id: the registry writes its visit rows only for stores no other holds.
        let leaseHolder: String?
        let healthTopic: String
        let statusTopic: String
        /// The retained status as last published (said again at every reconnection).
        let status: LatestStatus
        let caches: CacheMailbox
        /// Where a lease's fence reads the monotonic time.
        let clock: any ServiceClock
        let logger: Logger
        /// The config's webhooks, if any: what each is owed goes to the writer; their couriers deliver it.
        var webhooks: Webhooks? = nil
        /// The members' Eddystone-EID fobs resolved, if any (for the health report).
        var fobs: FobResolution? = nil
    }

    /// Performs what the decisions returned: publications in order (only while their store's lease holds: until
    /// `decidingUntil`, the decisions' fence), registry changes to the writer, snapshots to their task, the health report with this process's memory,
    /// a changed status (retained, on the session connection that holds the last will), take-overs to the keeper.
    static func perform(
        _ actions: CoordinatorActions, decidingUntil: [UInt16: ContinuousClock.Instant]?, with parts: Performing
    ) {
        // A promo's offer and a check-in go out once the database has their firing (`Publication.afterWrite`), the
        // rest at once: a greeting never waits for the database.
        let now = actions.publications.filter { !$0.afterWrite }
        let afterWrite = actions.publications.filter(\.afterWrite)
        publish(now, with: parts.publisher, logger: parts.logger, decidingUntil: decidingUntil, clock: parts.clock)
        // What webhooks are owed is written with the rest (a promo's with its firing), never on the way to MQTT.
        var owed: [WebhookDelivery] = []
        if let webhooks = parts.webhooks, !actions.publications.isEmpty {
            let instant = decidingUntil == nil ? nil : parts.clock.instant()
            owed = webhooks.routes.deliveries(
                for: actions.publications.filter { mayPublish($0, decidingUntil: decidingUntil, at: instant) }, at: parts.clock.now())
        }
        if !actions.registry.isEmpty || !afterWrite.isEmpty || !owed.isEmpty {
            var changes = actions.registry
            changes.decidedBy = parts.leaseHolder
            for delivery in owed { changes.queueWebhook(delivery) }
            var published: RegistryWriter.AfterWrite?
            if !afterWrite.isEmpty || !owed.isEmpty {
                let publisher = parts.publisher
                let logger = parts.logger
                let clock = parts.clock
                let couriers = owed.isEmpty ? [] : parts.webhooks?.couriers ?? []
                published = {
                    if !afterWrite.isEmpty {
                        publish(afterWrite, with: publisher, logger: logger, decidingUntil: decidingUntil, clock: clock)
                    }
                    for courier in couriers { courier.wake() }
                }
            }
            parts.writer.enqueue(changes, afterWrite: published)
        }
        if decidingUntil == nil {
            parts.snapshots.put(actions.snapshots)
        } else {
            parts.snapshots.put(
                actions.snapshots.map { source in
                    var source = source
                    source.decidingUntil = decidingUntil?[source.store.id] ?? parts.clock.instant()
                    return source
                })
        }
        if var health = actions.health {
            health.rssBytes = ProcessMemory.residentBytes()
            health.webhooks = parts.webhooks?.couriers.map(\.health) ?? []
            health.webhookListsDiffer = parts.keeper?.webhookListsDiffer ?? []
            health.fobs = parts.fobs.map { CoordinatorHealth.Fobs(count: $0.count, unresolved: $0.unresolved) }
            publish(
                [Publication(topic: parts.healthTopic, message: .health(health), qos: .atMostOnce, retain: false)],
                with: parts.publisher, logger: parts.logger)
        }
        if let status = actions.status {
            if let webhooks = parts.webhooks {
                webhooks.stores.current = Set(status.active)
                for courier in webhooks.couriers { courier.wake() }
            }
            let payload = WireCodec.encode(status)
            parts.status.payload = payload
            parts.logger.info("status", metadata: ["active": "\(status.active.map(String.init).joined(separator: ","))"])
            publish(
                [Publication(topic: parts.statusTopic, message: .encoded(payload), qos: .atLeastOnce, retain: true)], with: parts.session,
                logger: parts.logger)
        }
        if !actions.takeOvers.isEmpty { parts.keeper?.load(actions.takeOvers) }
        if let cache = actions.cache { _ = parts.caches.put { $0.waiting = cache } }
    }

    /// Hands publications to the client (which queues them; it never blocks on the network). With `decidingUntil`
    /// (leases), a publication for a store is dropped once the store's lease may have run out: the last fence between a
    /// decision and the network, should the process have been paused in between (read on `clock`'s monotonic time).
    static func publish(
        _ publications: [Publication], with client: any MQTTClientProtocol, logger: Logger,
        decidingUntil: [UInt16: ContinuousClock.Instant]? = nil, clock: any ServiceClock = WallClock()
    ) {
        let now = decidingUntil == nil ? nil : clock.instant()
        for publication in publications {
            guard mayPublish(publication, decidingUntil: decidingUntil, at: now) else {
                logger.warning("not published: the store's lease ran out", metadata: ["topic": "\(publication.topic)"])
                continue
            }
            do {
                try client.publish(
                    topic: publication.topic, payload: payload(of: publication.message), qos: publication.qos,
                    retain: publication.retain)
            } catch {
                logger.warning("could not publish", metadata: ["topic": "\(publication.topic)", "error": "\(error)"])
            }
        }
    }

    /// Whether `publication` may still go out at `now` (the monotonic time; `nil` without leases): its store's lease
    /// has not run out.
    static func mayPublish(
        _ publication: Publication, decidingUntil: [UInt16: ContinuousClock.Instant]?, at now: ContinuousClock.Instant?
    ) -> Bool {
        guard let now, let store = publication.store else { return true }
        return decidingUntil?[store].map { now < $0 } ?? false
    }

    /// The bytes on the wire of what a publication says.
    static func payload(of message: Publication.Message) -> [UInt8] {
        switch message {
        case .event(let event): WireCodec.encode(event)
        case .alert(let alert): WireCodec.encode(alert)
        case .offer(let offer): WireCodec.encode(offer)
        case .snapshot(let snapshot): WireCodec.encode(snapshot)
        case .health(let health): WireCodec.encode(health)
        case .encoded(let bytes): bytes
        }
    }
}

/// The coordinator's retained status as last published, said again at every reconnection of the session.
final class LatestStatus: Sendable {
    private let bytes: Mutex<[UInt8]>

    init(_ payload: [UInt8]) {
        bytes = Mutex(payload)
    }

    var payload: [UInt8] {
        get { bytes.withLock { $0 } }
        set { bytes.withLock { $0 = newValue } }
    }
}
