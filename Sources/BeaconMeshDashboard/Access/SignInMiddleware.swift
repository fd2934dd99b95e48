import Foundation
import HTTPTypes
import Hummingbird

/// Lets a request through only when it is signed in, by session cookie or HTTP Basic, when the dashboard has
/// `--users`; without them every request goes through (the dashboard then listens on loopback only).
///
/// Open to all: `/login`, `/logout` (so a browser whose session already ended still lands on `/login`), `/healthz`
/// and the stylesheet the sign-in form uses (static, no data). Otherwise, unsigned in, a browser
/// navigating to any page (`Accept: text/html`) is sent to `/login?next=…` (303); everything else — the JSON API,
/// the live streams, `/metrics` — answers 401, with a Basic challenge for clients that are not browsers (a browser's
/// script gets none, so no password box pops up over the page). A wrong Basic password is 401, too many 429.
public struct SignInMiddleware: RouterMiddleware {
    public typealias Context = DashboardRequestContext

    /// The paths that need no sign-in.
    public static let openPaths: Set<String> = ["/login", "/logout", "/healthz", "/assets/dashboard.css"]
    /// The session cookie's name.
    public static let cookieName = "beaconmesh_session"

    let access: DashboardAccess?

    public init(access: DashboardAccess?) {
        self.access = access
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let access else { return try await next(request, context) }
        var context = context
        if let token = request.cookies[Self.cookieName]?.value, let user = access.user(ofSession: token) {
            context.user = user
            context.sessionToken = token
        }
        if context.user == nil, let header = request.headers[.authorization] {
            switch await access.signIn(basicHeader: header, address: context.remoteAddress) {
            case .signedIn(let user)?: context.user = user
            case .wrongPassword?: return Self.unauthorized(request, "wrong name or password")
            case .tooManyAttempts?: return Self.tooManyAttempts()
            case nil: break
            }
        }
        if context.user != nil || Self.openPaths.contains(request.uri.path) {
            return try await next(request, context)
        }
        if request.method == .get || request.method == .head, request.headers[.accept]?.contains("text/html") == true {
            return Self.redirectToLogin(from: request)
        }
        return Self.unauthorized(request, "sign in first: a session from /login, or HTTP Basic")
    }

    /// 303 to `/login?next=` the page asked for.
    static func redirectToLogin(from request: Request) -> Response {
        var target = request.uri.path
        if let query = request.uri.query, !query.isEmpty { target += "?" + query }
        var headers = HTTPFields()
        headers[.location] = "/login?next=" + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/")
        headers[.cacheControl] = "no-store"
        return Response(status: .seeOther, headers: headers)
    }

    /// 401 with one line; a Basic challenge unless a browser's script asked (`Sec-Fetch-Mode`).
    static func unauthorized(_ request: Request, _ line: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.cacheControl] = "no-store"
        if request.headers[HTTPField.Name("Sec-Fetch-Mode")!] == nil {
            headers[.wwwAuthenticate] = #"Basic realm="BeaconMesh dashboard", charset="UTF-8""#
        }
        return Response(status: .unauthorized, headers: headers, body: .init(byteBuffer: ByteBuffer(string: line + "\n")))
    }

    /// 429 with one line and `Retry-After`.
    static func tooManyAttempts() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.retryAfter] = "60"
        return Response(
            status: .tooManyRequests, headers: headers,
            body: .init(byteBuffer: ByteBuffer(string: "too many failed sign-ins: try again in a minute\n")))
    }
}
