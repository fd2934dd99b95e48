import HTTPTypes
import Hummingbird

/// Adds to every response the headers that keep a browser from running anything the dashboard did not serve
/// itself: a Content-Security-Policy allowing only the dashboard's own script and stylesheet (and `data:` images,
/// the members' photos), no framing, no MIME sniffing and no referrer sent elsewhere. A member's name that is markup
/// is only ever set as text by the page's script; this is the second fence. Under HTTPS also
/// `Strict-Transport-Security`, so a browser that has been here never tries plain HTTP again.
public struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The policy every response carries.
    public static var contentSecurityPolicy: String {
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; "
            + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    }

    /// Whether the dashboard serves HTTPS.
    let https: Bool

    public init(https: Bool = false) {
        self.https = https
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        response.headers[HTTPField.Name("Content-Security-Policy")!] = Self.contentSecurityPolicy
        response.headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        if https { response.headers[HTTPField.Name("Strict-Transport-Security")!] = "max-age=31536000" }
        return response
    }
}
