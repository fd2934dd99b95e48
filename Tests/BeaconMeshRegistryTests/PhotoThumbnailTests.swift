import BeaconMeshRegistry
import Foundation
import Testing

@Suite("Member photos")
struct PhotoThumbnailTests {
    @Test("a large photo becomes a small JPEG thumbnail data URL")
    func thumbnail() throws {
        let folder = try temporaryFolder()
        let convert = Process()
        convert.executableURL = URL(fileURLWithPath: "/usr/bin/convert")
        convert.arguments = ["-size", "1600x1200", "plasma:", folder + "/big.png"]
        try convert.run()
        convert.waitUntilExit()
        #expect(convert.terminationStatus == 0, "ImageMagick is needed (deploy/install-deps.sh tests installs it)")
        let url = try PhotoThumbnail.dataURL(fromFile: folder + "/big.png")
        #expect(url.hasPrefix("data:image/jpeg;base64,"))
        let jpeg = try #require(Data(base64Encoded: String(url.dropFirst("data:image/jpeg;base64,".count))))
        #expect(jpeg.count < 16 * 1024, "\(jpeg.count) bytes")
        #expect(jpeg.count > 500)
    }

    @Test("a file that is not a PNG or JPEG is refused with its name")
    func notAnImage() throws {
        let folder = try temporaryFolder()
        try "hello".write(toFile: folder + "/photo.png", atomically: true, encoding: .utf8)
        #expect {
            _ = try PhotoThumbnail.dataURL(fromFile: folder + "/photo.png")
        } throws: { error in
            "\(error)".contains("photo.png' is neither a PNG nor a JPEG image")
        }
    }
}
