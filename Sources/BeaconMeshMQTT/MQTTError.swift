import CMosquitto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Everything that can go wrong in BeaconMeshMQTT, as a value whose `description` is one line a store's IT person can act on.
public enum MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A broker URL that cannot be used: `url` as given, `problem` in words.
    case invalidBrokerURL(url: String, problem: String)
    /// A configuration that cannot work (for example a persistent session without a client id).
    case invalidConfiguration(String)
    /// A libmosquitto call failed: the call, its return code, the `errno` it left (for `MOSQ_ERR_ERRNO`) and the reason.
    case library(call: String, code: Int32, systemError: Int32?, reason: String)
    /// A QoS 0 message could not be sent because the client is not connected (QoS 1 messages are queued instead).
    case notConnected(topic: String)
    /// The client was disconnected with `disconnect(timeout:)`; it cannot be used again.
    case closed

    public var description: String {
        switch self {
        case .invalidBrokerURL(let url, let problem):
            return "invalid broker URL \"\(url)\": \(problem) (expected mqtt://host:port or mqtts://host:port)"
        case .invalidConfiguration(let problem):
            return "invalid MQTT configuration: \(problem)"
        case .library(let call, let code, let systemError, let reason):
            if let systemError {
                return "\(call) failed: \(reason) (libmosquitto error \(code), errno \(systemError))"
            }
            return "\(call) failed: \(reason) (libmosquitto error \(code))"
        case .notConnected(let topic):
            return "cannot publish to \(topic) at QoS 0: not connected to the broker (the message was dropped)"
        case .closed:
            return "the MQTT client was already disconnected and cannot be used again"
        }
    }
}

/// The one place `errno` is read in BeaconMeshMQTT: runs `body` (one C call) and reads `errno` at once, before
/// anything else can change it. Every C call whose failure `errno` explains goes through here.
@inline(__always)
func withSavedErrno<Value>(_ body: () -> Value) -> (result: Value, savedErrno: Int32) {
    let result = body()
    let savedErrno = errno
    return (result, savedErrno)
}

/// What one libmosquitto call returned, with the `errno` it left: how call sites that handle some codes themselves
/// (`MOSQ_ERR_NO_CONN`, say) see a return code. `error(call:)` makes the `.library` error of a failure.
struct MosquittoStatus {
    /// The libmosquitto return code (`MOSQ_ERR_SUCCESS` is 0).
    let code: Int32
    /// `errno` as the call left it; it says why only for `MOSQ_ERR_ERRNO`.
    let savedErrno: Int32

    var succeeded: Bool { code == MOSQ_ERR_SUCCESS.rawValue }

    func `is`(_ error: mosq_err_t) -> Bool { code == error.rawValue }

    /// The error of this (failed) call; `call` names the C function and what it was doing.
    func error(call: String) -> MQTTError { .library(code: code, errno: savedErrno, call: call) }
}

/// Runs one libmosquitto call through the funnel: its return code and the `errno` it left, read at once.
@inline(__always)
func mosquittoStatus(_ body: () -> Int32) -> MosquittoStatus {
    let (code, savedErrno) = withSavedErrno(body)
    return MosquittoStatus(code: code, savedErrno: savedErrno)
}

/// The one place where libmosquitto return codes become `MQTTError`s: runs `body`, reads `errno` at once, throws on failure.
///
/// `call` names the C function (and, if helpful, what it was doing) so the error says *what* failed;
/// `mosquitto_strerror` (or `strerror` for `MOSQ_ERR_ERRNO`) says *why*.
@inline(__always)
func mosquittoCall(_ call: @autoclosure () -> String, _ body: () -> Int32) throws(MQTTError) {
    let status = mosquittoStatus(body)
    guard status.succeeded else { throw status.error(call: call()) }
}

extension MQTTError {
    /// Builds the `.library` error for a libmosquitto return code; `errno` matters only for `MOSQ_ERR_ERRNO`.
    static func library(code: Int32, errno savedErrno: Int32, call: String) -> MQTTError {
        if code == MOSQ_ERR_ERRNO.rawValue {
            return .library(call: call, code: code, systemError: savedErrno, reason: systemErrorText(savedErrno))
        }
        return .library(call: call, code: code, systemError: nil, reason: libraryErrorText(code))
    }
}

/// `mosquitto_strerror` in plain words (lower-case first letter, no trailing full stop).
func libraryErrorText(_ code: Int32) -> String {
    var text = String(cString: mosquitto_strerror(code))
    while text.hasSuffix(".") { text.removeLast() }
    guard let first = text.first else { return "unknown error \(code)" }
    return first.lowercased() + text.dropFirst()
}

/// `strerror` for an `errno` value, lower-cased first letter.
func systemErrorText(_ code: Int32) -> String {
    guard let cString = strerror(code) else { return "system error \(code)" }
    let text = String(cString: cString)
    guard let first = text.first else { return "system error \(code)" }
    return first.lowercased() + text.dropFirst()
}
