import BeaconMeshCore

extension WireCodec {
    /// A coordinator's cache is read whole at a cold start; this is far above any chain's (a million members with
    /// thumbnails), and keeps a file that is not a cache from being read into memory.
    public static let maximumCoordinatorCacheBytes = 1 << 30

    /// The coordinator's cache as JSON: `{"v":1,"coordinator":…,"database":…,"savedAt":…,"leases":[…],
    /// "members":[…],"visits":[…],"checkins":[…],"surveys":[…],"pendingWrites":[{"id":…,"changes":…}]}`.
    public static func encode(_ cache: CoordinatorCacheDocument) -> [UInt8] {
        var writer = JSONStreamWriter(capacity: 4096 + cache.members.count * 256)
        writer.object { body in
            body.member("v", 1)
            body.member("coordinator", cache.coordinator)
            body.member("database", cache.database)
            body.member("savedAt", cache.savedAt)
            body.key("leases")
            body.array(cache.leases.sorted { $0.key < $1.key }) { lease, item in
                item.object { item in
                    item.member("store", lease.key)
                    item.member("since", lease.value.since)
                    item.member("fenced", lease.value.fenced)
                }
            }
            body.key("members")
            body.array(cache.members) { member, item in
                item.object { item in encodeMember(member, into: &item) }
            }
            body.key("visits")
            body.array(cache.visits) { visit, item in
                item.object { item in
                    item.member("member", visit.member)
                    item.member("store", visit.store)
                    item.member("arrivedAt", visit.arrivedAt)
                    item.member("department", visit.department)
                    item.member("inDepartmentSince", visit.inDepartmentSince)
                    item.member("lastSeen", visit.lastSeen)
                    item.member("leftAt", orNull: visit.leftAt)
                    item.member("proximity", visit.proximity.rawValue)
                }
            }
            body.key("checkins")
            body.array(cache.handledCheckins.sorted { $0.key < $1.key }) { checkin, item in
                item.object { item in
                    item.member("id", checkin.key)
                    item.member("at", checkin.value)
                }
            }
            body.key("surveys")
            body.array(cache.surveys.sorted { $0.key < $1.key }) { survey, item in
                item.object { item in
                    item.member("store", survey.key)
                    item.member("fit", hex(survey.value.encoded()))
                }
            }
            body.key("pendingWrites")
            body.array(cache.pendingWrites) { write, item in
                item.object { item in
                    item.member("id", write.id)
                    item.key("changes")
                    item.value(write.changes)
                }
            }
        }
        return writer.finish()
    }

    private static func encodeMember(_ member: CoordinatorCacheDocument.Member, into item: inout JSONStreamWriter) {
        let profile = member.profile
        item.member("id", profile.id)
        item.member("name", profile.name)
        item.member("favoriteDrink", orNull: profile.favoriteDrink)
        item.member("photo", orNull: profile.photo)
        item.member("visits", profile.visits)
        item.member("lastVisitAt", orNull: profile.lastVisitAt)
        item.member("checkins", profile.checkins)
        item.member("fields") { fields in
            for (name, value) in profile.customFields.sorted(by: { $0.key < $1.key }) {
                fields.key(name)
                fields.string(value)
            }
        }
        item.key("beacons")
        item.array(member.beacons) { beacon, element in element.string(beacon) }
        item.member("promos") { promos in
            for (promo, time) in member.promoFires.sorted(by: { $0.key < $1.key }) {
                promos.key(promo)
                promos.int(time.milliseconds)
            }
        }
    }

    /// Reads a coordinator's cache written by `encode(_:)`.
    public static func decodeCoordinatorCache(_ bytes: [UInt8]) throws(WireError) -> CoordinatorCacheDocument {
        try JSONReader.withVersion1Document(bytes, maximumBytes: maximumCoordinatorCacheBytes) { body throws(WireError) in
            var leases: [UInt16: LeaseGrant] = [:]
            try body.forEachObject("leases") { item throws(WireError) in
                leases[try item.uint16("store")] = LeaseGrant(since: try item.timestamp("since"), fenced: try item.bool("fenced"))
            }
            var members: [CoordinatorCacheDocument.Member] = []
            try body.forEachObject("members") { item throws(WireError) in
                let profile = MemberProfile(
                    id: try item.string("id"), name: try item.string("name"), favoriteDrink: try item.optionalString("favoriteDrink"),
                    visits: Int(try item.int("visits")), lastVisitAt: try item.optionalTimestamp("lastVisitAt"),
                    photo: try item.optionalString("photo"), customFields: try item.object("fields").stringMembers(excluding: []),
                    checkins: Int(try item.int("checkins")))
                members.append(
                    .init(
                        profile: profile, beacons: try item.optionalBeaconKeys("beacons"),
                        promoFires: try item.lenientIntegerMembers("promos").mapValues { Timestamp(milliseconds: $0) }))
            }
            var visits: [PresenceEngine.Visit] = []
            try body.forEachObject("visits") { item throws(WireError) in
                visits.append(
                    PresenceEngine.Visit(
                        member: try item.string("member"), store: try item.uint16("store"), arrivedAt: try item.timestamp("arrivedAt"),
                        department: try item.uint16("department"), inDepartmentSince: try item.timestamp("inDepartmentSince"),
                        lastSeen: try item.timestamp("lastSeen"), leftAt: try item.optionalTimestamp("leftAt"),
                        proximity: try item.proximity("proximity")))
            }
            var checkins: [String: Timestamp] = [:]
            try body.forEachObject("checkins") { item throws(WireError) in checkins[try item.string("id")] = try item.timestamp("at") }
            var surveys: [UInt16: SurveyFit] = [:]
            try body.forEachObject("surveys") { item throws(WireError) in
                let store = try item.uint16("store")
                guard let bytes = Self.unhex(try item.string("fit")), let fit = SurveyFit(encoded: bytes) else {
                    throw .absurdValue(field: "surveys.fit", value: "not a survey fit of store \(store)")
                }
                surveys[store] = fit
            }
            var pending: [CoordinatorCacheDocument.PendingWrite] = []
            try body.forEachObject("pendingWrites", optional: true) { item throws(WireError) in
                pending.append(.init(id: try item.string("id"), changes: item.value("changes") ?? .null))
            }
            return CoordinatorCacheDocument(
                coordinator: try body.string("coordinator"), database: try body.string("database"), savedAt: try body.timestamp("savedAt"),
                leases: leases, members: members, visits: visits, handledCheckins: checkins, surveys: surveys, pendingWrites: pending)
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func unhex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
