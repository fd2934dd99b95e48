import BeaconMeshService
import Testing

@testable import BeaconMeshDashboard

@Suite("Initials and listen addresses")
struct SmallValueTests {
    @Test(
        "initials take whole characters of any script",
        arguments: [
            ("Ana Souza", "AS"), ("Zoë", "Z"), ("zoë martin", "ZM"), ("李小龍", "李"), ("José Álvarez", "JÁ"),
            ("  ", "?"), ("Mary-Jane Watson", "MW"), ("Émile", "É"),
        ])
    func initials(name: String, expected: String) {
        #expect(MemberInitials.of(name) == expected)
    }

    @Test(
        "HOST:PORT is read; anything else is refused",
        arguments: [
            ("127.0.0.1:8080", "127.0.0.1", 8080), ("0.0.0.0:0", "0.0.0.0", 0), ("localhost:9464", "localhost", 9464),
            ("[::1]:8080", "::1", 8080),
        ])
    func listenAddress(text: String, host: String, port: Int) {
        let address = ListenAddress(text)
        #expect(address?.host == host)
        #expect(address?.port == port)
        #expect(address?.description == text)
    }

    @Test(
        "malformed addresses are refused", arguments: ["localhost", ":8080", "host:", "host:65536", "host:-1", "::1:80", "a b:80", "h:８０"])
    func badListenAddress(text: String) {
        #expect(ListenAddress(text) == nil)
    }
}
