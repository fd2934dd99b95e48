#if canImport(Glibc)
    import Glibc
#endif

/// Small measuring helpers for the benchmarks.
enum Measure {
    /// Monotonic seconds.
    static func seconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// CPU seconds this thread has used (user + system).
    static func threadCPUSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Peak resident set size of this process so far (VmHWM), in bytes.
    static func peakResidentBytes() -> Int {
        statusField("VmHWM:")
    }

    /// Memory this process owns privately (RssAnon: heap and stacks, not the shared libraries), in bytes.
    static func privateResidentBytes() -> Int {
        statusField("RssAnon:")
    }

    /// Current resident set size (VmRSS), in bytes.
    static func residentBytes() -> Int {
        statusField("VmRSS:")
    }

    private static func statusField(_ name: String) -> Int {
        let descriptor = open("/proc/self/status", O_RDONLY)
        guard descriptor >= 0 else { return 0 }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix(name) {
            let digits = line.dropFirst(name.count).filter(\.isNumber)
            return (Int(digits) ?? 0) * 1024
        }
        return 0
    }

    /// `1234567.8` as `1,234,568`.
    static func grouped(_ value: Double) -> String {
        let whole = Int(value.rounded())
        var text = String(abs(whole))
        var index = text.count - 3
        while index > 0 {
            text.insert(",", at: text.index(text.startIndex, offsetBy: index))
            index -= 3
        }
        return whole < 0 ? "-" + text : text
    }

    static func megabytes(_ bytes: Int) -> String {
        let tenths = (Double(bytes) / 1_048_576 * 10).rounded() / 10
        return "\(tenths) MiB"
    }
}
