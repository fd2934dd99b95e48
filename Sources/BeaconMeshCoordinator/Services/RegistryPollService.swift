import BeaconMeshCore
import BeaconMeshRegistry
import Logging
import ServiceLifecycle

/// Others change the registry while the coordinator runs (the `members` command; a chain's other coordinators): the
/// poll reads their changes on a thread of its own (the database may be slow, locked or away) and hands them to the
/// decisions, until shutdown.
struct RegistryPollService: Service {
    let parts: RegistryPoll.Parts
    let contents: RegistryContents
    let configuration: CoordinatorConfiguration

    func run() async {
        let feed = RegistryPoll.FeedHolder()
        await cancelWhenGracefulShutdown { [parts, contents, configuration] in
            await withTaskCancellationHandler {
                let poll = RegistryPoll(
                    contents: contents, coordinatorID: configuration.id, stores: Set(configuration.storeIDs),
                    references: configuration.stores.reduce(into: [:]) { references, store in
                        if !store.references.isEmpty { references[store.id] = Set(store.references.map(\.beacon)) }
                    }, feed: feed)
                do {
                    try await (consume poll).run(with: parts, wait: CoordinatorService.registryPollInterval)
                } catch {
                    parts.logger.critical("others' registry changes are not read", metadata: ["error": "\(error)"])
                }
            } onCancel: {
                feed.close()
            }
        }
    }
}
