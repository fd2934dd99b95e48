import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshThreads
import Logging
import ServiceLifecycle

/// The decisions: messages decoded a chunk at a time on up to `workers` cores and decided on one task, in arrival
/// order, together with ticks and registry changes (`DecisionInbox`). That task alone holds the state, so nothing is
/// locked; it publishes what it decides in order, hands registry changes to the writer's thread and snapshots to a
/// task of their own (a big store's snapshot takes a while to encode). At shutdown — the first part of the coordinator
/// to stop — it queues its last changes (the open visits saved) and leaves its cache.
struct DecisionService: Service {
    let state: CoordinatorState
    let performing: CoordinatorService.Performing
    let messages: MQTTMessages
    let inbox: DecisionInbox
    let workers: Int
    let reachability: RegistryReachability
    let fobs: FobResolution?
    let lastCache: LastCache?
    let topics: Topics

    func run() async {
        let clock = performing.clock
        let final = await cancelWhenGracefulShutdown { [self] in
            await withDiscardingTaskGroup(returning: CoordinatorState.self) { group in
                group.addTask {
                    await CoordinatorService.decode(
                        messages, topics: topics, workers: workers, into: inbox, fobs: fobs.map { fobs in (fobs, clock) })
                }
                if let fobs {
                    group.addTask {
                        // Each fob's ids follow its windows: a rotation's new id is in the table before the fob says it.
                        // Offsets that drifted go to the registry, for the next start.
                        while !Task.isCancelled {
                            try? await clock.sleep(for: fobs.refreshInterval)
                            let offsets = fobs.refresh(at: clock.now().milliseconds / 1000)
                            if !offsets.isEmpty { performing.writer.enqueue(offsets) }
                        }
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await clock.sleep(for: CoordinatorService.tickInterval)
                        inbox.requestTick()
                    }
                }
                group.addTask { await publishSnapshots() }
                let state = await decide()
                inbox.close()
                performing.snapshots.close()
                performing.caches.close()
                group.cancelAll()
                return state
            }
        }
        var stopping = final
        var lastChanges = stopping.saveVisits().registry
        lastChanges.decidedBy = performing.leaseHolder
        performing.writer.enqueue(lastChanges)
        lastCache?.contents = stopping.cacheContents(at: clock.now())
    }

    /// The decisions, one item at a time, until shutdown cancels this task; the state they leave.
    private func decide() async -> CoordinatorState {
        var state = self.state
        let clock = performing.clock
        // The Prometheus series, recorded as the decisions say (this task alone touches them).
        var metrics = CoordinatorMetrics()
        while let item = await inbox.next() {
            let now = clock.now()
            if let fenced = state.checkLeases(at: clock.instant()) {
                CoordinatorService.perform(fenced, decidingUntil: state.decidingUntil, with: performing)
                if !fenced.metrics.isEmpty { metrics.record(fenced.metrics) }
            }
            let actions: CoordinatorActions
            switch item {
            case .inputs(let inputs):
                actions = state.handle(inputs, at: now)
            case .tick:
                let started = ContinuousClock.now
                actions = state.tick(at: now, database: reachability.merged(with: performing.writer.status))
                let took = ContinuousClock.now - started
                if took > .milliseconds(10) {
                    // Messages wait while a tick is decided: a slow one shows as event latency.
                    performing.logger.log(
                        level: took > .milliseconds(100) ? .warning : .debug, "slow tick",
                        metadata: ["milliseconds": "\(took.wholeMilliseconds)"])
                }
            case .membersChanged(let changes):
                actions = state.membersChanged(changes, at: now)
            case .surveysChanged(let fits, let baselines):
                actions = state.surveysChanged(fits, baselines: baselines)
            case .leasesRenewed(let held, let sentAt, let undecided):
                actions = state.leasesRenewed(held, sentAt: sentAt, at: now, instant: clock.instant(), undecided: undecided)
            case .tookOver(let stores, let loaded):
                actions = state.tookOver(stores, loaded: loaded, at: now, instant: clock.instant())
            }
            CoordinatorService.perform(actions, decidingUntil: state.decidingUntil, with: performing)
            if !actions.metrics.isEmpty { metrics.record(actions.metrics) }
        }
        return state
    }

    /// Snapshots are retained state, not events: they are made and encoded while decisions go on, one store at a time
    /// with a yield between, so that this task never holds one of the pool's few threads for long while the decisions
    /// or the decoding wait for one (event latency).
    private func publishSnapshots() async {
        let clock = performing.clock
        while let due = await performing.snapshots.next() {
            for source in due {
                // Made while the store was decided for: not published once its lease may have run out.
                if let until = source.decidingUntil, clock.instant() >= until { continue }
                CoordinatorService.publish(
                    [
                        Publication(
                            topic: topics.presence(store: source.store.id), message: .snapshot(source.snapshot()), qos: .atLeastOnce,
                            retain: true)
                    ], with: performing.publisher, logger: performing.logger)
                await Task.yield()
            }
        }
    }
}
