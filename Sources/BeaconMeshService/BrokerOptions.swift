import ArgumentParser

/// The broker flags every BeaconMesh program shares: `--broker`, `--username`, `--password-file`, `--cafile`.
public struct BrokerOptions: ParsableArguments, Sendable {
    @Option(help: ArgumentHelp("Broker URL: mqtt://host:port or mqtts://host:port (default mqtt://127.0.0.1:1883).", valueName: "URL"))
    public var broker: String?

    @Option(help: ArgumentHelp("Broker user name.", valueName: "U"))
    public var username: String?

    @Option(help: ArgumentHelp("File holding the broker password (or set BEACONMESH_PASSWORD).", valueName: "F"))
    public var passwordFile: String?

    @Option(help: ArgumentHelp("CA certificate file to verify an mqtts:// broker (default: the system store).", valueName: "F"))
    public var cafile: String?

    public init() {}

    /// The connection these flags describe.
    public var connection: BrokerConnection {
        BrokerConnection(url: broker ?? BrokerConnection.defaultURL, username: username, passwordFile: passwordFile, caFile: cafile)
    }
}
