import BeaconMeshBLE
import BeaconMeshCaptures
import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import Synchronization
import Testing

/// `LEScanner` and `LEAdvertiser` driven against `FakeController`, a peer that speaks HCI bytes over a socketpair.
@Suite("LE scanner and advertiser against a fake controller", .timeLimit(.minutes(3)))
struct LEScannerTests {
    /// Which controller the fake plays, and what the scanner must send it.
    struct Generation: Sendable, CustomTestStringConvertible {
        var name: String
        var featuresAnswer: [UInt8]
        var commandSet: LEScanner.CommandSet
        var expectedCommands: [String]
        var testDescription: String { name }
    }

    static let generations = [
        Generation(
            name: "Bluetooth 4 controller: legacy commands", featuresAnswer: FakeController.bluetooth4Features,
            commandSet: .legacy,
            expectedCommands: ["01032000", "010b200700a000a0000000", "010c20020100", "010c20020000"]),
        Generation(
            name: "Bluetooth 5 controller: extended commands", featuresAnswer: FakeController.bluetooth5Features,
            commandSet: .extended,
            expectedCommands: ["01032000", "0141200800000100a000a000", "01422006010000000000", "01422006000000000000"]),
    ]

    /// Advertising events from a capture, to be sent by the fake once scanning is on.
    static func someAdverts(count: Int) throws -> [[UInt8]] {
        let events = try CapturedEvents.perCapture().flatMap { $0 }.filter { $0[1] == 0x3E }
        return Array(events.prefix(count / 2))
            + CapturedEvents.multiReportEvents(from: events, reportsPerEvent: 4)
            .prefix(count - count / 2)
    }

    @Test(
        "start reads the features, picks the command set, sets parameters, enables scanning without duplicate filter; stop disables it",
        arguments: generations)
    func commandSequence(_ generation: Generation) async throws {
        let adverts = try Self.someAdverts(count: 40)
        let pair = try SocketPair(type: Int32(SOCK_SEQPACKET.rawValue))
        let fake = FakeController(descriptor: pair.far, featuresAnswer: generation.featuresAnswer, advertisingEvents: adverts)
        let directory = try TemporaryDirectory()
        let recorder = try BTSnoopRecorder(path: directory.path("radio.btsnoop"))
        let (chunks, sink) = AsyncStream.makeStream(of: HCIEventChunk.self)
        let scanner = LEScanner(
            socket: HCISocket(adopting: pair.near, device: "fake0", framing: .packets), recorder: recorder,
            onEvents: {
                sink.yield($0)
                return true
            })

        #expect(try await scanner.start() == generation.commandSet)
        #expect(scanner.commandSet == generation.commandSet)
        var received: [[UInt8]] = []
        for await chunk in chunks {
            for event in chunk.packets {
                received.append(event.bytes)
                #expect(event.timestampMicroseconds > 1_700_000_000_000_000)
            }
            if received.count >= adverts.count { break }
        }
        try await scanner.stop()
        #expect(fake.waitUntilClosed())

        #expect(fake.receivedCommands.map { HexDigits.string($0) } == generation.expectedCommands)
        #expect(received == adverts)
        #expect(CapturedEvents.beacons(in: received) == CapturedEvents.beacons(in: adverts))
        #expect(scanner.droppedEvents == 0)

        // The recording holds the conversation: each command, its answer, and the adverts, in order.
        try recorder.close()
        let records = try BTSnoopReader.readAll(path: directory.path("radio.btsnoop"))
        let commands = records.filter { !$0.isReceived }.map { HexDigits.string($0.packet) }
        #expect(commands == generation.expectedCommands)
        #expect(records.filter(\.isReceived).count == generation.expectedCommands.count + adverts.count)
        #expect(CapturedEvents.beacons(in: records.map(\.packet)) == CapturedEvents.beacons(in: adverts))
    }

