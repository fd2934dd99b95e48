import Foundation
import Logging
import Testing

@testable import BeaconMeshDashboard

@Suite("Sessions and HTTP Basic")
struct SessionStoreTests {
    @Test("a session is a fresh 32-byte random token that ends after 12 hours, or at sign-out")
    func sessionsExpire() {
        let sessions = SessionStore()
        let start = ContinuousClock.now
        let token = sessions.create(for: "anna", at: start)
        let other = sessions.create(for: "anna", at: start)
        #expect(token.count == 64 && token.allSatisfy(\.isHexDigit) && token != other)
        #expect(sessions.user(of: token, at: start + .seconds(11 * 3600)) == "anna")
        #expect(sessions.user(of: token, at: start + .seconds(12 * 3600)) == nil, "expired")
        #expect(sessions.user(of: "0" + token.dropFirst(), at: start) == nil)
        sessions.remove(other)
        #expect(sessions.user(of: other, at: start) == nil, "signed out")
    }

    @Test("Basic credentials: base64 of name:password, split at the first colon, UTF-8; anything else is not Basic")
    func basicHeader() {
        func header(_ text: String) -> String { "Basic " + Data(text.utf8).base64EncodedString() }
        #expect(DashboardAccess.basicCredentials(header("anna:pa:ss word")).map { [$0.name, $0.password] } == ["anna", "pa:ss word"])
        #expect(DashboardAccess.basicCredentials(header("Zoë:ü")).map { [$0.name, $0.password] } == ["Zoë", "ü"])
        #expect(DashboardAccess.basicCredentials("basic " + Data("a:b".utf8).base64EncodedString())?.name == "a")
        for bad in ["Bearer abc", "Basic !!!", header("no colon"), "Basic"] {
            #expect(DashboardAccess.basicCredentials(bad) == nil, "\(bad)")
        }
    }

    @Test("sign-in: the right password signs in, a wrong one or an unknown name does not; the 11th try is refused unchecked")
    func signIn() async {
        let user = DashboardUser(name: "anna", passwordHash: PasswordHash.make("right password"), stores: .stores([1]))
        let access = DashboardAccess(users: [user], secureCookies: false, logger: Logger(label: "test"))
        #expect(await access.signIn(name: "anna", password: "right password", address: "10.0.0.1") == .signedIn(user))
        #expect(await access.signIn(name: "anna", password: "wrong", address: "10.0.0.1") == .wrongPassword)
        #expect(await access.signIn(name: "nobody", password: "right password", address: "10.0.0.2") == .wrongPassword)
        for _ in 0..<9 { _ = await access.signIn(name: "anna", password: "guess", address: "10.0.0.3") }
        #expect(await access.signIn(name: "anna", password: "right password", address: "10.0.0.4") == .tooManyAttempts)
        #expect(await access.signIn(name: "bert", password: "x", address: "10.0.0.4") == .wrongPassword, "another name, another address")
    }
}
