import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Decoding the session's messages, a chunk at a time on every core, in arrival order.
extension CoordinatorService {
    /// How many messages the decoding side takes from the session at once, at most.
    static let decodingChunk = 64
    /// A chunk this small, with no other chunk being decoded, is decoded by the reading task itself.
    static let inlineChunk = 4

    /// Reads the session's messages a chunk at a time (what waits, up to `decodingChunk`), decodes up to `workers`
    /// chunks at once on the concurrency pool, and hands them to `inbox` in arrival order. Ends with the messages.
    /// With `fobs`, members' Eddystone-EID ids are resolved to their fobs on the way (at the clock's now).
    static func decode(
        _ messages: some MessageChunks, topics: Topics, workers: Int, into inbox: DecisionInbox,
        fobs: (resolution: FobResolution, clock: any ServiceClock)? = nil
    ) async {
        @Sendable func input(_ message: MQTTMessage) -> CoordinatorInput {
            let input = CoordinatorInput.decode(message, topics: topics)
            guard let fobs else { return input }
            return fobs.resolution.resolve(input, at: fobs.clock.now().milliseconds / 1000)
        }
        var decoding: [Task<[CoordinatorInput], Never>] = []
        while true {
            var chunk = messages.waiting(upTo: decodingChunk)
            if chunk.isEmpty {
                // Nothing new: hand over the oldest chunk being decoded, or wait for messages.
                if !decoding.isEmpty {
                    await inbox.push(await decoding.removeFirst().value)
                    continue
                }
                guard let next = await messages.next(upTo: decodingChunk) else { break }
                chunk = next
            }
            if workers <= 1 || (decoding.isEmpty && chunk.count <= inlineChunk) {
                // One core, or a trickle: decoding here spares a hand-over to another thread (event latency).
                await inbox.push(chunk.map(input))
                continue
            }
            decoding.append(Task { chunk.map(input) })
            if decoding.count >= workers { await inbox.push(await decoding.removeFirst().value) }
        }
        for task in decoding { await inbox.push(await task.value) }
    }

    /// How many chunks are decoded at once: the cores this process may run on.
    static func decodingWorkers() -> Int {
        max(1, ProcessInfo.processInfo.activeProcessorCount)
    }
}
