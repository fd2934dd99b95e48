import BeaconMeshCore

extension WireCodec {
    /// The contract's analytics object (`report --json`, `/api/stores/{store}/analytics`).
    public static func encode(_ analytics: StoreAnalytics) -> [UInt8] {
        payload { body in
            body.member("v", 1)
            body.member("store", analytics.store)
            body.member("from", analytics.from)
            body.member("to", analytics.to)
            body.member("visits") { visits in
                visits.member("members", analytics.visits.members)
                visits.member("newMembers", analytics.visits.newMembers)
                visits.member("repeatMembers", analytics.visits.repeatMembers)
                visits.member("guests", analytics.visits.guests)
            }
            body.member("dwellSeconds") { dwell in
                dwell.member("median", analytics.dwell.median)
                dwell.member("p90", analytics.dwell.p90)
            }
            body.key("hourly")
            body.array(analytics.hourly) { hour, writer in
                writer.object { item in
                    item.member("hour", hour.hour)
                    item.member("members", hour.members)
                    item.member("guests", hour.guests)
                }
            }
            body.key("departments")
            body.array(analytics.departments) { department, writer in
                writer.object { item in
                    item.member("department", department.department)
                    item.member("name", department.name)
                    item.member("visits", department.visits)
                    item.member("dwellSeconds") { dwell in
                        dwell.member("median", department.dwell.median)
                        dwell.member("p90", department.dwell.p90)
                        dwell.member("total", department.dwell.total ?? 0)
                    }
                }
            }
            body.key("flows")
            body.array(analytics.flows) { flow, writer in
                writer.object { item in
                    item.member("from", flow.from)
                    item.member("to", flow.to)
                    item.member("count", flow.count)
                }
            }
            body.member("checkins") { checkins in
                checkins.member("count", analytics.checkins.count)
                checkins.member("visitsWithCheckin", analytics.checkins.visitsWithCheckin)
            }
            body.key("promos")
            body.array(analytics.promos) { promo, writer in
                writer.object { item in
                    item.member("id", promo.id)
                    item.member("department", promo.department)
                    item.member("offers", promo.offers)
                    item.member("visitsWithCheckinAfter", promo.visitsWithCheckinAfter)
                }
            }
        }
    }

    /// Reads an analytics object (every field the contract names, typed).
    public static func decodeAnalytics(_ bytes: [UInt8]) throws(WireError) -> StoreAnalytics {
        try JSONReader.withVersion1Document(bytes) { body throws(WireError) in
            var analytics = StoreAnalytics(store: try body.uint16("store"), from: try body.timestamp("from"), to: try body.timestamp("to"))
            let visits = try body.object("visits")
            analytics.visits = .init(
                members: Int(try visits.int("members")), newMembers: Int(try visits.int("newMembers")),
                repeatMembers: Int(try visits.int("repeatMembers")), guests: Int(try visits.int("guests")))
            let dwell = try body.object("dwellSeconds")
            analytics.dwell = .init(median: Int(try dwell.int("median")), p90: Int(try dwell.int("p90")))
            try body.forEachObject("hourly") { hour throws(WireError) in
                analytics.hourly.append(
                    .init(hour: try hour.timestamp("hour"), members: Int(try hour.int("members")), guests: Int(try hour.int("guests"))))
            }
            try body.forEachObject("departments") { item throws(WireError) in
                let dwell = try item.object("dwellSeconds")
                analytics.departments.append(
                    .init(
                        department: try item.uint16("department"), name: try item.string("name"), visits: Int(try item.int("visits")),
                        dwell: .init(
                            median: Int(try dwell.int("median")), p90: Int(try dwell.int("p90")), total: Int(try dwell.int("total")))))
            }
            try body.forEachObject("flows") { flow throws(WireError) in
                analytics.flows.append(.init(from: try flow.uint16("from"), to: try flow.uint16("to"), count: Int(try flow.int("count"))))
            }
            let checkins = try body.object("checkins")
            analytics.checkins = .init(count: Int(try checkins.int("count")), visitsWithCheckin: Int(try checkins.int("visitsWithCheckin")))
            try body.forEachObject("promos") { promo throws(WireError) in
                analytics.promos.append(
                    .init(
                        id: try promo.string("id"), department: try promo.uint16("department"), offers: Int(try promo.int("offers")),
                        visitsWithCheckinAfter: Int(try promo.int("visitsWithCheckinAfter"))))
            }
            return analytics
        }
    }
}