    @Test("a controller that refuses the scan parameters as 'command disallowed' gives the busy line, and the socket is closed")
    func busyAdapter() async throws {
        let pair = try SocketPair(type: Int32(SOCK_SEQPACKET.rawValue))
        let fake = FakeController(
            descriptor: pair.far, featuresAnswer: FakeController.bluetooth4Features, refusals: [0x200B: 0x0C])
        let socket = HCISocket(adopting: pair.near, device: "hci0", framing: .packets)
        let scanner = LEScanner(socket: socket, onEvents: { _ in true })
        await #expect(throws: HCIError(device: "hci0", problem: .busy(command: .leSetScanParameters))) {
            try await scanner.start()
        }
        #expect(socket.descriptor == -1)
        #expect(fake.waitUntilClosed())
        #expect(
            HCIError(device: "hci0", problem: .busy(command: .leSetScanParameters)).description
                == "hci0 is busy: another program, usually bluetoothd, is scanning or advertising on it "
                + "(it refused LE Set Scan Parameters (0x200B)); stop it (`bluetoothctl scan off`, "
                + "or `sudo systemctl stop bluetooth`) and try again")
        try await scanner.stop()  // nothing left to do, and no error
    }

    @Test("a controller that never answers fails start after the command timeout, naming the command")
    func silentController() async throws {
        let pair = try SocketPair(type: Int32(SOCK_SEQPACKET.rawValue))
        let fake = FakeController(
            descriptor: pair.far, featuresAnswer: FakeController.bluetooth5Features, silentOpcodes: [0x2042])
        let scanner = LEScanner(
            socket: HCISocket(adopting: pair.near, device: "hci0", framing: .packets), commandTimeout: .milliseconds(200),
            onEvents: { _ in true })
        let expected = HCIError(device: "hci0", problem: .noAnswer(command: .leSetExtendedScanEnable, timeout: .milliseconds(200)))
        await #expect(throws: expected) { try await scanner.start() }
        #expect(
            expected.description
                == "hci0 did not answer LE Set Extended Scan Enable (0x2042) within 200ms: the adapter may be hung; "
                + "reset it with `sudo hciconfig hci0 reset`")
        #expect(fake.waitUntilClosed())
    }

    @Test("events come in chunks, in order, each event stamped; far fewer chunks than events when they come fast")
    func eventsComeInChunks() async throws {
        let adverts = Array(repeating: try Self.someAdverts(count: 40), count: 50).flatMap { $0 }
        let pair = try SocketPair(type: Int32(SOCK_SEQPACKET.rawValue))
        let fake = FakeController(descriptor: pair.far, featuresAnswer: FakeController.bluetooth4Features, advertisingEvents: adverts)
        let (chunks, sink) = AsyncStream.makeStream(of: HCIEventChunk.self)
        let scanner = LEScanner(
            socket: HCISocket(adopting: pair.near, device: "fake0", framing: .packets),
            onEvents: {
                sink.yield($0)
                return true
            })
        try await scanner.start()
        var received: [HCIEventPacket] = []
        var chunkCount = 0
        for await chunk in chunks {
            chunkCount += 1
            received += chunk.packets
            if received.count >= adverts.count { break }
        }
        try await scanner.stop()
        #expect(fake.waitUntilClosed())
        #expect(received.map(\.bytes) == adverts)
        #expect(zip(received, received.dropFirst()).allSatisfy { $0.timestampMicroseconds <= $1.timestampMicroseconds })
        #expect(chunkCount < adverts.count / 2, "\(adverts.count) events sent back to back came in \(chunkCount) chunks")
    }

    @Test(
        "while the consumer has no room, events wait in one chunk up to the buffer, the rest are counted as dropped; then the chunk comes whole"
    )
    func boundedWhileConsumerIsFull() async throws {
        let adverts = Array(try Self.someAdverts(count: 40).prefix(30))
        let events = (0..<5).flatMap { _ in adverts }  // 150 events
        let pair = try SocketPair(type: Int32(SOCK_SEQPACKET.rawValue))
        let fake = FakeController(descriptor: pair.far, featuresAnswer: FakeController.bluetooth4Features, advertisingEvents: events)
        let room = Atomic(false)
        let offers = Atomic(0)
        let (chunks, sink) = AsyncStream.makeStream(of: HCIEventChunk.self)
        let scanner = LEScanner(
            socket: HCISocket(adopting: pair.near, device: "fake0", framing: .packets), bufferedEvents: 100,
            onEvents: { chunk in
                offers.add(1, ordering: .relaxed)
                guard room.load(ordering: .acquiring) else { return false }
                sink.yield(chunk)
                return true
            })
        try await scanner.start()
        _ = await eventually(timeout: .seconds(5)) { scanner.droppedEvents >= 50 }
        #expect(scanner.droppedEvents == 50)
        #expect(offers.load(ordering: .relaxed) >= 1, "the chunk was offered while there was no room")
        room.store(true, ordering: .releasing)
        var iterator = chunks.makeAsyncIterator()
        let chunk = await iterator.next()
        #expect(chunk?.packets.map(\.bytes) == Array(events.prefix(100)), "the first 100 events, in order, in one chunk")
        try await scanner.stop()
        #expect(fake.waitUntilClosed())
        #expect(scanner.droppedEvents == 50)
    }

    @Test("when the controller goes away while scanning, events finish and failure says why")
    func adapterRemovedWhileScanning() async throws {
        let pair = try SocketPair(type: Int32(SOCK_SEQPACKET.rawValue))
        let fake = FakeController(descriptor: pair.far, featuresAnswer: FakeController.bluetooth4Features)
        let scanner = LEScanner(socket: HCISocket(adopting: pair.near, device: "hci0", framing: .packets), onEvents: { _ in true })
        try await scanner.start()
        #expect(scanner.failure == nil)
        shutdown(pair.far, Int32(SHUT_RDWR))  // the fake's read ends: it closes its end, as a removed adapter would
        await scanner.waitUntilEnded()
        #expect(scanner.failure == HCIError(device: "hci0", problem: .connectionEnded))
        #expect(fake.waitUntilClosed())
        await #expect(throws: HCIError(device: "hci0", problem: .connectionEnded)) { try await scanner.stop() }
    }

    @Test("a controller that goes away fails the waiting command with 'connection ended'")
    func controllerGoesAway() async throws {
        let pair = try SocketPair(type: Int32(SOCK_SEQPACKET.rawValue))
        close(pair.far)
        let scanner = LEScanner(socket: HCISocket(adopting: pair.near, device: "hci0", framing: .packets), onEvents: { _ in true })
        do {
            try await scanner.start()
            Issue.record("start succeeded without a controller")
        } catch {
            // Either the write fails (peer gone) or the reader sees the end first.
            #expect([HCIError.Problem.connectionEnded, .systemCall(name: "write", errno: EPIPE)].contains(error.problem))
        }
    }

    @Test(
        "the advertiser sends iBeacon (uuid, major = store, minor = department) with the controller's command set, and disables it on stop",
        arguments: [
            (FakeController.bluetooth4Features, LEScanner.CommandSet.legacy),
            (FakeController.bluetooth5Features, LEScanner.CommandSet.extended),
        ])
    func advertiser(featuresAnswer: [UInt8], commandSet: LEScanner.CommandSet) async throws {
        let uuid = try #require(BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020"))
        let beacon = IBeaconAdvertisingData(uuid: uuid, major: 1, minor: 20, measuredPower: -59)
        let pair = try SocketPair(type: Int32(SOCK_SEQPACKET.rawValue))
        let fake = FakeController(descriptor: pair.far, featuresAnswer: featuresAnswer)
        let advertiser = LEAdvertiser(socket: HCISocket(adopting: pair.near, device: "fake0", framing: .packets), beacon: beacon)
        #expect(try await advertiser.start() == commandSet)
        try await advertiser.stop()
        #expect(fake.waitUntilClosed())
        let data = "1e0201061aff4c000215" + "0cf052c297ca407c84f8b62aac4e9020" + "0001" + "0014" + "c5"
        let expected =
            switch commandSet {
            case .legacy:
                ["01032000", "0106200fa000a0000300000000000000000700", "01082020" + data + "00", "010a200101", "010a200100"]
            case .extended:
                [
                    "01032000", HexDigits.string(HCICommand.leSetExtendedAdvertisingParameters(handle: 0x0A).packet),
                    "013720220a0301" + data, "013920060101" + "0a000000", "013920060001" + "0a000000",
                ]
            }
        #expect(fake.receivedCommands.map { HexDigits.string($0) } == expected)
        // What goes on the air decodes back to the node's own iBeacon.
        #expect(
            BeaconFrameDecoder.frames(inAdvertisingData: beacon.bytes)
                == [.iBeacon(uuid: uuid, major: 1, minor: 20, measuredPower: -59)])
    }
}
