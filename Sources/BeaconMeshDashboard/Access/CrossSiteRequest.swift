import HTTPTypes
import Hummingbird

/// Whether a request that changes something (a sign-in, a survey mark) came from another site's page: the browser
/// says where a request comes from (`Sec-Fetch-Site`), and anything but this dashboard's own pages (`same-origin`)
/// or the person themselves (`none`: typed, bookmarked) is refused. A client that sends no such header (curl, a
/// script with HTTP Basic) is no browser that another site could steer, and is let through.
enum CrossSiteRequest {
    static let header = HTTPField.Name("Sec-Fetch-Site")!

    /// Whether `request` must be refused as coming from another site.
    static func isRefused(_ request: Request) -> Bool {
        guard let site = request.headers[header] else { return false }
        return site != "same-origin" && site != "none"
    }
}
