import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal HTTP/1.1 client for loopback servers, each request on a thread of its own (the blocking socket calls
/// stay off the concurrency pool). For chromedriver, whose replies (`Content-Length:914`, no space after the colon)
/// Foundation's URLSession on Linux refuses with "Failed writing header".
public enum LoopbackHTTP {
    /// Sends one request to 127.0.0.1:`port` with `Connection: close` and returns the status and the body.
    public static func request(_ method: String, port: Int, path: String, body: Data? = nil, timeout: Duration = .seconds(60)) async throws
        -> (status: Int, body: Data)
    {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do {
                    continuation.resume(returning: try send(method, port: port, path: path, body: body, timeout: timeout))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.start()
        }
    }

    private static func send(_ method: String, port: Int, path: String, body: Data?, timeout: Duration) throws -> (status: Int, body: Data)
    {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket() failed: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var time = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TestSupportError("connect to 127.0.0.1:\(port) failed: \(String(cString: strerror(errno)))") }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let body { head += "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(body.count)\r\n" }
        head += "\r\n"
        var request = Data(head.utf8)
        if let body { request.append(body) }
        try request.withUnsafeBytes { buffer in
            var sent = 0
            while sent < buffer.count {
                let count = write(fd, buffer.baseAddress! + sent, buffer.count - sent)
                guard count > 0 else { throw TestSupportError("write to 127.0.0.1:\(port) failed: \(String(cString: strerror(errno)))") }
                sent += count
            }
        }
        // Read the head, then as many body bytes as Content-Length says (chromedriver keeps the connection open),
        // or to the end of the stream when it gives none.
        var reply = Data()
        var chunk = [UInt8](repeating: 0, count: 65536)
        var expected: Int?
        var headEnd: Range<Data.Index>?
        while true {
            if headEnd == nil, let split = reply.range(of: Data("\r\n\r\n".utf8)) {
                headEnd = split
                let head = String(decoding: reply[..<split.lowerBound], as: UTF8.self)
                for line in head.split(separator: "\r\n") {
                    let parts = line.split(separator: ":", maxSplits: 1)
                    if parts.count == 2, parts[0].lowercased() == "content-length" {
                        expected = Int(parts[1].trimmingCharacters(in: .whitespaces))
                    }
                }
            }
            if let headEnd, let expected, reply.count - headEnd.upperBound >= expected { break }
            let count = read(fd, &chunk, chunk.count)
            if count < 0 { throw TestSupportError("read from 127.0.0.1:\(port) failed: \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            reply.append(contentsOf: chunk[0..<count])
        }
        guard let split = headEnd ?? reply.range(of: Data("\r\n\r\n".utf8)),
            let statusLine = String(data: reply[..<split.lowerBound], encoding: .utf8)?.split(separator: "\r\n").first,
            let status = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { throw TestSupportError("not an HTTP reply from 127.0.0.1:\(port)\(path)") }
        return (status, Data(reply[split.upperBound...]))
    }
}
