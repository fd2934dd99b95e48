import BeaconMeshCore

extension WireCodec {
    /// The survey mark payload of `stores/{store}/survey`: `{"v":1,"beacon":"…","department":10|null,"at":…}` (or
    /// `"member":"ana"` in place of the beacon), with `"stop":true` added only to a mark that ends the survey.
    public static func encode(_ mark: SurveyMark) -> [UInt8] {
        payload(capacity: 128) { body in
            body.member("v", 1)
            switch mark.carried {
            case .beacon(let beacon):
                body.key("beacon")
                body.string(beacon)
            case .member(let member):
                body.member("member", member)
            }
            body.member("department", orNull: mark.department.map { Int($0) })
            body.member("at", mark.at)
            if mark.stop { body.member("stop", true) }
        }
    }

    /// Reads a survey mark: `beacon` a canonical beacon key or `member` a member id (1-64 characters; not both),
    /// `department` present as a number 0–65535 or `null`, `at`
    /// an integer, `stop` (optional) `true` or `false`; anything else is refused with the field named.
    public static func decodeSurveyMark(_ bytes: [UInt8]) throws(WireError) -> SurveyMark {
        try JSONReader.withVersion1Document(bytes) { body throws(WireError) in
            // `null` says "between departments"; a mark that does not say where it is says nothing.
            guard body.contains(SurveyKeys.department) else {
                throw .wrongType(field: "department", expected: "a department number or null")
            }
            let carried: SurveyMark.Carried
            if body.contains(SurveyKeys.member) {
                guard !body.contains(SurveyKeys.beacon) else {
                    throw .wrongType(field: "member", expected: "a member or a beacon, not both")
                }
                let member = try body.string(SurveyKeys.member)
                guard (1...64).contains(member.count) else { throw .wrongType(field: "member", expected: "a member id of 1-64 characters") }
                carried = .member(member)
            } else {
                carried = .beacon(try body.beaconKey(SurveyKeys.beacon))
            }
            return SurveyMark(
                carried, department: try body.optionalUInt16(SurveyKeys.department),
                stop: body.contains(SurveyKeys.stop) ? try body.bool(SurveyKeys.stop) : false, at: try body.timestamp(SurveyKeys.at))
        }
    }
}

/// The survey mark's member names, hashed once.
private enum SurveyKeys {
    static let beacon = JSONKey("beacon")
    static let member = JSONKey("member")
    static let department = JSONKey("department")
    static let stop = JSONKey("stop")
    static let at = JSONKey("at")
}
