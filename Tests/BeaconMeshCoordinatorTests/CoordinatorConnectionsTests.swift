import BeaconMeshMQTT
import Testing

@testable import BeaconMeshCoordinator

/// The coordinator's two broker connections: the session one keeps the contract's identity (fixed client id,
/// persistent session, last will) and lets acknowledgements share segments; the publishing one sends at once.
@Suite("Coordinator connections")
struct CoordinatorConnectionsTests {
    @Test("the session connection is the config's id with a persistent session and the offline will; the publisher sends at once")
    func configurations() throws {
        var configuration = CoordinatorConfiguration(id: "backoffice-1")
        configuration.broker.url = "mqtt://127.0.0.1:1883"
        let connections = try CoordinatorService.mqttConfigurations(for: configuration)

        #expect(connections.session.clientID == "backoffice-1")
        #expect(connections.session.cleanSession == false)
        #expect(connections.session.lastWill?.topic == "beaconmesh/v1/coordinators/backoffice-1/status")
        #expect(connections.session.lastWill?.retain == true)
        #expect(connections.session.sendsWithoutDelay == false)

        #expect(connections.publisher.clientID == "backoffice-1-publisher")
        #expect(connections.publisher.cleanSession == true)
        #expect(connections.publisher.lastWill == nil)
        #expect(connections.publisher.sendsWithoutDelay == true)
    }
}
