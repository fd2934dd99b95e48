import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshWire
import Logging

/// One message the coordinator wants published.
struct Publication: Sendable {
    var topic: String
    var payload: [UInt8]
    var qos: MQTTQoS
    var retain: Bool
}

/// The coordinator's working state: the presence engine plus what it needs to turn engine outputs into the
/// contract's events, offers and snapshots. Driven by `CoordinatorService` from a single loop.
struct CoordinatorState {
    let configuration: CoordinatorConfiguration
    let registry: MemberRegistry
    let logger: Logger
    let topics: Topics
    let startedAt: Timestamp
    let healthInterval: Duration

    private var engine: PresenceEngine
    private var profiles: [String: MemberProfile] = [:]
    private var promoFires: [String: [String: Timestamp]] = [:]
    private var drops = DropCounter()
    private var eventsPublished: UInt64 = 0
    private var pending: [Publication] = []
    /// Snapshots due: made, encoded and published by the caller outside the lock (a big store's snapshot takes a while).
    private var pendingSnapshots: [SnapshotSource] = []
    private var dirtyStores: Set<UInt16> = []
    private var lastSnapshot: [UInt16: Timestamp] = [:]
    private var lastHealth: Timestamp
    /// The next member slot whose visit the periodic save writes.
    private var visitSaveCursor = 0
    private var lastRegistryPoll: Timestamp
    private var registryVersion: Int64
    private var eventCounter: UInt64 = 0
    private let eventPrefix = RandomID.make(hexDigits: 8)
    /// The stores with a promo in any department: promos are checked for them at every tick.
    private let promoStores: Set<UInt16>
    /// The Prometheus series (recorded through swift-metrics), and when they last followed the health figures.
    private var metrics = CoordinatorMetrics()
    private var metricsUpdatedAt: Timestamp?

    init(configuration: CoordinatorConfiguration, registry: MemberRegistry, logger: Logger, topics: Topics, startedAt: Timestamp,
         healthInterval: Duration) throws {
        self.healthInterval = healthInterval
        self.configuration = configuration
        self.registry = registry
        self.logger = logger
        self.topics = topics
        self.startedAt = startedAt
        promoStores = Set(configuration.stores.filter { $0.departments.contains { $0.promo != nil } }.map(\.id))
        var stores: [UInt16: [DepartmentLayout]] = [:]
        for store in configuration.stores {
            stores[store.id] = store.departments.map { DepartmentLayout(id: $0.id, rules: $0.presence) }
        }
        engine = PresenceEngine(rules: configuration.presence, stores: stores)
        _ = engine.setDirectory(try registry.beaconOwners())
        profiles = try registry.profiles()
        promoFires = try registry.promoFires()
        let visits = try registry.loadVisits()
        engine.restore(visits)
        registryVersion = try registry.dataVersion()
        lastHealth = startedAt
        lastRegistryPoll = startedAt
        dirtyStores = Set(configuration.storeIDs)
        logger.info("registry loaded", metadata: ["members": "\(profiles.count)", "openVisits": "\(visits.filter { $0.leftAt == nil }.count)"])
    }

    /// Hands over what the presence snapshots that are due are made from (publish them on `Topics.presence(store:)`,
    /// retained).
    mutating func takeSnapshots() -> [SnapshotSource] {
        defer { pendingSnapshots.removeAll(keepingCapacity: true) }
        return pendingSnapshots
    }

    /// Hands over what should be published now.
    mutating func takePublications() -> [Publication] {
        defer { pending.removeAll(keepingCapacity: true) }
        return pending
    }

    // MARK: Input

    /// Handles one broker message: a sighting batch or a node status of a served store; anything else is dropped
    /// and counted with its reason.
    mutating func receive(_ message: MQTTMessage, at now: Timestamp) {
        switch topics.parse(message.topic) {
        case .sightings(let node)?:
            let batch: SightingBatch
            do {
                batch = try WireCodec.decodeSightingBatch(message.payload)
            } catch {
                drops.drop(reason: error.reason, topic: message.topic, detail: error.description, at: now, logger: logger)
                return
            }
            guard batch.node == node else {
                drops.drop(reason: "topic-mismatch", topic: message.topic,
                           detail: "the body says \(batch.node), the topic \(node)", at: now, logger: logger)
                return
            }
            let (verdict, outputs) = engine.ingest(batch, at: now)
            switch verdict {
            case .applied: break
            case .unknownStore:
                drops.drop(reason: "unknown-store", topic: message.topic, detail: "store \(node.store) is not served here", at: now, logger: logger)
            case .duplicate, .late, .nodeOffline:
                break
            }
            apply(outputs, at: now)
        case .nodeStatus(let node)?:
            if message.payload.isEmpty { return }
            let status: NodeStatus
            do {
                status = try WireCodec.decodeNodeStatus(message.payload)
            } catch {
                drops.drop(reason: error.reason, topic: message.topic, detail: error.description, at: now, logger: logger)
                return
            }
            if message.retained {
                engine.restoreNode(node, state: status.state, boot: status.boot.isEmpty ? nil : status.boot)
                dirtyStores.insert(node.store)
            } else {
                apply(engine.nodeStatusChanged(node, state: status.state, boot: status.boot.isEmpty ? nil : status.boot, at: now), at: now)
            }
        default:
            drops.drop(reason: "bad-topic", topic: message.topic, detail: "not a topic of the contract", at: now, logger: logger)
        }
    }

