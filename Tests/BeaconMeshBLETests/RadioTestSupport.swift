import BeaconMeshBLE
import BeaconMeshCaptures
import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import Synchronization
import Testing

/// Both ends of a `socketpair(AF_UNIX, …)`: `near` for the code under test, `far` for the test's peer.
struct SocketPair {
    var near: Int32
    var far: Int32

    init(type: Int32) throws {
        var descriptors: [Int32] = [-1, -1]
        // Close-on-exec: programs that other tests start meanwhile must not inherit an end, or closing ours would
        // never reach the peer as end-of-file.
        guard socketpair(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0, &descriptors) == 0 else {
            throw POSIXFailure(call: "socketpair")
        }
        near = descriptors[0]
        far = descriptors[1]
    }
}

struct POSIXFailure: Error, CustomStringConvertible {
    var call: String
    var code = errno
    var description: String { "\(call): \(String(cString: strerror(code)))" }
}

/// Writes all of `bytes` to `descriptor` (retrying short writes).
func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) throws {
    var written = 0
    while written < bytes.count {
        let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
        if count < 0 {
            if errno == EINTR { continue }
            throw POSIXFailure(call: "write")
        }
        written += count
    }
}

/// Every HCI event in the shared captures, capture by capture, in H4 framing, plus events that carry several reports
/// each, built by putting consecutive single-report events of one capture back to back in one event (the captures
/// hold none, and controllers send them under load).
enum CapturedEvents {
    /// One list of events per capture, in capture order.
    static func perCapture() throws -> [[[UInt8]]] {
        try SharedTestData.entries(of: "captures").map { folder in
            let records = try BTSnoopReader.readAll(path: folder.appendingPathComponent("btsnoop_hci.log").path)
            return records.filter { $0.isReceived && $0.packet.first == 0x04 }.map(\.packet)
        }
    }

    /// Advertising events merged into events of up to `reportsPerEvent` reports each (same subevent, ≤ 255 bytes).
    static func multiReportEvents(from events: [[UInt8]], reportsPerEvent: Int) -> [[UInt8]] {
        var merged: [[UInt8]] = []
        var subevent: UInt8 = 0
        var reports: [UInt8] = []
        var count = 0
        func flush() {
            if count > 1 { merged.append([0x04, 0x3E, UInt8(2 + reports.count), subevent, UInt8(count)] + reports) }
            reports = []
            count = 0
        }
        for event in events
        where event.count > 5 && event[1] == 0x3E && (event[3] == 0x02 || event[3] == 0x0D)
            && event[4] == 1 && Int(event[2]) + 3 == event.count
        {
            let report = Array(event[5...])
            if event[3] != subevent || count == reportsPerEvent || 2 + reports.count + report.count > 255 {
                flush()
                subevent = event[3]
            }
            reports += report
            count += 1
        }
        flush()
        return merged
    }

    /// The events of all captures interleaved (one from each in turn), followed by the multi-report events of each.
    static func interleavedStream() throws -> [[UInt8]] {
        let captures = try perCapture()
        var stream: [[UInt8]] = []
        var multi: [[[UInt8]]] = captures.map { multiReportEvents(from: $0, reportsPerEvent: 3) }
        for index in 0..<(captures.map(\.count).max() ?? 0) {
            for capture in captures.indices {
                if index < captures[capture].count { stream.append(captures[capture][index]) }
                if index % 5 == 0, !multi[capture].isEmpty { stream.append(multi[capture].removeFirst()) }
            }
        }
        return stream + multi.flatMap { $0 }
    }

    /// Every advertising report the parser finds in `events`, copied.
    static func reports(in events: [[UInt8]]) -> [AdvertisingReport] {
        events.flatMap { HCIEventParser.reports(inH4Packet: $0) }
    }

    /// Every beacon the parser and decoder find in `events`, as comparable lines (report header and frame).
    static func beacons(in events: [[UInt8]]) -> [String] {
        var lines: [String] = []
        for event in events {
            _ = event.withUnsafeBytes { packet in
                HCIEventParser.forEachReport(inH4Packet: packet) { header, data in
                    BeaconFrameDecoder.forEachFrame(inAdvertisingData: data) { lines.append("\(header) \($0)") }
                }
            }
        }
        return lines
    }
}

/// Collects what an `HCIEventReader` hands out and how it ended.
final class ReaderLog: Sendable {
    private let state = Mutex<(packets: [[UInt8]], ending: HCIEventReader.Ending?)>(([], nil))
    let endings: AsyncStream<HCIEventReader.Ending>
    private let endingSink: AsyncStream<HCIEventReader.Ending>.Continuation

    init() {
        (endings, endingSink) = AsyncStream.makeStream(of: HCIEventReader.Ending.self)
    }

    func add(_ packet: UnsafeRawBufferPointer) {
        let copy = Array(packet)
        state.withLock { $0.packets.append(copy) }
    }

    func end(_ ending: HCIEventReader.Ending) {
        state.withLock { $0.ending = ending }
        endingSink.yield(ending)
        endingSink.finish()
    }

    var packets: [[UInt8]] { state.withLock { $0.packets } }

    /// Waits for the reader to end and returns how.
    func ending() async -> HCIEventReader.Ending? {
        for await ending in endings { return ending }
        return state.withLock { $0.ending }
    }
}

/// A deterministic pseudo-random source for chunk sizes (SplitMix64).
struct ChunkSizes {
    var state: UInt64
    mutating func next(upTo limit: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return 1 + Int((value ^ (value >> 31)) % UInt64(limit))
    }
}
