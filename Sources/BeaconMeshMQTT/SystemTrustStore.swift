import Glibc

/// Where OpenSSL finds the system's trusted certificates, as its default verify paths do: `SSL_CERT_FILE` and
/// `SSL_CERT_DIR` when set, else Debian's bundle (`/etc/ssl/certs/ca-certificates.crt`) and folder (`/etc/ssl/certs`).
struct SystemTrustStore: Sendable, CustomStringConvertible {
    var file: String?
    var folder: String?

    static let debianBundle = "/etc/ssl/certs/ca-certificates.crt"
    static let debianFolder = "/etc/ssl/certs"

    /// Glibc, not Foundation: importing Foundation here linked its internationalisation (ICU's data, ≈ 30 MB) into
    /// the static scanner, 11 MiB more resident at start.
    static func locate(environment variable: (String) -> String? = { getenv($0).map { String(cString: $0) } }) -> SystemTrustStore {
        let file = variable("SSL_CERT_FILE").flatMap { $0.isEmpty ? nil : $0 }
        let folder = variable("SSL_CERT_DIR").flatMap { $0.isEmpty ? nil : $0 }
        if file != nil || folder != nil { return SystemTrustStore(file: file, folder: folder) }
        let bundle = access(debianBundle, R_OK) == 0 ? debianBundle : nil
        return SystemTrustStore(file: bundle, folder: debianFolder)
    }

    var description: String {
        [file.map { "file \($0)" }, folder.map { "folder \($0)" }].compactMap { $0 }.joined(separator: ", ")
    }
}