    /// Advances time: engine tick, promos, snapshots, health, visit saving, registry changes.
    mutating func tick(at now: Timestamp) {
        if now - lastRegistryPoll >= CoordinatorService.registryPollInterval {
            lastRegistryPoll = now
            reloadRegistryIfChanged(at: now)
        }
        apply(engine.tick(at: now), at: now)
        let expired = engine.expireVisits(at: now)
        if !expired.isEmpty {
            do {
                try registry.deleteVisits(of: expired)
            } catch {
                logger.error("could not delete ended visits", metadata: ["error": "\(error)"])
            }
        }
        let snapshotStores = storesDueForSnapshot(at: now)
        let wanted = promoStores.union(snapshotStores)
        let present = wanted.isEmpty ? [:] : engine.presentMembersByStore(in: wanted)
        firePromos(present, at: now)
        publishSnapshots(of: snapshotStores, present: present, at: now)
        saveVisitSlice()
        if now - lastHealth >= healthInterval {
            lastHealth = now
            publishHealth(at: now)
        }
        if metricsUpdatedAt.map({ now - $0 >= CoordinatorMetrics.interval }) ?? true {
            metricsUpdatedAt = now
            metrics.update(batches: engine.counters.batches, sightings: engine.counters.sightings, dropped: droppedCounts(),
                           tracked: engine.trackedCount)
        }
    }

    // MARK: Engine outputs

