import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `beacon-scanner` process run under GNU time, for its peak RSS (a child's own `ru_maxrss` would include whatever
/// beacon-bench held at the spawn), and reaped with `wait4`, for the CPU of time and the scanner to the microsecond
/// (time's own is a millisecond or so, the same in every run).
struct TimedScanner {
    /// One finished run: CPU seconds (user + sys), peak RSS in bytes, exit status (128 + N if killed by signal N).
    struct Run {
        var cpuSeconds: Double
        var peakBytes: Int
        var status: Int32
    }

    let pid: pid_t
    private let peakFile: String

    /// The beacon-scanner a benchmark runs: `given` (its `--scanner`), else the one built next to beacon-bench.
    static func executable(_ given: String?) throws -> String {
        let path = given ?? BenchProcess.besideBench("beacon-scanner")
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw BenchError("no beacon-scanner at \(path) (swift build -c release --product beacon-scanner, or --scanner PATH)")
        }
        return path
    }

    /// Starts `path` with `arguments` under `/usr/bin/time -f %M -o peakFile`, with `environment` added to beacon-bench's.
    static func start(_ path: String, arguments: [String], peakFile: String, environment: [String] = []) throws -> TimedScanner {
        let timePath = "/usr/bin/time"
        guard FileManager.default.isExecutableFile(atPath: timePath) else { throw BenchError("GNU time is not installed at \(timePath)") }
        let argv = ([timePath, "-f", "%M", "-o", peakFile, path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var inherited: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            inherited.append(String(cString: pointer))
            entry += 1
        }
        let envp = (inherited + environment).map { strdup($0) } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var pid: pid_t = 0
        BenchChildren.prepare()
        let spawned = posix_spawn(&pid, timePath, nil, nil, argv, envp)
        guard spawned == 0 else { throw BenchError("cannot start \(timePath): \(String(cString: strerror(spawned)))") }
        BenchChildren.add(pid)
        return TimedScanner(pid: pid, peakFile: peakFile)
    }

    /// Sends `signal` to the scanner, GNU time's child (time passes no signal on; it reports once its child ends).
    func send(_ signal: Int32) {
        let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        for child in children.split(separator: " ").compactMap({ pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
            kill(child, signal)
        }
    }

    /// Waits for the run to end and reads its figures.
    func wait() throws -> Run {
        defer { BenchChildren.remove(pid) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw BenchError("wait4 failed: \(String(cString: strerror(errno)))") }
        }
        let cpu =
            Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        let exited = status & 0x7F == 0
        // time writes "Command exited with non-zero status N" (or "terminated by signal N") before the figure.
        let report = (try? String(contentsOfFile: peakFile, encoding: .utf8)) ?? ""
        let kilobytes = report.split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        return Run(cpuSeconds: cpu, peakBytes: kilobytes * 1024, status: exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F))
    }
}
