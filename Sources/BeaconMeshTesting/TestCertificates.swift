import Foundation

/// A throw-away certificate authority and a server certificate for 127.0.0.1 / localhost, made with the `openssl` tool.
///
/// For TLS tests: give `serverCertificate`/`serverKey` to a mosquitto TLS listener (`tlsListenerConfiguration`) and
/// `caCertificate` to the client. Valid for one day; a missing `openssl` is an error saying what to install.
public struct TestCertificates: Sendable {
    /// PEM file of the CA that signed the server certificate (the client's `caFile`).
    public let caCertificate: String
    /// PEM file of the server certificate (subject alternative names: IP 127.0.0.1, DNS localhost).
    public let serverCertificate: String
    /// PEM file of the server's private key.
    public let serverKey: String

    /// Generates the CA and the server certificate into `directory`.
    public static func generate(in directory: String) async throws -> TestCertificates {
        let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let openssl else {
            throw TestSupportError("openssl was not found in /usr/bin or /usr/local/bin; install it (apt-get install openssl)")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let ca = directory + "/ca.pem"
        let caKey = directory + "/ca.key"
        let key = directory + "/server.key"
        let request = directory + "/server.csr"
        let certificate = directory + "/server.pem"
        let extensions = directory + "/server.ext"
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(toFile: extensions, atomically: true, encoding: .utf8)

        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=BeaconMesh Test CA",
                "-keyout", caKey, "-out", ca,
            ],
            ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", key, "-out", request],
            [
                "x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-days", "1",
                "-extfile", extensions, "-out", certificate,
            ],
        ]
        for arguments in steps {
            let process = try TestProcess(executable: openssl, arguments: arguments)
            let status = await process.waitForExit(timeout: .seconds(30))
            guard status == .exited(0) else {
                throw TestSupportError("openssl \(arguments.joined(separator: " ")) failed:\n\(process.transcript)")
            }
        }
        return TestCertificates(caCertificate: ca, serverCertificate: certificate, serverKey: key)
    }

    /// mosquitto config lines for a TLS listener on 127.0.0.1:`port` using these certificates.
    public func tlsListenerConfiguration(port: Int) -> [String] {
        [
            "listener \(port) 127.0.0.1", "cafile \(caCertificate)", "certfile \(serverCertificate)",
            "keyfile \(serverKey)", "allow_anonymous true",
        ]
    }
}
