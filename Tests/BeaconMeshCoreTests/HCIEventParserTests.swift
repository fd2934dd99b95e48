import BeaconMeshCore
import Testing

/// Builders for HCI events, so each test states only what it is about.
enum HCIEventBytes {
    /// One legacy report: event type, address type, address (given most significant byte first), data, RSSI.
    static func legacyReport(
        eventType: UInt8 = 0, addressType: UInt8 = 1, address: [UInt8] = [0xC4, 0x7C, 0x8D, 0x6A, 0x3E, 0x21],
        data: [UInt8], rssi: Int8 = -60
    ) -> [UInt8] {
        [eventType, addressType] + address.reversed() + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
    }

    /// One extended report (24 fixed bytes, then the data).
    static func extendedReport(
        eventType: UInt16 = 0x0013, addressType: UInt8 = 0, address: [UInt8] = [0xAC, 0x23, 0x3F, 0x5C, 0x22, 0x0E],
        txPower: Int8 = 127, rssi: Int8 = -77, data: [UInt8]
    ) -> [UInt8] {
        [UInt8(truncatingIfNeeded: eventType), UInt8(eventType >> 8), addressType] + address.reversed()
            + [0x01, 0x00, 0xFF, UInt8(bitPattern: txPower), UInt8(bitPattern: rssi), 0x00, 0x00, 0x00]
            + [0, 0, 0, 0, 0, 0] + [UInt8(data.count)] + data
    }

    /// An H4 LE Meta event `04 3E len subevent count reports…`; `count` defaults to the number of reports.
    static func h4Event(subevent: UInt8, reports: [[UInt8]], count: UInt8? = nil, declaredLength: UInt8? = nil) -> [UInt8] {
        let parameters = [subevent, count ?? UInt8(reports.count)] + reports.flatMap { $0 }
        return [0x04, 0x3E, declaredLength ?? UInt8(parameters.count)] + parameters
    }

    static let iBeaconData: [UInt8] = IBeaconAdvertisingData(
        uuid: BeaconUUID(high: 0x0CF0_52C2_97CA_407C, low: 0x84F8_B62A_AC4E_9020), major: 9, minor: 6,
        measuredPower: -59
    ).bytes
}

