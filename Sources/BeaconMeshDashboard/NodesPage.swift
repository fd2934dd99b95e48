import BeaconMeshCore
import Foundation

/// The nodes pages' HTML, drawn on the server from a `NodesPageModel` (no script; the page reloads itself every
/// `reloadSeconds`): `/nodes`, the chain's fleet for head office, and `/stores/{store}/nodes`, one store's.
///
/// A summary line (nodes, offline, behind the newest, configs refused), the versions across the nodes with those behind
/// the newest marked, and a table of the nodes, offline first: store, department, node, state, version (`behind`
/// marked), the store-wide and own config state (a refusal with its reason), uptime, adverts per second and when its
/// health was last heard. Rows carry `data-node="store/department/node"` and the classes `offline`, `behind` and
/// `refused`, for a person's eye (the stylesheet) and for tests. Every value from the broker is escaped.
enum NodesPage {
    /// How often the page reloads itself.
    static let reloadSeconds = 30

    /// The page of `model` at `now`; `storeName` names the store of a store's page; `linkLost`: the dashboard has lost
    /// the broker (the page says its data may be out of date).
    static func html(_ model: NodesPageModel, storeName: String? = nil, linkLost: Bool, signedInAs user: String?, now: Timestamp) -> String
    {
        let title: String
        let crumb: String
        if let store = model.store {
            let name = storeName ?? "Store \(store)"
            title = "\(name) nodes"
            crumb = #"<a href="/">BeaconMesh</a> <span class="crumb">/ <a href="/stores/\#(store)">\#(escape(name))</a> / nodes</span>"#
        } else {
            title = "Nodes of the chain"
            crumb = #"<a href="/">BeaconMesh</a> <span class="crumb">/ nodes</span>"#
        }
        var body = #"<header class="top"><div class="brand">\#(crumb)</div>"#
        if let user {
            body += DashboardWeb.fill(DashboardWeb.account, ["user": HTMLText.escape(user)])
        }
        body += #"<h1 id="title">\#(escape(title))</h1>"#
        body += #"<p id="status" class="status">\#(summary(model, linkLost: linkLost))</p></header>"#
        body += #"<main class="fleet">"#
        body += versions(model)
        body += #"<section aria-label="Nodes"><h2>Nodes <span class="count">(\#(model.rows.count))</span></h2>"#
        body += table(model, now: now) + "</section></main>"
        return #"""
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="refresh" content="\#(reloadSeconds)">
            <title>\#(escape(title)) · BeaconMesh</title>
            <link rel="icon" href="data:,">
            <link rel="stylesheet" href="/assets/dashboard.css">
            </head>
            <body data-page="nodes"\#(model.store.map { #" data-store="\#($0)""# } ?? "")>
            \#(body)
            </body>
            </html>

            """#
    }

    private static func summary(_ model: NodesPageModel, linkLost: Bool) -> String {
        var parts = ["\(model.rows.count) node\(model.rows.count == 1 ? "" : "s")"]
        parts.append(
            #"<span id="summary-offline"\#(model.offlineCount > 0 ? #" class="problem""# : "")>\#(model.offlineCount) offline</span>"#)
        if let newest = model.newestVersion {
            parts.append(#"<span id="summary-behind">\#(model.behindCount) behind \#(escape(newest))</span>"#)
        }
        parts.append(
            #"<span id="summary-refused"\#(model.refusedCount > 0 ? #" class="problem""# : "")>\#(model.refusedCount) config refused</span>"#
        )
        parts.append("reloads every \(reloadSeconds)s")
        var line = parts.joined(separator: " · ")
        if linkLost { line = #"<span class="problem">⚠ The dashboard lost the broker — data may be out of date</span> · "# + line }
        return line
    }

    private static func versions(_ model: NodesPageModel) -> String {
        var out = #"<section class="versions-box" aria-label="Versions"><h2>Versions</h2><ul id="versions" class="versions">"#
        if model.versions.isEmpty { out += #"<li class="empty">No node reports a version yet.</li>"# }
        for version in model.versions {
            let mark =
                version.behind
                ? #" <span class="marker">behind</span>"#
                : (version.version == model.newestVersion ? #" <span class="newest">newest</span>"# : "")
            out +=
                #"<li class="version\#(version.behind ? " behind" : "")" data-version="\#(escape(version.version))"><span class="name">\#(escape(version.version))</span>\#(mark) <span class="nodes">\#(version.nodes) node\#(version.nodes == 1 ? "" : "s")</span></li>"#
        }
        return out + "</ul></section>"
    }

    private static func table(_ model: NodesPageModel, now: Timestamp) -> String {
        guard !model.rows.isEmpty else { return #"<p id="no-nodes" class="empty">No node heard yet.</p>"# }
        let header = [
            "Store", "Department", "Node", "State", "Version", "Store config", "Node config", "Uptime", "Adverts/s", "Last heard",
        ]
        var out = #"<table id="fleet" class="fleet"><thead><tr>"#
        out += header.map { #"<th scope="col">\#($0)</th>"# }.joined() + "</tr></thead><tbody>"
        for row in model.rows {
            let address = row.address
            let classes = [row.state == .offline ? "offline" : nil, row.behind ? "behind" : nil, row.configRefused ? "refused" : nil]
                .compactMap { $0 }
            out += #"<tr data-node="\#(address.store)/\#(address.department)/\#(escape(address.node))""#
            out += classes.isEmpty ? ">" : #" class="\#(classes.joined(separator: " "))">"#
            let store =
                model.store == nil
                ? #"<a href="/stores/\#(address.store)/nodes">\#(escape(row.storeName))</a> <span class="number">#\#(address.store)</span>"#
                : escape(row.storeName)
            out += #"<td class="store">\#(store)</td>"#
            out += #"<td class="department">\#(escape(row.departmentName))</td>"#
            out += #"<td class="node">\#(escape(address.node))</td>"#
            out += #"<td class="state \#(row.state.rawValue)">\#(row.state.rawValue)</td>"#
            let version = row.version.isEmpty ? #"<span class="unknown">unknown</span>"# : escape(row.version)
            let behind = row.behind ? #" <span class="marker">behind \#(escape(model.newestVersion ?? ""))</span>"# : ""
            out += #"<td class="version\#(row.behind ? " behind" : "")">\#(version)\#(behind)</td>"#
            for (level, report) in [("store", row.config.store), ("node", row.config.node)] {
                let state = report?.state.rawValue ?? "none"
                out += #"<td class="config \#(level)-config \#(state)">\#(escape(NodesPageModel.describe(report)))</td>"#
            }
            out += #"<td class="uptime">\#(row.health.map { DurationText.spoken(seconds: Int($0.uptimeSeconds)) } ?? "—")</td>"#
            out += #"<td class="adverts">\#(row.health.map { String(format: "%.1f", $0.advertsPerSecond) } ?? "—")</td>"#
            let heard = row.lastHeard.map { DurationText.spoken(seconds: Int(max(0, (now - $0).components.seconds))) + " ago" }
            out += #"<td class="heard">\#(heard ?? "no health yet")</td></tr>"#
        }
        return out + "</tbody></table>"
    }

    private static func escape(_ text: String) -> String { HTMLText.escape(text) }
}
