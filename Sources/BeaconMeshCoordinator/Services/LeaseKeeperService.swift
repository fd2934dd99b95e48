import ServiceLifecycle

/// The lease keeper (started before the decisions, so that their first renewal finds it claiming) until shutdown;
/// then it releases the leases, after the writer saved the visits, so that a standby takes the stores over now rather
/// than after the ttl.
struct LeaseKeeperService: Service {
    let keeper: LeaseKeeper

    func run() async {
        try? await gracefulShutdown()
        keeper.stop(release: true)
    }
}
