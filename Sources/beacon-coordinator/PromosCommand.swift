import ArgumentParser
import BeaconMeshCoordinator
import BeaconMeshCore
import BeaconMeshService
import Foundation

/// `beacon-coordinator promos check --config FILE`: validates the promos and says which would fire now, where.
struct PromosCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "promos", abstract: "Check the department promos of a config.", subcommands: [Check.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate the promos (dates, hours, audiences; errors name the line) and print which would fire now.")

        @Option(help: ArgumentHelp("The coordinator's YAML config.", valueName: "FILE"))
        var config: String

        func run() throws {
            let configuration: CoordinatorConfiguration
            do {
                configuration = try CoordinatorConfiguration.load(path: config, defaultID: "check")
            } catch {
                throw UsageError(error.description)
            }
            let now = WallClock.now()
            var lines: [String] = []
            for store in configuration.stores {
                let (day, minute) = store.localDayAndMinute(of: now)
                for department in store.departments {
                    guard let rule = department.promo else { continue }
                    let (open, reason) = rule.window.check(day: day, minute: minute)
                    var who: [String] = []
                    if let minVisits = rule.audience.minVisits { who.append("from visit \(minVisits)") }
                    if let members = rule.audience.members { who.append("only \(members.sorted().joined(separator: ", "))") }
                    let dwell = DurationText.format(rule.dwell ?? configuration.promos.dwell)
                    lines.append(
                        """
                        \(open ? "fires now " : "waits     ")  store \(store.id) \(store.name) · \(department.name) (\(department.id)) · \
                        \(rule.promo.id) "\(rule.promo.title)" · \(reason) · \(rule.proximity.rawValue) or closer after \(dwell) · \
                        \(who.isEmpty ? "every member" : who.joined(separator: ", ")) · once per \(DurationText.format(configuration.promos.cooldown))
                        """)
                }
            }
            print(lines.isEmpty ? "\(config): no promos" : lines.joined(separator: "\n"))
        }
    }
}
