import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

/// A load generator for the latency benchmark: one plain MQTT 3.1.1 connection that writes ready-made QoS 1 PUBLISH
/// packets, so that publishing costs the benchmark a `write` per batch and nothing else. In a store the publishers
/// are scanners on other machines; here they must not take the CPU the coordinator is measured on.
///
/// PUBACKs are read and discarded by `drainAcknowledgements` between writes; nothing is retried.
final class StreamPublisher {
    private let socket: Int32
    private var packetID: UInt16 = 0

    /// Connects to the broker on `127.0.0.1:port` as `clientID` (clean session) and waits for its CONNACK.
    init(port: Int, clientID: String) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ValidationError("cannot make a socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            throw ValidationError("cannot reach the broker on port \(port)")
        }
        var noDelay = Int32(1)
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        var variable: [UInt8] = [0, 4] + Array("MQTT".utf8) + [4, 0x02, 0, 60]
        variable += StreamPublisher.string(clientID)
        try write([0x10] + StreamPublisher.remainingLength(variable.count) + variable)
        var connack = [UInt8](repeating: 0, count: 4)
        guard read(socket, &connack, 4) == 4, connack[0] == 0x20, connack[3] == 0 else {
            close(socket)
            throw ValidationError("the broker refused the benchmark's stream connection")
        }
        var nonBlocking = Int32(1)
        _ = ioctl(socket, UInt(FIONBIO), &nonBlocking)
    }

    deinit { close(socket) }

    /// A QoS 1 PUBLISH packet of `payload` on `topic`, without its packet id (filled in by `publish`).
    static func packet(topic: String, payload: [UInt8]) -> [UInt8] {
        let variable = string(topic) + [0, 0]
        return [0x32] + remainingLength(variable.count + payload.count) + variable + payload
    }

    /// Writes one packet made by `packet(topic:payload:)`, with the next packet id.
    func publish(_ packet: [UInt8]) throws {
        packetID = packetID == UInt16.max ? 1 : packetID + 1
        var packet = packet
        let idOffset = packet.count - 2 - payloadLength(packet)
        packet[idOffset] = UInt8(packetID >> 8)
        packet[idOffset + 1] = UInt8(packetID & 0xFF)
        try write(packet)
        drainAcknowledgements()
    }

    /// Reads and drops whatever PUBACKs have arrived.
    func drainAcknowledgements() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while read(socket, &buffer, buffer.count) > 0 {}
    }

    private func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(socket, $0.baseAddress, $0.count) }
            if written < 0 {
                guard errno == EAGAIN || errno == EINTR else { throw ValidationError("the stream connection broke") }
                drainAcknowledgements()
                continue
            }
            offset += written
        }
    }

    /// The payload length of a packet made by `packet(topic:payload:)`: what follows topic and packet id.
    private func payloadLength(_ packet: [UInt8]) -> Int {
        var index = 1
        var multiplier = 1
        var remaining = 0
        repeat {
            remaining += Int(packet[index] & 0x7F) * multiplier
            multiplier *= 128
            index += 1
        } while packet[index - 1] & 0x80 != 0
        let topicLength = Int(packet[index]) << 8 | Int(packet[index + 1])
        return remaining - 2 - topicLength - 2
    }

    private static func string(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        return [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
    }

    private static func remainingLength(_ length: Int) -> [UInt8] {
        var length = length
        var bytes: [UInt8] = []
        repeat {
            var byte = UInt8(length % 128)
            length /= 128
            if length > 0 { byte |= 0x80 }
            bytes.append(byte)
        } while length > 0
        return bytes
    }
}
