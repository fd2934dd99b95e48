import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The preloaded half of the fake adapter: `FakeHCIAdapter.c`, next to this file, compiled by clang (the Swift
/// toolchain's, or the system's cc) into `folder` as libFakeHCIAdapter.so. Not a SwiftPM product: SwiftPM links every
/// library it makes with the Swift runtime, which the preloaded scanner then maps, 2 MiB of its measured memory.
enum FakeAdapterLibrary {
    static let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("FakeHCIAdapter.c").path

    static func compile(into folder: String) throws -> String {
        guard FileManager.default.fileExists(atPath: source) else {
            throw BenchError("no \(source): run the beacon-bench built in its clone")
        }
        let library = folder + "/libFakeHCIAdapter.so"
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: try (try? BenchProcess.which("clang")) ?? BenchProcess.which("cc"))
        compiler.arguments = ["-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o", library, source, "-ldl"]
        try compiler.run()
        compiler.waitUntilExit()
        guard compiler.terminationStatus == 0 else {
            throw BenchError("\(compiler.executableURL?.path ?? "cc") could not compile \(source)")
        }
        return library
    }
}

/// The fake controller's end of the adapter: a Unix SOCK_SEQPACKET socket at `path`, as libFakeHCIAdapter connects.
struct FakeAdapterListener {
    private let descriptor: Int32

    init(path: String) throws {
        unlink(path)
        descriptor = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError("socket(AF_UNIX) failed: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw BenchError("socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(descriptor, 1) == 0 else {
            throw BenchError("cannot listen on \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The scanner's connection, once it opens hci0; throws after `seconds` without one. The listener is closed.
    func accept(within seconds: Int32) throws -> Int32 {
        defer { close(descriptor) }
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, seconds * 1000) == 1 else { throw BenchError("the scanner did not open hci0 within \(seconds) s") }
        let connection = Glibc.accept(descriptor, nil, nil)
        guard connection >= 0 else { throw BenchError("accept failed: \(String(cString: strerror(errno)))") }
        return connection
    }
}
