import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Logging

/// The steps of the coordinator's start that are not a part of their own.
extension CoordinatorService {
    /// Writes a previous run kept in its cache (the database was away when it stopped): made once each.
    func replayCachedWrites(on writer: RegistryWriter) {
        guard let cache else { return }
        do {
            let kept = try coldStart?.cache ?? cache.read(coordinator: configuration.id, database: configuration.database)
            if let kept { cache.replayPendingWrites(of: kept, on: writer, logger: logger) }
        } catch {
            logger.error("the local cache cannot be read; it is replaced", metadata: ["error": "\(error)"])
        }
    }

    /// With leases (a shared PostgreSQL registry), the keeper that claims and renews them, telling `inbox`.
    func makeLeaseKeeper(inbox: DecisionInbox) -> LeaseKeeper? {
        leases.map { leases in
            LeaseKeeper(
                leases: leases, registry: registry, stores: configuration.storeIDs, holder: configuration.id,
                ttl: configuration.lease.ttl, renewInterval: LeaseBook(ttl: configuration.lease.ttl).renewInterval,
                inbox: inbox, logger: logger, clock: clock, readsHolders: configuration.alerts.contains { $0.when.kind == .storeUndecided },
                webhooks: WebhookList(endpoints: configuration.webhooks))
        }
    }

    /// Whether the database answers, as health says; a cold start says why it started without it.
    func reachability(startedAt: Timestamp) -> RegistryReachability {
        let clock = self.clock
        let reachability = RegistryReachability(location: registry.location, clock: { clock.now() })
        if let coldStart {
            let saved = coldStart.cache.savedAt
            reachability.startedWithout(
                "started from the local cache \(cache?.path ?? "") saved \((startedAt - saved).wholeMilliseconds / 1000) s before: \(coldStart.cause)",
                at: startedAt)
        }
        return reachability
    }

    func logRunning(workers: Int, webhooks: Webhooks?) {
        logger.info(
            "coordinator running",
            metadata: [
                "id": "\(configuration.id)", "broker": "\(configuration.broker.url)",
                "stores": "\(configuration.storeIDs.map(String.init).joined(separator: ","))", "decoders": "\(workers)",
            ])
        if webhooks != nil {
            logger.info(
                "webhooks delivering",
                metadata: ["endpoints": "\(configuration.webhooks.map { "\($0.name) \($0.url)" }.joined(separator: ", "))"])
        }
    }
}
