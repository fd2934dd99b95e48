import Hummingbird

/// A request to the dashboard: where it came from, and who made it once `SignInMiddleware` has looked.
public struct DashboardRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer's IP address (what sign-in failures are counted by), or `unknown`.
    public let remoteAddress: String
    /// The signed-in user; `nil` before sign-in and when the dashboard runs without `--users`.
    public var user: DashboardUser?
    /// The session cookie this request was signed in by, if any.
    public var sessionToken: String?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }

    /// The stores this request may see: the user's, or every store when sign-in is off (loopback only).
    public var stores: StoreAccess { user?.stores ?? .all }
}
