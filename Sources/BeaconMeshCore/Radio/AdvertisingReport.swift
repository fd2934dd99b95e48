/// One advertisement as the controller reported it: who sent it, how loud, and its AD data.
///
/// Comes from an LE Advertising Report (LE Meta event 0x3E, subevent 0x02, `kind == .legacy`) or an
/// LE Extended Advertising Report (subevent 0x0D, `kind == .extended`). `HCIEventParser` produces these.
public struct AdvertisingReport: Hashable, Sendable {
    /// Which HCI event the report came from.
    public enum Kind: Hashable, Sendable {
        /// LE Advertising Report (subevent 0x02).
        case legacy
        /// LE Extended Advertising Report (subevent 0x0D).
        case extended
    }

    /// Everything about a report except its AD data: small, trivially copied, handed out on the hot path.
    public struct Header: Hashable, Sendable {
        public var kind: Kind
        /// The report's event type: one byte for legacy reports (0 ADV_IND … 4 SCAN_RSP), the 16-bit event-type
        /// bit field for extended reports (0x10 = legacy PDU).
        public var eventType: UInt16
        /// HCI address type (0 public, 1 random, …).
        public var addressType: UInt8
        public var address: BluetoothAddress
        /// Received signal strength in dBm (127 means the controller did not measure it).
        public var rssi: Int8
        /// Transmit power the advertiser announced in the extended report, in dBm; `nil` for legacy reports and
        /// when the controller says "not available" (127).
        public var txPower: Int8?

        public init(
            kind: Kind, eventType: UInt16, addressType: UInt8, address: BluetoothAddress, rssi: Int8, txPower: Int8?
        ) {
            self.kind = kind
            self.eventType = eventType
            self.addressType = addressType
            self.address = address
            self.rssi = rssi
            self.txPower = txPower
        }
    }

    public var kind: Kind
    /// See `Header.eventType`.
    public var eventType: UInt16
    public var addressType: UInt8
    public var address: BluetoothAddress
    public var rssi: Int8
    /// See `Header.txPower`.
    public var txPower: Int8?
    /// The advertising data: a run of AD structures (length, type, payload).
    public var data: [UInt8]

    public init(header: Header, data: [UInt8]) {
        self.kind = header.kind
        self.eventType = header.eventType
        self.addressType = header.addressType
        self.address = header.address
        self.rssi = header.rssi
        self.txPower = header.txPower
        self.data = data
    }

    /// The report without its data.
    public var header: Header {
        Header(kind: kind, eventType: eventType, addressType: addressType, address: address, rssi: rssi, txPower: txPower)
    }
}
