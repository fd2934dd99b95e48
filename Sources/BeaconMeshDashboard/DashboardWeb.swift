/// The dashboard's web files, `Web/` in this module's folder, embedded in the program when it is built (SwiftPM's
/// `embedInCode`): one binary, nothing read from disk at run time. The test command lints them
/// (`deploy/lint-web.sh`: HTML, CSS and JavaScript parsers), which no Swift string would get.
///
/// The HTML files are templates: `{{name}}` is replaced by a value the caller has already made safe (escaped text,
/// or markup of another template).
enum DashboardWeb {
    static let script = String(decoding: PackageResources.dashboard_js, as: UTF8.self)
    static let stylesheet = String(decoding: PackageResources.dashboard_css, as: UTF8.self)
    static let overview = String(decoding: PackageResources.overview_html, as: UTF8.self)
    static let store = String(decoding: PackageResources.store_html, as: UTF8.self)
    static let account = String(decoding: PackageResources.account_html, as: UTF8.self)
    static let login = String(decoding: PackageResources.login_html, as: UTF8.self)
    static let survey = String(decoding: PackageResources.survey_html, as: UTF8.self)
    static let surveyScript = String(decoding: PackageResources.survey_js, as: UTF8.self)

    /// `template` with each `{{name}}` (a name of letters) replaced by `values[name]`, in one pass (a value is never
    /// searched for placeholders); a name without a value is left as it is.
    static func fill(_ template: String, _ values: [String: String]) -> String {
        let bytes = Array(template.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if let (name, end) = placeholder(in: bytes, at: index), let value = values[name] {
                result += value.utf8
                index = end
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// The name of the `{{name}}` starting at `start` and the index after it, or `nil` when none starts there.
    private static func placeholder(in bytes: [UInt8], at start: Int) -> (name: String, end: Int)? {
        let open = UInt8(ascii: "{")
        let close = UInt8(ascii: "}")
        guard start + 1 < bytes.count, bytes[start] == open, bytes[start + 1] == open else { return nil }
        var index = start + 2
        while index < bytes.count, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[index] | 0x20) { index += 1 }
        guard index > start + 2, index + 1 < bytes.count, bytes[index] == close, bytes[index + 1] == close else { return nil }
        return (String(decoding: bytes[(start + 2)..<index], as: UTF8.self), index + 2)
    }
}
