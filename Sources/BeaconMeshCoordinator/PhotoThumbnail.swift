import Foundation

/// Turns a member's photo file into the small `data:` URL events carry.
public enum PhotoThumbnail {
    /// Photos larger than this are refused: events go to every monitor and must stay small.
    public static let maximumBytes = 64 * 1024

    /// Why a photo cannot be used.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads a PNG or JPEG file and returns it as a `data:` URL.
    public static func dataURL(fromFile path: String) throws(Failure) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { throw Failure(description: "cannot read '\(path)'") }
        let bytes = [UInt8](data.prefix(8))
        let mime: String
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            mime = "image/png"
        } else if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            mime = "image/jpeg"
        } else {
            throw Failure(description: "'\(path)' is neither a PNG nor a JPEG image")
        }
        guard data.count <= maximumBytes else {
            throw Failure(description: "'\(path)' is \(data.count / 1024) KiB; photos must be at most \(maximumBytes / 1024) KiB (use a small thumbnail)")
        }
        return "data:\(mime);base64," + data.base64EncodedString()
    }
}