    private mutating func apply(_ outputs: [PresenceEngine.Output], at now: Timestamp) {
        var visitsChanged: [String] = []
        for output in outputs {
            switch output {
            case .arrived(let member, let store, let department, let at):
                guard let (profile, visit) = countVisit(member: member, at: at) else { continue }
                let greeting = (configuration.store(store)?.greeting ?? .standard).render(for: profile, visit: visit.number)
                publish(event: .arrived(member: profile, department: department, departmentName: departmentName(store, department),
                                        visit: visit, greeting: greeting), store: store, at: at)
            case .resumed(let member, _, _, _):
                visitsChanged.append(member)
            case .moved(let member, let store, let from, let to, let at):
                visitsChanged.append(member)
                guard let profile = profiles[member] else { continue }
                publish(event: .moved(member: profile, from: from, to: to, fromName: departmentName(store, from),
                                      toName: departmentName(store, to)), store: store, at: at)
            case .left(let member, let store, let department, let dwell, let at):
                visitsChanged.append(member)
                guard let profile = profiles[member] else { continue }
                publish(event: .left(member: profile, department: department, dwellSeconds: Int((dwell.wholeMilliseconds + 500) / 1000)),
                        store: store, at: at)
            case .node(let node, let state, let at):
                publish(event: .node(department: node.department, node: node.node, state: state), store: node.store, at: at)
            case .presenceChanged(let store):
                dirtyStores.insert(store)
            }
        }
        if !visitsChanged.isEmpty {
            do {
                try registry.saveVisits(of: visitsChanged.compactMap { engine.visit(of: $0) })
            } catch {
                logger.error("could not save visits", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Counts the visit (saving the open visit with it) and returns the member as the event shows them.
    private mutating func countVisit(member: String, at time: Timestamp) -> (MemberProfile, VisitNumber)? {
        do {
            guard let visit = try registry.countVisit(member: member, at: time, visit: engine.visit(of: member)),
                  var profile = profiles[member]
            else { return nil }
            profile.visits = visit.number
            profile.lastVisitAt = time
            profiles[member] = profile
            return (profile, visit)
        } catch {
            logger.error("could not count a visit", metadata: ["member": "\(member)", "error": "\(error)"])
            guard let profile = profiles[member] else { return nil }
            return (profile, VisitNumber(number: profile.visits, previousAt: profile.lastVisitAt))
        }
    }

    private func departmentName(_ store: UInt16, _ department: UInt16) -> String {
        configuration.store(store)?.department(department)?.name ?? "Department \(department)"
    }

    private mutating func nextID() -> String {
        eventCounter += 1
        return "\(eventPrefix)-\(eventCounter)"
    }

    private mutating func publish(event kind: StoreEvent.Kind, store: UInt16, at: Timestamp) {
        let event = StoreEvent(id: nextID(), store: store, at: at, kind: kind)
        eventsPublished += 1
        metrics.countEvent(type: event.type)
        pending.append(Publication(topic: topics.events(store: store), payload: WireCodec.encode(event), qos: .atLeastOnce, retain: false))
        logger.info("event", metadata: ["type": "\(event.type)", "store": "\(store)", "member": "\(event.member?.id ?? "-")"])
    }

    // MARK: Promos

    private mutating func firePromos(_ present: [UInt16: [PresenceEngine.Visit]], at now: Timestamp) {
        let (day, minute) = LocalCalendar.dayAndMinute(of: now)
        for store in configuration.stores where promoStores.contains(store.id) {
            for visit in present[store.id] ?? [] {
                guard let department = store.department(visit.department), let rule = department.promo,
                      let profile = profiles[visit.member]
                else { continue }
                let eligibility = PromoEligibility(proximity: rule.proximity, dwell: rule.dwell ?? configuration.promos.dwell,
                                                   cooldown: configuration.promos.cooldown)
                let last = promoFires[visit.member]?[rule.promo.id]
                guard eligibility.shouldFire(for: visit, lastFiredAt: last, at: now),
                      rule.window.check(day: day, minute: minute).open,
                      rule.audience.includes(member: visit.member, visits: profile.visits)
                else { continue }
                promoFires[visit.member, default: [:]][rule.promo.id] = now
                do {
                    try registry.recordPromoFire(member: visit.member, promo: rule.promo.id, store: store.id, at: now)
                } catch {
                    logger.error("could not record a promo", metadata: ["member": "\(visit.member)", "error": "\(error)"])
                }
                publish(event: .promo(member: profile, department: department.id, departmentName: department.name, promo: rule.promo),
                        store: store.id, at: now)
                let offer = Offer(id: nextID(), member: visit.member, store: store.id, department: department.id, promo: rule.promo, at: now)
                pending.append(Publication(topic: topics.offers(member: visit.member), payload: WireCodec.encode(offer),
                                           qos: .atLeastOnce, retain: false))
            }
        }
    }

    // MARK: Snapshots, health, persistence

    /// The stores whose snapshot goes out at this tick: changed ones at most every `snapshotMinimumInterval`, the
    /// others every `snapshotRefreshInterval`; the longest waiting first, no more than a fair share per tick.
    private func storesDueForSnapshot(at now: Timestamp) -> Set<UInt16> {
        var due: [(store: UInt16, last: Timestamp?)] = []
        for store in configuration.storeIDs {
            let last = lastSnapshot[store]
            guard let last else {
                due.append((store, nil))
                continue
            }
            let age = now - last
            if age >= CoordinatorService.snapshotRefreshInterval
                || dirtyStores.contains(store) && age >= CoordinatorService.snapshotMinimumInterval {
                due.append((store, last))
            }
        }
        let share = (configuration.storeIDs.count * Int(CoordinatorService.tickInterval.wholeMilliseconds)
            + Int(CoordinatorService.snapshotMinimumInterval.wholeMilliseconds) - 1)
            / Int(CoordinatorService.snapshotMinimumInterval.wholeMilliseconds)
        guard due.count > share else { return Set(due.map(\.store)) }
        due.sort { ($0.last?.milliseconds ?? .min, $0.store) < ($1.last?.milliseconds ?? .min, $1.store) }
        return Set(due.prefix(share).map(\.store))
    }

    private mutating func publishSnapshots(of stores: Set<UInt16>, present: [UInt16: [PresenceEngine.Visit]], at now: Timestamp) {
        guard !stores.isEmpty else { return }
        let guests = engine.guestCountsByStore(at: now)
        for store in configuration.stores where stores.contains(store.id) {
            dirtyStores.remove(store.id)
            lastSnapshot[store.id] = now
            let nodes = engine.nodeStates(store: store.id).map {
                PresenceSnapshot.NodeState(department: $0.node.department, node: $0.node.node, state: $0.state)
            }
            let members = (present[store.id] ?? []).compactMap { visit in profiles[visit.member].map { (visit, $0) } }
            metrics.snapshot(store: store.id, members: members.count, guests: (guests[store.id] ?? [:]).values.reduce(0, +),
                             nodes: nodes.map { ($0.department, $0.node, $0.state == .online) })
            pendingSnapshots.append(SnapshotSource(store: store, present: members, guests: guests[store.id] ?? [:], nodes: nodes, at: now))
        }
    }

    /// What was dropped, by reason: refused messages, and readings too late or from offline nodes.
    private func droppedCounts() -> [String: UInt64] {
        let counters = engine.counters
        var dropped = drops.counts
        if counters.late > 0 { dropped["late"] = counters.late }
        if counters.fromOfflineNodes > 0 { dropped["offline-node"] = counters.fromOfflineNodes }
        return dropped
    }

    private mutating func publishHealth(at now: Timestamp) {
        let counters = engine.counters
        let dropped = droppedCounts()
        let health = CoordinatorHealth(
            uptimeSeconds: (now - startedAt).wholeMilliseconds / 1000, batches: counters.batches, sightings: counters.sightings,
            events: eventsPublished, dropped: dropped, gaps: counters.gaps, duplicates: counters.duplicates,
            tracked: engine.trackedCount, rssBytes: ProcessMemory.residentBytes())
        pending.append(Publication(topic: topics.coordinatorHealth(id: configuration.id), payload: WireCodec.encode(health),
                                   qos: .atMostOnce, retain: false))
    }

    /// Saves every visit the engine holds (open and recently left), with their latest last-seen times.
    mutating func saveVisits() {
        do {
            try registry.saveVisits(of: engine.visits)
        } catch {
            logger.error("could not save visits", metadata: ["error": "\(error)"])
        }
    }

    /// Saves the visits of the next slice of members, so that every visit is saved at least every
    /// `visitSaveInterval` without one long write holding up the messages.
    private mutating func saveVisitSlice() {
        let ticks = max(1, Int(CoordinatorService.visitSaveInterval.wholeMilliseconds / CoordinatorService.tickInterval.wholeMilliseconds))
        let slots = engine.memberSlots
        guard slots > 0 else { return }
        if visitSaveCursor >= slots { visitSaveCursor = 0 }
        let end = min(slots, visitSaveCursor + (slots + ticks - 1) / ticks)
        let visits = engine.visits(inSlots: visitSaveCursor..<end)
        visitSaveCursor = end
        guard !visits.isEmpty else { return }
        do {
            try registry.saveVisits(of: visits)
        } catch {
            logger.error("could not save visits", metadata: ["error": "\(error)"])
        }
    }

    private mutating func reloadRegistryIfChanged(at now: Timestamp) {
        do {
            let version = try registry.dataVersion()
            guard version != registryVersion else { return }
            registryVersion = version
            profiles = try registry.profiles()
            promoFires = try registry.promoFires()
            apply(engine.setDirectory(try registry.beaconOwners()), at: now)
            logger.info("registry changed", metadata: ["members": "\(profiles.count)"])
        } catch {
            logger.error("could not reload the registry", metadata: ["error": "\(error)"])
        }
    }
}

/// What one store's presence snapshot is made from, taken from the state under its lock, so that the snapshot can
/// be made and encoded outside it. It holds copies of the present members' profiles, not the state's dictionary of
/// all profiles: sharing that would make the next visit count copy the whole dictionary.
struct SnapshotSource: Sendable {
    let store: CoordinatorConfiguration.Store
    let present: [(visit: PresenceEngine.Visit, profile: MemberProfile)]
    let guests: [UInt16: Int]
    let nodes: [PresenceSnapshot.NodeState]
    let at: Timestamp

    /// The snapshot: present members newest arrival first, occupancy of every department (named), node states.
    func snapshot() -> PresenceSnapshot {
        var occupancy: [UInt16: PresenceSnapshot.Occupancy] = [:]
        for department in store.departments { occupancy[department.id] = .init(members: 0, guests: 0, name: department.name) }
        var members: [PresenceSnapshot.PresentMember] = []
        members.reserveCapacity(present.count)
        for (visit, profile) in present {
            let departmentName = store.department(visit.department)?.name ?? "Department \(visit.department)"
            members.append(.init(member: profile, department: visit.department, departmentName: departmentName,
                                 proximity: visit.proximity, arrivedAt: visit.arrivedAt, inDepartmentSince: visit.inDepartmentSince,
                                 lastSeen: visit.lastSeen))
            occupancy[visit.department, default: .init(members: 0, guests: 0)].members += 1
        }
        for (department, guests) in guests {
            occupancy[department, default: .init(members: 0, guests: 0)].guests += guests
        }
        return PresenceSnapshot(store: store.id, name: store.name, updatedAt: at, members: members, occupancy: occupancy, nodes: nodes)
    }
}
