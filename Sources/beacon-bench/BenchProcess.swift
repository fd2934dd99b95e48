import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A program the benchmark starts (broker, coordinator, mosquitto_sub) and stops; registered with `BenchChildren`
/// meanwhile, so that it is stopped too when the benchmark is killed.
final class BenchProcess: Sendable {
    private let process: Process

    init(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        BenchChildren.prepare()
        try process.run()
        self.process = process
        BenchChildren.add(process.processIdentifier)
    }

    var isRunning: Bool { process.isRunning }

    var processIdentifier: Int32 { process.processIdentifier }

    /// CPU seconds the process has used so far, all threads, user + system (`/proc/PID/stat`, 10 ms steps); `nil`
    /// once it is gone.
    var cpuSeconds: Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let end = text.lastIndex(of: ")")
        else { return nil }
        // After the command name: state is field 3, utime and stime are fields 14 and 15.
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// CPU seconds used so far by the process's threads named `name` (`/proc/PID/task/TID/comm`), user + system;
    /// `nil` once it is gone.
    func threadCPUSeconds(named name: String) -> Double? {
        let tasks = "/proc/\(process.processIdentifier)/task"
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: tasks) else { return nil }
        var ticks = 0.0
        for thread in threads {
            guard let comm = try? String(contentsOfFile: "\(tasks)/\(thread)/comm", encoding: .utf8),
                comm.trimmingCharacters(in: .newlines) == name,
                let text = try? String(contentsOfFile: "\(tasks)/\(thread)/stat", encoding: .utf8),
                let end = text.lastIndex(of: ")")
            else { continue }
            let fields = text[text.index(after: end)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
            ticks += user + system
        }
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Resident memory now and at its peak (`VmRSS`, `VmHWM` of `/proc/PID/status`), in bytes; zeros once it is gone.
    var memory: (resident: Int, peak: Int) {
        guard let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8) else { return (0, 0) }
        func field(_ name: String) -> Int {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
            return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
        }
        return (field("VmRSS"), field("VmHWM"))
    }

    /// SIGTERM, then SIGKILL if it is still there after two seconds.
    func stop() {
        defer { BenchChildren.remove(process.processIdentifier) }
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// The program `name` built next to beacon-bench (`swift build -c release` builds them all in one folder).
    static func besideBench(_ name: String) -> String {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent(name).path
    }

    /// The full path of `name` on the PATH (or in /usr/sbin for mosquitto).
    static func which(_ name: String) throws -> String {
        let folders =
            (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin"]
        for folder in folders where FileManager.default.isExecutableFile(atPath: folder + "/" + name) { return folder + "/" + name }
        throw BenchError("\(name) is not installed (deploy/install-deps.sh installs it)")
    }

    /// A TCP port on 127.0.0.1 that nothing listens on.
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw BenchError("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits until something accepts TCP connections on `port`.
    static func waitForPort(_ port: Int) async throws {
        for _ in 0..<100 {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(descriptor)
            if connected { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchError("the broker did not start on port \(port)")
    }
}

/// A benchmark that could not run, in one line.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
