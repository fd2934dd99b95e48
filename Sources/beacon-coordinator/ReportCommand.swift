import ArgumentParser
import BeaconMeshCoordinator
import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Foundation

/// `beacon-coordinator report`: a store's shopper analytics for a period, computed by the database.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "A store's shopper analytics for a period (default the last 7 days), as tables or JSON.")

    @OptionGroup var database: MembersCommand.Database
    @Option(help: "The store's number.") var store: UInt16
    @Option(help: ArgumentHelp("Start of the period: epoch ms or a local YYYY-MM-DD[THH:MM].", valueName: "TIME"))
    var from: String?
    @Option(help: ArgumentHelp("End of the period (not included): epoch ms or a local YYYY-MM-DD[THH:MM].", valueName: "TIME"))
    var to: String?
    @Flag(help: "Print the contract's analytics object as JSON.") var json = false

    func validate() throws {
        _ = try period()
    }

    /// The period asked for, at the current time.
    func period() throws -> AnalyticsPeriod {
        do {
            return try AnalyticsPeriod.parse(from: from, to: to, now: Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)))
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        let period = try period()
        let analytics = try database.use { try $0.analytics(store: store, from: period.from, to: period.to) }
        if json {
            print(String(decoding: WireCodec.encode(analytics), as: UTF8.self))
        } else {
            print(AnalyticsTable.render(analytics))
        }
    }
}
