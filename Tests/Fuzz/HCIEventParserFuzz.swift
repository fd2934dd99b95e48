// libFuzzer entry point for the HCI event path: everything the radio's bytes go through before they become beacons.
//
// Not a SwiftPM target: `deploy/fuzz-hci.sh` compiles this file together with BeaconMeshCore's radio path into one
// module (so there is no `import BeaconMeshCore`) with `swiftc -parse-as-library -sanitize=fuzzer,address`.
//
// Each input is treated as every shape the radio path accepts — an H4 packet, an event without its indicator, a
// command answer, and a byte stream cut into packets — and the parsers must neither trap nor read out of bounds
// (AddressSanitizer watches), and must keep their own promises (checked below; a broken promise is a crash).

/// Runs one fuzz input through the parsers; always returns 0 (libFuzzer's "keep going").
@_cdecl("LLVMFuzzerTestOneInput")
public func hciEventParserFuzzTestOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let start else { return 0 }
    let input = UnsafeRawBufferPointer(start: start, count: count)
    checkEvent(h4Packet: input)
    checkEvent(withoutIndicator: input)
    _ = HCICommandResponse(h4Packet: input)

    // The same bytes as a stream, fed in two pieces: every packet handed out must be whole and parse like one.
    var framer = H4StreamFramer()
    let cut = count / 2
    var handedOut = 0
    for piece in [UnsafeRawBufferPointer(rebasing: input[..<cut]), UnsafeRawBufferPointer(rebasing: input[cut...])] {
        framer.append(piece) { packet in
            handedOut += packet.count
            checkEvent(h4Packet: packet)
            if let response = HCICommandResponse(h4Packet: packet) {
                _ = LESupportedFeatures(response)
            }
        }
    }
    precondition(handedOut + framer.skippedBytes + framer.bufferedByteCount == count, "the framer lost bytes")
    return 0
}

/// Parses `packet` as an H4 event with the zero-copy and the copying API and checks that they agree.
private func checkEvent(h4Packet packet: UnsafeRawBufferPointer) {
    var seen: [AdvertisingReport] = []
    let summary = HCIEventParser.forEachReport(inH4Packet: packet) { header, data in
        precondition(data.count <= packet.count, "report data larger than the packet")
        if let base = data.baseAddress, let packetBase = packet.baseAddress {
            precondition(base >= packetBase && base + data.count <= packetBase + packet.count, "report data outside the packet")
        }
        seen.append(AdvertisingReport(header: header, data: Array(data)))
        BeaconFrameDecoder.forEachFrame(inAdvertisingData: data) { frame in _ = frame }
    }
    precondition(summary.deliveredReports == seen.count, "summary disagrees with the reports delivered")
    precondition(summary.droppedReports >= 0, "negative dropped count")
    precondition(HCIEventParser.reports(inH4Packet: Array(packet)) == seen, "copying and zero-copy APIs disagree")
    for report in seen { _ = BeaconFrameDecoder.frames(inAdvertisingData: report.data) }
}

/// Parses `event` as an HCI event without the H4 indicator.
private func checkEvent(withoutIndicator event: UnsafeRawBufferPointer) {
    var delivered = 0
    let summary = HCIEventParser.forEachReport(inEvent: event) { _, data in
        delivered += 1
        precondition(data.count <= 255, "a report longer than any event")
    }
    precondition(summary.deliveredReports == delivered, "summary disagrees with the reports delivered")
}
