/// Splits an HCI LE advertising event into its reports, trusting no length field it has not checked.
///
/// Understands LE Meta events (0x3E) with subevent 0x02 (LE Advertising Report) and 0x0D (LE Extended Advertising
/// Report); every other event yields no report. Several reports in one event are read back to back, as BlueZ does.
///
/// Strictness, so that no input can make it read out of bounds or trap:
/// - an event whose parameter length is larger than the bytes present is dropped whole (the length lies);
/// - bytes after the declared parameter length are ignored;
/// - a report that runs past the end of the event is dropped, together with the reports after it (they cannot be
///   located any more).
///
/// Two entry points per input shape:
/// - `forEachReport(inH4Packet:_:)` / `forEachReport(inEvent:_:)`: no allocation; each report's data is a slice of
///   the input, valid only inside the closure;
/// - `reports(inH4Packet:)` / `reports(inEvent:)`: copies into `[AdvertisingReport]`, for tests and tools.
///
/// An *H4 packet* starts with the packet indicator 0x04 (as a BlueZ raw HCI socket and btsnoop datalink 1002 give it:
/// `04 3E len subevent …`); an *event* starts at the event code (`3E len subevent …`).
public enum HCIEventParser {
    /// The H4 packet indicator of an HCI event.
    public static let h4EventIndicator: UInt8 = 0x04
    /// The HCI event code of LE Meta events.
    public static let leMetaEventCode: UInt8 = 0x3E
    /// LE Meta subevent: LE Advertising Report.
    public static let advertisingReportSubevent: UInt8 = 0x02
    /// LE Meta subevent: LE Extended Advertising Report.
    public static let extendedAdvertisingReportSubevent: UInt8 = 0x0D

    /// How many reports one event delivered and how many it announced but could not deliver.
    public struct Summary: Hashable, Sendable {
        /// Reports handed to the caller.
        public var deliveredReports: Int
        /// Reports the event announced that were dropped because the event is malformed or truncated.
        /// An advertising event too short to hold its report count counts as one dropped report.
        public var droppedReports: Int

        public init(deliveredReports: Int = 0, droppedReports: Int = 0) {
            self.deliveredReports = deliveredReports
            self.droppedReports = droppedReports
        }
    }

    /// Byte sizes of a legacy report around its data: event type, address type, address, data length | RSSI.
    private static let legacyBytesBeforeData = 9
    /// Byte sizes of an extended report before its data (event type 2, address type, address 6, PHYs 2, SID,
    /// TX power, RSSI, periodic interval 2, direct address type, direct address 6, data length).
    private static let extendedBytesBeforeData = 24
    /// Extended reports use 127 for "TX power not available".
    private static let txPowerNotAvailable: Int8 = 127

    /// Calls `body` for each advertising report of an H4 packet (`04 3E …`); any other packet yields nothing.
    @discardableResult
    public static func forEachReport(
        inH4Packet packet: UnsafeRawBufferPointer,
        _ body: (AdvertisingReport.Header, UnsafeRawBufferPointer) -> Void
    ) -> Summary {
        guard packet.count > 1, packet[0] == h4EventIndicator else { return Summary() }
        return forEachReport(inEvent: UnsafeRawBufferPointer(rebasing: packet[1...]), body)
    }

