import BeaconMeshBLE
import BeaconMeshCaptures
import BeaconMeshCore
import Foundation
import Testing

@Suite("btsnoop recorder")
struct BTSnoopRecorderTests {
    @Test("packets recorded from several threads at once all land, whole, in a file the reader opens")
    func concurrentRecording() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("heard.btsnoop")
        let recorder = try BTSnoopRecorder(path: path)
        let event = HexDigits.bytes("043e1202010300bb54c16053dc0602010603ff4cb7")!
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    for index in 0..<250 {
                        recorder.record(HCIEventPacket(bytes: event, timestampMicroseconds: Int64(thread * 1000 + index)))
                    }
                }
            }
        }
        recorder.record(command: .leSetScanEnable(true))
        #expect(recorder.recordCount == 1001)
        try recorder.close()
        let records = try BTSnoopReader.readAll(path: path)
        #expect(records.count == 1001)
        #expect(records.dropLast().allSatisfy { $0.packet == event && $0.isReceived })
        #expect(records.last?.packet == HCICommand.leSetScanEnable(true).packet)
        #expect(records.last?.isReceived == false)
    }

    @Test("a file that cannot be written fails at once, naming it")
    func fullDevice() {
        #expect(throws: BTSnoopError(path: "/dev/full", problem: .cannotWrite(errno: ENOSPC))) {
            try BTSnoopRecorder(path: "/dev/full")
        }
    }

    @Test("a path that cannot be created fails at once, naming it")
    func unwritablePath() {
        #expect(throws: BTSnoopError(path: "/nonexistent/dir/x.btsnoop", problem: .cannotOpen(errno: ENOENT))) {
            try BTSnoopRecorder(path: "/nonexistent/dir/x.btsnoop")
        }
    }
}
