import Foundation

/// Where OpenSSL finds the system's trusted certificates, as its default verify paths do: `SSL_CERT_FILE` and
/// `SSL_CERT_DIR` when set, else Debian's bundle (`/etc/ssl/certs/ca-certificates.crt`) and folder (`/etc/ssl/certs`).
struct SystemTrustStore: Sendable, CustomStringConvertible {
    var file: String?
    var folder: String?

    static let debianBundle = "/etc/ssl/certs/ca-certificates.crt"
    static let debianFolder = "/etc/ssl/certs"

    static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) -> SystemTrustStore {
        let file = environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        let folder = environment["SSL_CERT_DIR"].flatMap { $0.isEmpty ? nil : $0 }
        if file != nil || folder != nil { return SystemTrustStore(file: file, folder: folder) }
        let bundle = FileManager.default.isReadableFile(atPath: debianBundle) ? debianBundle : nil
        return SystemTrustStore(file: bundle, folder: debianFolder)
    }

    var description: String {
        [file.map { "file \($0)" }, folder.map { "folder \($0)" }].compactMap { $0 }.joined(separator: ", ")
    }
}