    /// Calls `body` for each advertising report of an HCI event without the H4 indicator (`3E len subevent …`).
    @discardableResult
    public static func forEachReport(
        inEvent event: UnsafeRawBufferPointer,
        _ body: (AdvertisingReport.Header, UnsafeRawBufferPointer) -> Void
    ) -> Summary {
        guard event.count >= 3, event[0] == leMetaEventCode else { return Summary() }
        let subevent = event[2]
        guard subevent == advertisingReportSubevent || subevent == extendedAdvertisingReportSubevent else {
            return Summary()
        }
        let declaredLength = Int(event[1])
        guard declaredLength >= 2, 2 + declaredLength <= event.count else {
            // The length lies (more than is there) or leaves no room for the report count.
            let announced = event.count >= 4 && declaredLength >= 2 ? Int(event[3]) : 1
            return Summary(droppedReports: announced)
        }
        // Parameters: subevent, report count, reports. Bytes past the declared length are ignored.
        let parameters = UnsafeRawBufferPointer(rebasing: event[2..<(2 + declaredLength)])
        let announced = Int(parameters[1])
        let delivered =
            subevent == advertisingReportSubevent
            ? forEachLegacyReport(in: parameters, count: announced, body)
            : forEachExtendedReport(in: parameters, count: announced, body)
        return Summary(deliveredReports: delivered, droppedReports: announced - delivered)
    }

    /// All advertising reports of an H4 packet (`04 3E …`), copied.
    public static func reports(inH4Packet packet: [UInt8]) -> [AdvertisingReport] {
        guard packet.first == h4EventIndicator else { return [] }
        return reports(inEvent: Array(packet.dropFirst()))
    }

    /// All advertising reports of an HCI event without the H4 indicator (`3E …`), copied.
    public static func reports(inEvent event: [UInt8]) -> [AdvertisingReport] {
        event.withUnsafeBytes { bytes in
            var reports: [AdvertisingReport] = []
            forEachReport(inEvent: bytes) { reports.append(AdvertisingReport(header: $0, data: Array($1))) }
            return reports
        }
    }

    /// Legacy reports: event type, address type, address (6), data length, data, RSSI. Returns how many were read.
    private static func forEachLegacyReport(
        in parameters: UnsafeRawBufferPointer, count: Int,
        _ body: (AdvertisingReport.Header, UnsafeRawBufferPointer) -> Void
    ) -> Int {
        var offset = 2
        var delivered = 0
        while delivered < count {
            guard offset + legacyBytesBeforeData <= parameters.count else { break }
            let dataStart = offset + legacyBytesBeforeData
            let rssiOffset = dataStart + Int(parameters[offset + 8])
            guard rssiOffset < parameters.count else { break }
            let header = AdvertisingReport.Header(
                kind: .legacy,
                eventType: UInt16(parameters[offset]),
                addressType: parameters[offset + 1],
                address: BluetoothAddress(wireBytes: parameters, offset: offset + 2),
                rssi: Int8(bitPattern: parameters[rssiOffset]),
                txPower: nil)
            body(header, UnsafeRawBufferPointer(rebasing: parameters[dataStart..<rssiOffset]))
            delivered += 1
            offset = rssiOffset + 1
        }
        return delivered
    }

    /// Extended reports: 24 fixed bytes (see `extendedBytesBeforeData`), then the data. Returns how many were read.
    private static func forEachExtendedReport(
        in parameters: UnsafeRawBufferPointer, count: Int,
        _ body: (AdvertisingReport.Header, UnsafeRawBufferPointer) -> Void
    ) -> Int {
        var offset = 2
        var delivered = 0
        while delivered < count {
            guard offset + extendedBytesBeforeData <= parameters.count else { break }
            let dataStart = offset + extendedBytesBeforeData
            let dataEnd = dataStart + Int(parameters[offset + 23])
            guard dataEnd <= parameters.count else { break }
            let txPower = Int8(bitPattern: parameters[offset + 12])
            let header = AdvertisingReport.Header(
                kind: .extended,
                eventType: UInt16(parameters[offset]) | UInt16(parameters[offset + 1]) << 8,
                addressType: parameters[offset + 2],
                address: BluetoothAddress(wireBytes: parameters, offset: offset + 3),
                rssi: Int8(bitPattern: parameters[offset + 13]),
                txPower: txPower == txPowerNotAvailable ? nil : txPower)
            body(header, UnsafeRawBufferPointer(rebasing: parameters[dataStart..<dataEnd]))
            delivered += 1
            offset = dataEnd
        }
        return delivered
    }
}
