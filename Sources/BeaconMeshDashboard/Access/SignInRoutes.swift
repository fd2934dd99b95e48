import Foundation
import HTTPTypes
import Hummingbird

/// `/login` (the form, and its post) and `/logout`, for a dashboard with `--users`.
///
/// A right name and password open a session (`SessionStore`) and set its cookie — `HttpOnly`, `SameSite=Strict`,
/// `Path=/`, `Max-Age` of the session's lifetime, and `Secure` when the dashboard serves HTTPS — then send the
/// browser on to the page it came for (303). A wrong one shows the form again with 401; too many failures 429; a
/// post that a browser says came from another site (`Sec-Fetch-Site`) 403.
/// `/logout` (GET or POST) ends the session, clears the cookie and sends the browser back to `/login`.
public enum SignInRoutes {
    /// The largest sign-in form taken.
    static let formLimit = 16 * 1024

    public static func add(to router: Router<DashboardRequestContext>, access: DashboardAccess) {
        router.get("/login") { request, context in
            let next = safeNext(request.uri.queryParameters["next"].map(String.init))
            if context.user != nil { return redirect(to: next) }
            return page(.ok, LoginPage.html(next: next))
        }
        router.post("/login") { request, context in
            // Another site's page must not sign a visitor in (to an account of the other site's choosing): browsers
            // say where a form post comes from.
            if CrossSiteRequest.isRefused(request) {
                return page(.forbidden, LoginPage.html(next: "/", message: "Sign in through this dashboard's own form."))
            }
            let body = try await request.body.collect(upTo: formLimit)
            let form = try? URLEncodedFormDecoder().decode(LoginForm.self, from: String(buffer: body))
            let next = safeNext(form?.next)
            guard let form, !form.name.isEmpty, !form.password.isEmpty else {
                return page(.badRequest, LoginPage.html(next: next, name: form?.name ?? "", message: "Give your name and password."))
            }
            switch await access.signIn(name: form.name, password: form.password, address: context.remoteAddress) {
            case .signedIn(let user):
                if let old = context.sessionToken { access.sessions.remove(old) }
                let token = access.sessions.create(for: user.name, at: .now)
                var response = redirect(to: next)
                response.headers[values: .setCookie].append(
                    cookie(token, maxAge: Int(SessionStore.lifetime.components.seconds), access: access))
                return response
            case .wrongPassword:
                return page(.unauthorized, LoginPage.html(next: next, name: form.name, message: "Wrong name or password."))
            case .tooManyAttempts:
                var response = page(
                    .tooManyRequests,
                    LoginPage.html(next: next, name: form.name, message: "Too many failed sign-ins: try again in a minute."))
                response.headers[.retryAfter] = "60"
                return response
            }
        }
        let logout: @Sendable (Request, DashboardRequestContext) async throws -> Response = { _, context in
            if let token = context.sessionToken { access.sessions.remove(token) }
            var response = redirect(to: "/login")
            response.headers[values: .setCookie].append(cookie("", maxAge: 0, access: access))
            return response
        }
        router.get("/logout", use: logout)
        router.post("/logout", use: logout)
    }

    /// What the form posts.
    struct LoginForm: Decodable {
        var name: String
        var password: String
        var next: String?
    }

    /// The page to return to after sign-in: a path on this dashboard (`/…`, not `//…`), else `/`.
    static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/"), !next.hasPrefix("//"), !next.contains("\\"),
            !next.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F })
        else { return "/" }
        return next
    }

    /// The session cookie's `Set-Cookie` value.
    static func cookie(_ token: String, maxAge: Int, access: DashboardAccess) -> String {
        "\(SignInMiddleware.cookieName)=\(token); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict"
            + (access.secureCookies ? "; Secure" : "")
    }

    private static func redirect(to location: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = location
        headers[.cacheControl] = "no-store"
        return Response(status: .seeOther, headers: headers)
    }

    private static func page(_ status: HTTPResponse.Status, _ html: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
