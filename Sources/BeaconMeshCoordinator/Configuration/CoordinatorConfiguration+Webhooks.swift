import BeaconMeshCore
import BeaconMeshService
import Foundation
import Yams

/// The config's `webhooks:` — `[{name, url, secretFile, events: [...], personalData: false, cafile: FILE}]` — read
/// strictly: a URL that is not `https://` (plain `http://` only to a loopback address), an unknown event type or a
/// name given twice is an error naming the key. The secret is read by `load` (relative to the config's folder).
extension YAMLReader {
    func webhookEndpoints(_ node: Node) throws(ConfigurationError) -> [WebhookEndpoint] {
        var endpoints: [WebhookEndpoint] = []
        for (index, item) in try sequence(node, at: "webhooks").enumerated() {
            let endpoint = try webhookEndpoint(item, at: "webhooks[\(index)]")
            if endpoints.contains(where: { $0.name == endpoint.name }) {
                throw error(item, "webhooks[\(index)].name '\(endpoint.name)' appears twice")
            }
            endpoints.append(endpoint)
        }
        return endpoints
    }

    private func webhookEndpoint(_ node: Node, at place: String) throws(ConfigurationError) -> WebhookEndpoint {
        let fields = try mapping(node, at: place, allowed: ["name", "url", "secretFile", "events", "personalData", "cafile"])
        guard let nameNode = fields["name"], let urlNode = fields["url"], let secretNode = fields["secretFile"],
            let eventsNode = fields["events"]
        else { throw error(node, "\(place) needs name, url, secretFile and events") }
        let name = try string(nameNode, at: "\(place).name")
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw error(nameNode, "\(place).name must be a name of letters, digits, - and _, such as crm (found '\(name)')")
        }
        let url = try string(urlNode, at: "\(place).url")
        if let refusal = WebhookEndpoint.refusal(of: url) { throw error(urlNode, "\(place).url \(refusal) (found '\(url)')") }
        var events: Set<WebhookEndpoint.EventType> = []
        for item in try sequence(eventsNode, at: "\(place).events") {
            let text = try string(item, at: "\(place).events")
            guard let type = WebhookEndpoint.EventType(rawValue: text) else {
                let known = WebhookEndpoint.EventType.allCases.map(\.rawValue).joined(separator: ", ")
                throw error(item, "\(place).events has '\(text)', which is not one of \(known)")
            }
            events.insert(type)
        }
        guard !events.isEmpty else { throw error(eventsNode, "\(place).events must name at least one event type") }
        var endpoint = WebhookEndpoint(name: name, url: url, secretFile: try string(secretNode, at: "\(place).secretFile"), events: events)
        if let personal = fields["personalData"] {
            switch try string(personal, at: "\(place).personalData") {
            case "true": endpoint.personalData = true
            case "false": endpoint.personalData = false
            default: throw error(personal, "\(place).personalData must be true or false")
            }
        }
        if let cafile = fields["cafile"] { endpoint.cafile = try string(cafile, at: "\(place).cafile") }
        return endpoint
    }
}

extension CoordinatorConfiguration {
    /// Reads each endpoint's secret (paths relative to `folder`): an unreadable or empty file is an error naming the key.
    mutating func readWebhookSecrets(file: String, folder: String) throws(ConfigurationError) {
        for index in webhooks.indices {
            let path =
                webhooks[index].secretFile.hasPrefix("/") || folder.isEmpty
                ? webhooks[index].secretFile : folder + "/" + webhooks[index].secretFile
            webhooks[index].secretFile = path
            if let cafile = webhooks[index].cafile, !cafile.hasPrefix("/"), !folder.isEmpty {
                webhooks[index].cafile = folder + "/" + cafile
            }
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(file: file, message: "webhooks[\(index)].secretFile cannot be read: \(path)")
            }
            var secret = [UInt8](data)
            while let last = secret.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { secret.removeLast() }
            guard !secret.isEmpty else {
                throw ConfigurationError(file: file, message: "webhooks[\(index)].secretFile is empty: \(path)")
            }
            webhooks[index].secret = secret
        }
    }
}
