import BeaconMeshMQTT

#if canImport(Glibc)
    import Glibc
#endif

/// How a BeaconMesh program reaches its broker: URL, user, password source and CA file, as flags or config give them.
///
/// Passwords never come from a command line: from `passwordFile`, else the `BEACONMESH_PASSWORD` environment variable.
public struct BrokerConnection: Sendable, Equatable {
    public var url: String
    public var username: String?
    public var passwordFile: String?
    public var caFile: String?

    /// The broker every program reaches when its flags or config name none: mosquitto on this machine.
    public static let defaultURL = "mqtt://127.0.0.1:1883"

    public init(url: String, username: String? = nil, passwordFile: String? = nil, caFile: String? = nil) {
        self.url = url
        self.username = username
        self.passwordFile = passwordFile
        self.caFile = caFile
    }

    /// Why the connection settings cannot be used.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The MQTT client configuration for these settings (credentials read now), with the given identity and will.
    public func mqttConfiguration(
        clientID: String?, cleanSession: Bool, lastWill: MQTTLastWill?, keepAlive: Duration = .seconds(10)
    ) throws(Failure) -> MQTTConfiguration {
        let broker: BrokerURL
        do {
            broker = try BrokerURL(url)
        } catch {
            throw Failure(description: "\(error)")
        }
        if let caFile, access(caFile, R_OK) != 0 {
            throw Failure(description: "cannot read the CA file \(caFile)")
        }
        let password = try readPassword()
        if password != nil && username == nil {
            throw Failure(description: "a password was given but no username (--username)")
        }
        let configuration = MQTTConfiguration(
            broker: broker, clientID: clientID, cleanSession: cleanSession, username: username, password: password,
            caFile: caFile, keepAlive: keepAlive, lastWill: lastWill, reconnectDelayMin: .seconds(1),
            reconnectDelayMax: .seconds(10))
        do {
            try configuration.validate()
        } catch {
            throw Failure(description: "\(error)")
        }
        return configuration
    }

    private func readPassword() throws(Failure) -> String? {
        if let passwordFile {
            guard let file = fopen(passwordFile, "r") else { throw Failure(description: "cannot read the password file \(passwordFile)") }
            defer { fclose(file) }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = fread(&buffer, 1, buffer.count, file)
                if count <= 0 { break }
                bytes += buffer[0..<count]
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let firstLine = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let password = firstLine.hasSuffix("\r") ? String(firstLine.dropLast()) : firstLine
            guard !password.isEmpty else { throw Failure(description: "the password file \(passwordFile) is empty") }
            return password
        }
        if let value = getenv("BEACONMESH_PASSWORD") {
            let password = String(cString: value)
            return password.isEmpty ? nil : password
        }
        return nil
    }
}
