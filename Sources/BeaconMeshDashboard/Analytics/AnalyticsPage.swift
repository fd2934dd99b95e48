import BeaconMeshCore
import BeaconMeshRegistry
import Foundation

/// The analytics pages' HTML, drawn entirely on the server (SVG charts by `SVGChart`, no script): a store's page at
/// `/stores/{store}/analytics` and the chain's at `/analytics`. Every chart has a title and description and is followed
/// by the same figures as a table with a CSV download; a period picker (dates, or the presets) reloads the page for
/// another period. The figures the page shows carry ids (`figure-members`, …) that match the API's fields.
enum AnalyticsPage {
    static let memberColour = "#0a6e5c"
    static let guestColour = "#c9a227"
    static let averageColour = "#8b949e"

    /// A store's analytics page for `analytics` (its period), with `profile` (today against the same weekday).
    static func store(
        _ analytics: StoreAnalytics, named name: String, profile: HourOfDayProfile, signedInAs user: String?, timeZone: TimeZone,
        now: Timestamp
    ) -> String {
        let store = analytics.store
        let query = "from=\(analytics.from.milliseconds)&to=\(analytics.to.milliseconds)"
        let csv = { (table: AnalyticsCSV.Table) in
            #"<a class="csv" download href="/stores/\#(store)/analytics.csv?table=\#(table.rawValue)&amp;\#(query.replacingOccurrences(of: "&", with: "&amp;"))">Download CSV</a>"#
        }
        let visits = analytics.visits
        let hours = (0..<24).map { String(format: "%02d", $0) }
        var body = header(
            crumb:
                #"<a href="/">BeaconMesh</a> <span class="crumb">/ <a href="/stores/\#(store)">\#(escape(name))</a> / analytics</span>"#,
            title: "\(name) analytics", user: user)
        body += "<main class=\"analytics\">"
        body += picker(action: "/stores/\(store)/analytics", period: (analytics.from, analytics.to), timeZone: timeZone, now: now)
        body += #"<section class="totals" aria-label="Totals">"#
        for (id, value, label) in [
            ("members", String(visits.members), "members"), ("newMembers", String(visits.newMembers), "new"),
            ("repeatMembers", String(visits.repeatMembers), "repeat"), ("guests", String(visits.guests), "guest visits"),
            ("dwellMedian", DurationText.spoken(seconds: analytics.dwell.median), "median visit"),
            ("dwellP90", DurationText.spoken(seconds: analytics.dwell.p90), "p90 visit"),
            ("checkins", String(analytics.checkins.count), "check-ins"),
            ("visitsWithCheckin", String(analytics.checkins.visitsWithCheckin), "visits with a check-in"),
        ] {
            body +=
                #"<div class="total"><span id="figure-\#(id)" class="figure">\#(escape(value))</span><span class="label">\#(label)</span></div>"#
        }
        body += "</section>" + csv(.summary).replacingOccurrences(of: #"class="csv""#, with: #"class="csv summary""#)

        body += section("Visits per hour today, against the average \(profile.weekday)")
        body += SVGChart.bars(
            id: "chart-today", title: "Visits per hour today against the average \(profile.weekday)",
            summary: "Visits (members and guests) started in each hour of today, beside the average of the last "
                + "\(HourOfDayProfile.weeks) \(profile.weekday)s. Today: \(Int(profile.today.reduce(0, +))) visits.",
            labels: hours,
            series: [
                .init(name: "today", colour: memberColour, values: profile.today),
                .init(name: "average \(profile.weekday)", colour: averageColour, values: profile.sameWeekdayAverage),
            ])
        body += table(
            caption: "Visits per hour today", header: ["Hour", "Today", "Average \(profile.weekday)"],
            rows: (0..<24).filter { profile.today[$0] > 0 || profile.sameWeekdayAverage[$0] > 0 }.map {
                [hours[$0] + ":00", SVGChart.format(profile.today[$0]), SVGChart.format(profile.sameWeekdayAverage[$0])]
            })
        body += "</section>"

        body += section("Visits per hour in the period")
        let hourLabels = analytics.hourly.map { localTime($0.hour, timeZone: timeZone) }
        body += SVGChart.bars(
            id: "chart-hourly", title: "Visits per hour in the period",
            summary:
                "Member and guest visits started in each hour of the period that had any: \(visits.members) members, \(visits.guests) guest visits.",
            labels: hourLabels,
            series: [
                .init(name: "member visits", colour: memberColour, values: analytics.hourly.map { Double($0.members) }),
                .init(name: "guest visits", colour: guestColour, values: analytics.hourly.map { Double($0.guests) }),
            ])
        body += table(
            caption: "Visits per hour", header: ["Hour", "Member visits", "Guest visits"],
            rows: zip(hourLabels, analytics.hourly).map { [$0, String($1.members), String($1.guests)] })
        body += csv(.hourly) + "</section>"

        body += section("New and repeat members")
        body += SVGChart.bars(
            id: "chart-members", title: "New and repeat members",
            summary: "\(visits.newMembers) members came for the first time, \(visits.repeatMembers) came back.",
            labels: ["new", "repeat"],
            series: [.init(name: "members", colour: memberColour, values: [Double(visits.newMembers), Double(visits.repeatMembers)])])
        body += "</section>"

        body += section("Time spent per department")
        body += SVGChart.horizontalBars(
            id: "chart-departments", title: "Median time per visit in each department",
            summary: analytics.departments.isEmpty
                ? "No member visit in the period."
                : analytics.departments.map { "\($0.name): \($0.visits) visits, median \(DurationText.spoken(seconds: $0.dwell.median))" }
                    .joined(separator: "; "),
            rows: analytics.departments.map {
                ($0.name, Double($0.dwell.median), "\(DurationText.spoken(seconds: $0.dwell.median)) · \($0.visits) visits")
            }, colour: memberColour)
        body += table(
            caption: "Departments", header: ["Department", "Visits", "Median", "p90", "Total"],
            rows: analytics.departments.map {
                [
                    $0.name, String($0.visits), DurationText.spoken(seconds: $0.dwell.median),
                    DurationText.spoken(seconds: $0.dwell.p90), DurationText.spoken(seconds: $0.dwell.total ?? 0),
                ]
            }, id: "table-departments")
        body += csv(.departments) + "</section>"

        body += section("Walks between departments")
        let names = Dictionary(analytics.departments.map { ($0.department, $0.name) }, uniquingKeysWith: { first, _ in first })
        let walked = Array(Set(analytics.flows.flatMap { [$0.from, $0.to] }).union(names.keys)).sorted()
        let label = { (department: UInt16) in names[department] ?? "Department \(department)" }
        var counts = walked.map { _ in walked.map { _ in 0 } }
        for flow in analytics.flows {
            if let row = walked.firstIndex(of: flow.from), let column = walked.firstIndex(of: flow.to) { counts[row][column] = flow.count }
        }
        body += SVGChart.matrix(
            id: "chart-flows", title: "Walks between departments (from row to column)",
            summary: analytics.flows.isEmpty
                ? "No member moved between departments in the period."
                : analytics.flows.map { "\(label($0.from)) to \(label($0.to)): \($0.count)" }.joined(separator: "; "),
            labels: walked.map(label), counts: counts)
        body += table(
            caption: "Walks", header: ["From", "To", "Walks"],
            rows: analytics.flows.map { [label($0.from), label($0.to), String($0.count)] }, id: "table-flows")
        body += csv(.flows) + "</section>"

        body += section("Check-ins and promo uptake")
        body += SVGChart.bars(
            id: "chart-promos", title: "Promo offers and the visits that then checked in",
            summary: "\(analytics.checkins.count) check-ins in \(analytics.checkins.visitsWithCheckin) visits. "
                + analytics.promos.map { "\($0.id): \($0.offers) offers, \($0.visitsWithCheckinAfter) followed by a check-in" }
                .joined(separator: "; "),
            labels: analytics.promos.map(\.id),
            series: [
                .init(name: "offers", colour: guestColour, values: analytics.promos.map { Double($0.offers) }),
                .init(name: "check-in after", colour: memberColour, values: analytics.promos.map { Double($0.visitsWithCheckinAfter) }),
            ])
        body += table(
            caption: "Promos", header: ["Promo", "Department", "Offers", "Visits with a check-in after"],
            rows: analytics.promos.map { [$0.id, label($0.department), String($0.offers), String($0.visitsWithCheckinAfter)] },
            id: "table-promos")
        body += csv(.promos) + "</section>"
        body += "</main>"
        return document(title: "\(name) analytics · BeaconMesh", store: store, body: body)
    }

    /// The chain's page: one row per store the user may see with history in the period, with its visits, and a
    /// chart of them.
    static func chain(
        _ stores: [StoreSummary], period: AnalyticsPeriod, signedInAs user: String?, timeZone: TimeZone, now: Timestamp
    ) -> String {
        var body = header(
            crumb: #"<a href="/">BeaconMesh</a> <span class="crumb">/ analytics</span>"#, title: "Chain analytics", user: user)
        body += "<main class=\"analytics\">"
        body += picker(action: "/analytics", period: (period.from, period.to), timeZone: timeZone, now: now)
        body += section("Visits per store")
        body += SVGChart.bars(
            id: "chart-stores", title: "Member and guest visits per store",
            summary: stores.isEmpty
                ? "No store you may see has history in this period."
                : stores.map { "store \($0.store): \($0.visits.members) members, \($0.visits.guests) guest visits" }.joined(
                    separator: "; "),
            labels: stores.map { String($0.store) },
            series: [
                .init(name: "members", colour: memberColour, values: stores.map { Double($0.visits.members) }),
                .init(name: "guest visits", colour: guestColour, values: stores.map { Double($0.visits.guests) }),
            ])
        let query = "from=\(period.from.milliseconds)&amp;to=\(period.to.milliseconds)"
        body += table(
            caption: "Stores",
            header: ["Store", "Member visits", "Members", "New", "Repeat", "Guest visits", "Average visit", "Check-ins"],
            rows: stores.map {
                [
                    #"<a href="/stores/\#($0.store)/analytics?\#(query)">store \#($0.store)</a>"#, String($0.memberVisits),
                    String($0.visits.members), String($0.visits.newMembers), String($0.visits.repeatMembers),
                    String($0.visits.guests), DurationText.spoken(seconds: $0.averageVisit), String($0.checkins),
                ]
            }, id: "table-stores", markupInFirstColumn: true)
        body += "</section></main>"
        return document(title: "Chain analytics · BeaconMesh", store: nil, body: body)
    }

    // MARK: Parts

    private static func header(crumb: String, title: String, user: String?) -> String {
        var out = #"<header class="top"><div class="brand">\#(crumb)</div>"#
        if let user {
            out +=
                #"<form class="account" method="post" action="/logout"><span id="signed-in-as">Signed in as \#(escape(user))</span> <button id="sign-out" type="submit">Sign out</button></form>"#
        }
        return out + "<h1 id=\"title\">\(escape(title))</h1></header>"
    }

    /// The period picker: two dates (the end not included) and presets for today, 7 and 30 days.
    private static func picker(action: String, period: AnalyticsPeriodBounds, timeZone: TimeZone, now: Timestamp) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let startOfToday = calendar.startOfDay(for: Date(timeIntervalSince1970: Double(now.milliseconds) / 1000))
        let tomorrow = milliseconds(calendar.date(byAdding: .day, value: 1, to: startOfToday) ?? startOfToday)
        let presets = [("Today", 1), ("Last 7 days", 7), ("Last 30 days", 30), ("Last 365 days", 365)].map { name, days in
            let from = milliseconds(calendar.date(byAdding: .day, value: 1 - days, to: startOfToday) ?? startOfToday)
            return #"<a class="preset" href="\#(action)?from=\#(from)&amp;to=\#(tomorrow)">\#(name)</a>"#
        }
        return #"""
            <form class="period" method="get" action="\#(action)" aria-label="Period">
              <label>From <input type="date" name="from" value="\#(localDate(period.from, timeZone: timeZone))" required></label>
              <label>To (not included) <input type="date" name="to" value="\#(localDate(period.to, timeZone: timeZone))" required></label>
              <button type="submit">Show</button>
              <span class="presets">\#(presets.joined(separator: " "))</span>
              <p class="period-shown">\#(localTime(period.from, timeZone: timeZone)) to \#(localTime(period.to, timeZone: timeZone))</p>
            </form>
            """#
    }

    private static func section(_ title: String) -> String {
        #"<section class="chart-box"><h2>\#(escape(title))</h2>"#
    }

    /// A table of the chart's figures (its text alternative); cells are text unless `markupInFirstColumn`.
    private static func table(caption: String, header: [String], rows: [[String]], id: String? = nil, markupInFirstColumn: Bool = false)
        -> String
    {
        var out = #"<table class="figures-table"\#(id.map { #" id="\#($0)""# } ?? "")><caption>\#(escape(caption))</caption><thead><tr>"#
        out += header.map { "<th scope=\"col\">\(escape($0))</th>" }.joined() + "</tr></thead><tbody>"
        if rows.isEmpty { out += "<tr><td colspan=\"\(header.count)\">none in this period</td></tr>" }
        for row in rows {
            out +=
                "<tr>"
                + row.enumerated().map { "<td>\(markupInFirstColumn && $0.offset == 0 ? $0.element : escape($0.element))</td>" }.joined()
                + "</tr>"
        }
        return out + "</tbody></table>"
    }

    private static func document(title: String, store: UInt16?, body: String) -> String {
        #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\#(escape(title))</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/assets/dashboard.css">
        </head>
        <body data-page="analytics"\#(store.map { #" data-store="\#($0)""# } ?? "")>
        \#(body)
        </body>
        </html>

        """#
    }

    static func localTime(_ time: Timestamp, timeZone: TimeZone) -> String { formatted(time, "yyyy-MM-dd HH:mm", timeZone) }

    static func localDate(_ time: Timestamp, timeZone: TimeZone) -> String { formatted(time, "yyyy-MM-dd", timeZone) }

    private static func formatted(_ time: Timestamp, _ format: String, _ timeZone: TimeZone) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = format
        return formatter.string(from: Date(timeIntervalSince1970: Double(time.milliseconds) / 1000))
    }

    private static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    private static func escape(_ text: String) -> String { HTMLText.escape(text) }
}
