import BeaconMeshBLE

/// Chunks of packets handed over to the scanner loop and not yet given back: how many, and the bytes of their buffers
/// (`HCIEventChunk.bufferByteCount`, what holding them costs).
struct ChunkHold: Equatable, Sendable {
    var chunks = 0
    var bytes = 0

    /// Nothing held.
    init() {}

    /// `chunk` alone.
    init(_ chunk: HCIEventChunk) {
        chunks = 1
        bytes = chunk.bufferByteCount
    }

    /// `chunks` chunks of `bytes` bytes in all.
    init(chunks: Int, bytes: Int) {
        self.chunks = chunks
        self.bytes = bytes
    }

    var isEmpty: Bool { chunks == 0 && bytes == 0 }

    /// Adds `other` to what is held.
    static func += (hold: inout ChunkHold, other: ChunkHold) {
        hold.chunks += other.chunks
        hold.bytes += other.bytes
    }

    /// Takes `other` from what is held (never below nothing).
    static func -= (hold: inout ChunkHold, other: ChunkHold) {
        hold.chunks = max(0, hold.chunks - other.chunks)
        hold.bytes = max(0, hold.bytes - other.bytes)
    }
}
