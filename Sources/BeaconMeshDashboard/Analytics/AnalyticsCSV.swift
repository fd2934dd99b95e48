import BeaconMeshCore
import Foundation

/// The analytics page's tables as CSV (one per table, `?table=`), for a spreadsheet: a header row, then one row per
/// entry, written by `CSVTable` (its formula guard and quoting, as every table BeaconMesh exports).
enum AnalyticsCSV {
    /// The tables a CSV can be asked for.
    enum Table: String, CaseIterable {
        case summary, hourly, departments, flows, promos
    }

    static func text(_ table: Table, of analytics: StoreAnalytics) -> String {
        var rows: [[String]]
        switch table {
        case .summary:
            let visits = analytics.visits
            rows = [
                [
                    "store", "from", "to", "members", "newMembers", "repeatMembers", "guests", "dwellMedianSeconds", "dwellP90Seconds",
                    "checkins", "visitsWithCheckin",
                ],
                [
                    String(analytics.store), String(analytics.from.milliseconds), String(analytics.to.milliseconds), String(visits.members),
                    String(visits.newMembers), String(visits.repeatMembers), String(visits.guests), String(analytics.dwell.median),
                    String(analytics.dwell.p90), String(analytics.checkins.count), String(analytics.checkins.visitsWithCheckin),
                ],
            ]
        case .hourly:
            rows =
                [["hour", "members", "guests"]]
                + analytics.hourly.map { [String($0.hour.milliseconds), String($0.members), String($0.guests)] }
        case .departments:
            rows =
                [["department", "name", "visits", "dwellMedianSeconds", "dwellP90Seconds", "dwellTotalSeconds"]]
                + analytics.departments.map {
                    [
                        String($0.department), $0.name, String($0.visits), String($0.dwell.median), String($0.dwell.p90),
                        String($0.dwell.total ?? 0),
                    ]
                }
        case .flows:
            rows = [["from", "to", "count"]] + analytics.flows.map { [String($0.from), String($0.to), String($0.count)] }
        case .promos:
            rows =
                [["promo", "department", "offers", "visitsWithCheckinAfter"]]
                + analytics.promos.map { [$0.id, String($0.department), String($0.offers), String($0.visitsWithCheckinAfter)] }
        }
        return CSVTable.text(rows)
    }
}
