import ArgumentParser

/// A route on the command line: department numbers (0–65535) separated by commas, e.g. `10,20,30`.
public struct RouteArgument: ExpressibleByArgument, Sendable, Equatable {
    public var departments: [UInt16]

    public init(_ departments: [UInt16]) {
        self.departments = departments
    }

    public init?(argument: String) {
        var departments: [UInt16] = []
        for part in argument.split(separator: ",", omittingEmptySubsequences: false) {
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && $0.isNumber }), let department = UInt16(part) else { return nil }
            departments.append(department)
        }
        guard !departments.isEmpty else { return nil }
        self.departments = departments
    }

    public var defaultValueDescription: String { departments.map(String.init).joined(separator: ",") }
}
