import Foundation

/// Turns a member's photo file into the small `data:` URL events carry: a JPEG of at most 128 × 128 pixels.
///
/// The shrinking is done by ImageMagick (`convert`, Debian's `imagemagick`), which reads every PNG and JPEG
/// variant safely; without it, a photo already under `maximumBytes` is kept as it is and a larger one is refused.
public enum PhotoThumbnail {
    /// The largest thumbnail side, in pixels.
    public static let side = 128
    /// Photos kept as they are (when ImageMagick is missing) must be at most this large.
    public static let maximumBytes = 64 * 1024

    /// Why a photo cannot be used.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads a PNG or JPEG file and returns a thumbnail of it as a `data:` URL.
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
        if let converter = converter() {
            return "data:image/jpeg;base64," + (try shrink(path, with: converter)).base64EncodedString()
        }
        guard data.count <= maximumBytes else {
            throw Failure(
                description:
                    "'\(path)' is \(data.count / 1024) KiB; install ImageMagick (apt-get install imagemagick) to shrink it, or give a photo of at most \(maximumBytes / 1024) KiB"
            )
        }
        return "data:\(mime);base64," + data.base64EncodedString()
    }

    /// ImageMagick's `convert`, if installed.
    private static func converter() -> String? {
        ["/usr/bin/convert", "/usr/local/bin/convert"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private static func shrink(_ path: String, with converter: String) throws(Failure) -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: converter)
        // `[0]`: the first frame only; `>`: only ever shrink; `-strip`: no camera or location metadata.
        process.arguments = [path + "[0]", "-auto-orient", "-thumbnail", "\(side)x\(side)>", "-strip", "-quality", "82", "jpeg:-"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw Failure(description: "cannot run ImageMagick to shrink '\(path)': \(error.localizedDescription)")
        }
        let thumbnail = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, thumbnail.starts(with: [0xFF, 0xD8, 0xFF]) else {
            throw Failure(description: "'\(path)' could not be read as an image (damaged or unsupported)")
        }
        return thumbnail
    }
}
