import BeaconMeshCaptures
import BeaconMeshCore
import Foundation

/// A recording turned into what BeaconMesh nodes would have heard: per node, the times and RSSI of the adverts of
/// the person's beacon, and the ground truth. `write(to:)` makes the folder `LabelledRecording` reads.
public struct ConvertedRecording: Sendable {
    /// One advert a node heard.
    public struct Advert: Hashable, Sendable {
        /// Epoch microseconds.
        public var time: Int64
        public var rssi: Int8

        public init(time: Int64, rssi: Int8) {
            self.time = time
            self.rssi = rssi
        }
    }

    /// A node and what it heard.
    public struct Node: Sendable {
        public var id: String
        public var department: UInt16
        public var adverts: [Advert]

        public init(id: String, department: UInt16, adverts: [Advert]) {
            self.id = id
            self.department = department
            self.adverts = adverts
        }
    }

    public var name: String
    public var nodes: [Node]
    public var truth: GroundTruth
    /// The person's beacon, as the nodes' captures carry it.
    public var beacon: IBeaconAdvertisingData
    /// The advertiser address in the captures.
    public var address: BluetoothAddress

    public init(name: String, nodes: [Node], truth: GroundTruth, beacon: IBeaconAdvertisingData, address: BluetoothAddress) {
        self.name = name
        self.nodes = nodes
        self.truth = truth
        self.beacon = beacon
        self.address = address
    }

    /// The beacon every converted recording gives the person: the contract's example UUID, major 100, minor 1.
    public static let personBeacon = IBeaconAdvertisingData(
        uuid: BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!, major: 100, minor: 1, measuredPower: -59)

    /// The beacon key of `beacon`.
    public var beaconKey: BeaconKey { .iBeacon(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor) }

    /// Writes `folder/<name>/` with one btsnoop capture per node (`<node>.btsnoop`), `layout.csv` and `truth.csv`;
    /// returns the folder written.
    ///
    /// Each capture starts with one advert of a device that is no beacon (flags only) at the recording's first
    /// moment: a scanner replaying its capture at recorded pace takes its first packet as its start, so every node's
    /// replay then keeps the recording's common clock, however late its own first beacon advert comes.
    @discardableResult
    public func write(to folder: String) throws(RecordingError) -> String {
        let target = (folder as NSString).appendingPathComponent(name)
        do {
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        } catch {
            throw RecordingError(file: target, line: nil, message: "cannot make the folder")
        }
        let start = nodes.compactMap { $0.adverts.first?.time }.min() ?? 0
        let marker = LEAdvertisingReportEvent.make(
            address: BluetoothAddress(value: 0xC0_00_00_00_00_01), rssi: -127, data: [0x02, 0x01, 0x06])
        let data = beacon.bytes
        var layoutNodes: [LabelledRecording.Node] = []
        for node in nodes {
            let path = (target as NSString).appendingPathComponent("\(node.id).btsnoop")
            do {
                let writer = try BTSnoopWriter(path: path)
                try writer.write(Self.event(marker, at: start))
                for advert in node.adverts {
                    try writer.write(
                        Self.event(LEAdvertisingReportEvent.make(address: address, rssi: advert.rssi, data: data), at: advert.time))
                }
                try writer.close()
            } catch {
                throw RecordingError(file: path, line: nil, message: "\(error)")
            }
            layoutNodes.append(LabelledRecording.Node(id: node.id, department: node.department, capture: path))
        }
        try LabelledRecording(name: name, nodes: layoutNodes, truth: truth).writeTables(to: target)
        return target
    }

    /// An HCI event the controller sent at `time` (epoch microseconds), as a capture record.
    private static func event(_ packet: [UInt8], at time: Int64) -> BTSnoopRecord {
        BTSnoopRecord(
            frameNumber: 0, timestampMicroseconds: time, originalLength: packet.count,
            flags: BTSnoopFormat.receivedFlag | BTSnoopFormat.commandOrEventFlag, packet: packet)
    }
}
