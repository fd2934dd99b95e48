/// Random broker passwords for provisioned credentials.
public enum ProvisioningPassword {
    /// The characters a password is drawn from: letters and digits, so it survives any config file or shell quoting.
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

    /// A password of `length` letters and digits drawn from `generator` (about 5.95 bits each: 32 give ~190 bits).
    public static func make(length: Int = 32, using generator: inout some RandomNumberGenerator) -> String {
        String(decoding: (0..<length).map { _ in alphabet.randomElement(using: &generator)! }, as: UTF8.self)
    }

    /// A password of `length` letters and digits from the system's secure random source (`getrandom`).
    public static func make(length: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        return make(length: length, using: &generator)
    }
}