@Suite("HCI event parser")
struct HCIEventParserTests {
    @Test("a legacy report gives its event type, address, address type, RSSI and data")
    func legacyReportFields() {
        let event = HCIEventBytes.h4Event(
            subevent: 0x02,
            reports: [HCIEventBytes.legacyReport(eventType: 4, addressType: 1, data: [0x02, 0x01, 0x06], rssi: -94)])
        let reports = HCIEventParser.reports(inH4Packet: event)
        #expect(
            reports == [
                AdvertisingReport(
                    header: .init(
                        kind: .legacy, eventType: 4, addressType: 1, address: BluetoothAddress("C4:7C:8D:6A:3E:21")!,
                        rssi: -94, txPower: nil),
                    data: [0x02, 0x01, 0x06])
            ])
    }

    @Test("an event without the H4 indicator parses the same as with it")
    func eventWithoutIndicator() {
        let event = HCIEventBytes.h4Event(subevent: 0x02, reports: [HCIEventBytes.legacyReport(data: [1, 2, 3])])
        let withIndicator = HCIEventParser.reports(inH4Packet: event)
        #expect(withIndicator.count == 1)
        #expect(HCIEventParser.reports(inEvent: Array(event.dropFirst())) == withIndicator)
        // And the bare-event entry point does not accept the indicator, nor the H4 one a bare event.
        #expect(HCIEventParser.reports(inEvent: event).isEmpty)
        #expect(HCIEventParser.reports(inH4Packet: Array(event.dropFirst())).isEmpty)
    }

    @Test("several legacy reports in one event are read back to back, in order")
    func multiReportLegacyEvent() {
        let event = HCIEventBytes.h4Event(
            subevent: 0x02,
            reports: [
                HCIEventBytes.legacyReport(eventType: 0, address: [1, 1, 1, 1, 1, 1], data: HCIEventBytes.iBeaconData, rssi: -40),
                HCIEventBytes.legacyReport(eventType: 4, address: [2, 2, 2, 2, 2, 2], data: [], rssi: -50),
                HCIEventBytes.legacyReport(eventType: 3, address: [3, 3, 3, 3, 3, 3], data: [0x02, 0x01, 0x1A], rssi: -60),
            ])
        let reports = HCIEventParser.reports(inH4Packet: event)
        #expect(reports.map(\.address.description) == ["01:01:01:01:01:01", "02:02:02:02:02:02", "03:03:03:03:03:03"])
        #expect(reports.map(\.eventType) == [0, 4, 3])
        #expect(reports.map(\.rssi) == [-40, -50, -60])
        #expect(reports.map(\.data) == [HCIEventBytes.iBeaconData, [], [0x02, 0x01, 0x1A]])
    }

    @Test("extended reports give the 16-bit event type, TX power (127 → nil) and RSSI; several per event")
    func multiReportExtendedEvent() {
        let event = HCIEventBytes.h4Event(
            subevent: 0x0D,
            reports: [
                HCIEventBytes.extendedReport(eventType: 0x0013, txPower: 127, rssi: -77, data: HCIEventBytes.iBeaconData),
                HCIEventBytes.extendedReport(eventType: 0x0010, addressType: 1, txPower: -8, rssi: -101, data: [0x02, 0x01, 0x06]),
            ])
        let reports = HCIEventParser.reports(inH4Packet: event)
        #expect(reports.count == 2)
        #expect(reports.map(\.kind) == [.extended, .extended])
        #expect(reports.map(\.eventType) == [0x0013, 0x0010])
        #expect(reports.map(\.addressType) == [0, 1])
        #expect(reports.map(\.address.description) == ["AC:23:3F:5C:22:0E", "AC:23:3F:5C:22:0E"])
        #expect(reports.map(\.txPower) == [nil, -8])
        #expect(reports.map(\.rssi) == [-77, -101])
        #expect(reports.map(\.data) == [HCIEventBytes.iBeaconData, [0x02, 0x01, 0x06]])
    }

    @Test("interleaved legacy and extended events each keep their kind")
    func interleavedLegacyAndExtended() {
        let events = [
            HCIEventBytes.h4Event(subevent: 0x02, reports: [HCIEventBytes.legacyReport(data: [1])]),
            HCIEventBytes.h4Event(subevent: 0x0D, reports: [HCIEventBytes.extendedReport(data: [2])]),
            HCIEventBytes.h4Event(subevent: 0x02, reports: [HCIEventBytes.legacyReport(data: [3])]),
            HCIEventBytes.h4Event(
                subevent: 0x0D,
                reports: [
                    HCIEventBytes.extendedReport(data: [4]),
                    HCIEventBytes.extendedReport(data: [5]),
                ]),
        ]
        let reports = events.flatMap { HCIEventParser.reports(inH4Packet: $0) }
        #expect(reports.map(\.kind) == [.legacy, .extended, .legacy, .extended, .extended])
        #expect(reports.map(\.data) == [[1], [2], [3], [4], [5]])
    }

    @Test("an event whose length field claims more bytes than are there is dropped whole")
    func lengthFieldClaimsTooMuch() {
        var event = HCIEventBytes.h4Event(subevent: 0x02, reports: [HCIEventBytes.legacyReport(data: HCIEventBytes.iBeaconData)])
        event[2] += 1
        let summary = event.withUnsafeBytes { bytes in
            HCIEventParser.forEachReport(inH4Packet: bytes) { _, _ in Issue.record("nothing may be delivered") }
        }
        #expect(summary == HCIEventParser.Summary(deliveredReports: 0, droppedReports: 1))
    }

    @Test("bytes after the declared length are ignored; a report running past it is dropped")
    func lengthFieldClaimsTooLittle() {
        let complete = HCIEventBytes.h4Event(subevent: 0x02, reports: [HCIEventBytes.legacyReport(data: [9, 9])])
        let withTrailingGarbage = complete + [0xDE, 0xAD]
        #expect(HCIEventParser.reports(inH4Packet: withTrailingGarbage).map(\.data) == [[9, 9]])

        var cutByLength = complete
        cutByLength[2] -= 1  // the RSSI byte now lies past the declared end
        let summary = cutByLength.withUnsafeBytes { bytes in
            HCIEventParser.forEachReport(inH4Packet: bytes) { _, _ in Issue.record("nothing may be delivered") }
        }
        #expect(summary == HCIEventParser.Summary(deliveredReports: 0, droppedReports: 1))
    }

    @Test("a report count larger than the reports present delivers the complete ones and counts the rest as dropped")
    func reportCountTooLarge() {
        let event = HCIEventBytes.h4Event(
            subevent: 0x02, reports: [HCIEventBytes.legacyReport(data: [1]), HCIEventBytes.legacyReport(data: [2])],
            count: 5)
        let summary = event.withUnsafeBytes { bytes in HCIEventParser.forEachReport(inH4Packet: bytes) { _, _ in } }
        #expect(summary == HCIEventParser.Summary(deliveredReports: 2, droppedReports: 3))
    }

    @Test("an event truncated at any byte never yields a partial report", arguments: [UInt8(0x02), 0x0D])
    func truncationAtEveryLength(subevent: UInt8) {
        let reports =
            subevent == 0x02
            ? [HCIEventBytes.legacyReport(data: HCIEventBytes.iBeaconData), HCIEventBytes.legacyReport(data: [7, 7, 7])]
            : [HCIEventBytes.extendedReport(data: HCIEventBytes.iBeaconData), HCIEventBytes.extendedReport(data: [7, 7, 7])]
        let event = HCIEventBytes.h4Event(subevent: subevent, reports: reports)
        let firstReportEnd = 5 + reports[0].count
        for length in 0..<event.count {
            // Cut by the end of the buffer: the length field lies, nothing comes out.
            let cut = Array(event[..<length])
            #expect(HCIEventParser.reports(inH4Packet: cut).isEmpty, "cut to \(length) bytes")
            // Cut by an honest length field: only reports that fit completely come out.
            guard length >= 5 else { continue }
            var honest = cut
            honest[2] = UInt8(length - 3)
            let expected = length >= firstReportEnd ? [HCIEventBytes.iBeaconData] : []
            #expect(HCIEventParser.reports(inH4Packet: honest).map(\.data) == expected, "declared \(length - 3) bytes")
        }
    }

    @Test(
        "other packets and events yield nothing",
        arguments: [
            [UInt8](),
            [0x04],
            [0x04, 0x3E],
            [0x04, 0x3E, 0x00],
            [0x04, 0x3E, 0x01, 0x02],
            [0x02, 0x3E, 0x03, 0x02, 0x01, 0x00],  // an ACL packet
            [0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00],  // Command Complete
            [0x04, 0x3E, 0x0C, 0x0A, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],  // LE Connection Complete
        ])
    func nonAdvertisingInput(packet: [UInt8]) {
        #expect(HCIEventParser.reports(inH4Packet: packet).isEmpty)
    }

    @Test("the hot path hands out slices of the input, not copies")
    func hotPathSlicesInput() {
        let event = HCIEventBytes.h4Event(subevent: 0x02, reports: [HCIEventBytes.legacyReport(data: HCIEventBytes.iBeaconData)])
        event.withUnsafeBytes { bytes in
            var seen = 0
            HCIEventParser.forEachReport(inH4Packet: bytes) { header, data in
                seen += 1
                #expect(header.kind == .legacy)
                #expect(data.baseAddress == bytes.baseAddress.map { $0 + 14 })
                #expect(data.count == HCIEventBytes.iBeaconData.count)
            }
            #expect(seen == 1)
        }
    }

    @Test("random bytes never crash the parser, every report lies inside the input, and the summary counts what it delivered")
    func randomInputIsSafe() {
        var generator = SplitMix64(seed: 0xBEAC_0A5E)
        for round in 0..<20_000 {
            let length = Int(generator.next() % 80)
            var packet = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            // Make most inputs look like advertising events so the report loops get exercised.
            if length > 4 && round % 4 != 0 {
                packet[0] = 0x04
                packet[1] = 0x3E
                packet[3] = round % 2 == 0 ? 0x02 : 0x0D
                if round % 3 == 0 { packet[2] = UInt8(length - 3) }
            }
            packet.withUnsafeBytes { bytes in
                var delivered = 0
                let summary = HCIEventParser.forEachReport(inH4Packet: bytes) { _, data in
                    delivered += 1
                    if let start = data.baseAddress, let base = bytes.baseAddress {
                        #expect(start >= base && start + data.count <= base + bytes.count)
                    }
                    BeaconFrameDecoder.forEachFrame(inAdvertisingData: data) { _ in }
                }
                #expect(summary.deliveredReports == delivered)
                #expect(summary.droppedReports >= 0)
            }
        }
    }
}
