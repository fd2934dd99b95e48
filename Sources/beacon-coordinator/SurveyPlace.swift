import ArgumentParser
import BeaconMeshCore

/// Where a surveyor says they are, as `survey mark --department` spells it: a department number (0–65535), `none`
/// (between departments) or `stop` (the survey of the beacon ends).
enum SurveyPlace: ExpressibleByArgument, Hashable, Sendable {
    case department(UInt16)
    case between
    case stop

    init?(argument: String) {
        switch argument {
        case "none": self = .between
        case "stop": self = .stop
        default:
            guard (1...5).contains(argument.count), argument.allSatisfy({ $0.isASCII && $0.isNumber }), let number = UInt16(argument)
            else { return nil }
            self = .department(number)
        }
    }

    /// The mark of what the surveyor carries (a beacon, or a member's beacons) at this place, made `at`.
    func mark(of carried: SurveyMark.Carried, at: Timestamp) -> SurveyMark {
        switch self {
        case .department(let department): SurveyMark(carried, department: department, at: at)
        case .between: SurveyMark(carried, department: nil, at: at)
        case .stop: .stop(carried, at: at)
        }
    }
}
