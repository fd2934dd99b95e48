/// Walks the AD structures (length, type, payload) of one advertisement's data, never past its end.
///
/// Rules: a length byte of 0 ends the data; a structure that runs past the end is dropped, together with everything
/// after it. Zero padding after the last structure is therefore harmless.
public enum AdvertisingDataStructures {
    /// AD type: Flags.
    public static let flags: UInt8 = 0x01
    /// AD type: Service Data with a 16-bit service UUID.
    public static let serviceData16: UInt8 = 0x16
    /// AD type: Manufacturer Specific Data.
    public static let manufacturerSpecificData: UInt8 = 0xFF

    /// Calls `body` with the AD type and payload (the bytes after the type) of each complete structure, in order.
    /// The payload is a slice of `data`, valid only inside the closure.
    @inlinable
    public static func forEach(
        in data: UnsafeRawBufferPointer, _ body: (_ type: UInt8, _ payload: UnsafeRawBufferPointer) -> Void
    ) {
        var offset = 0
        while offset < data.count {
            let length = Int(data[offset])
            guard length > 0, offset + 1 + length <= data.count else { return }
            body(data[offset + 1], UnsafeRawBufferPointer(rebasing: data[(offset + 2)..<(offset + 1 + length)]))
            offset += 1 + length
        }
    }
}
