import BeaconMeshCore
import BeaconMeshWire
import Foundation
import Testing

@testable import BeaconMeshPhone

@Suite("the phone's lines for offers and check-ins")
struct PhoneMessageLineTests {
    static let at = Timestamp(milliseconds: 1_763_769_600_500)
    static var time: String { PhoneMessageLine.clockTime(at) }
    static let ana = MemberProfile(
        id: "ana", name: "Ana Souza", favoriteDrink: nil, visits: 3, lastVisitAt: nil, photo: nil,
        customFields: [:], checkins: 3)

    @Test("an offer shows the department's name, the promo's title and message")
    func offer() throws {
        let offer = Offer(
            id: "o1", member: "ana", store: 1, department: 20, departmentName: "Housewares",
            promo: Promo(id: "kitchen", title: "Voucher de Desconto!", message: "Kit de cozinha com 20% de desconto"),
            at: Self.at)
        #expect(
            try PhoneMessageLine.offer(WireCodec.encode(offer))
                == "\(Self.time)  offer     Housewares  Voucher de Desconto! — Kit de cozinha com 20% de desconto")
    }

    @Test("an offer without a department name (an older coordinator) names the department's number")
    func offerWithoutName() throws {
        let payload = #"{"v":1,"id":"o1","store":1,"department":20,"promo":{"id":"k","title":"T","message":"M"},"at":1763769600500}"#
        #expect(try PhoneMessageLine.offer(Array(payload.utf8)) == "\(Self.time)  offer     department 20  T — M")
    }

    @Test("a check-in shows where and the member's count; a refusal shows why")
    func checkin() throws {
        let event = StoreEvent(
            id: "e1", store: 9, at: Self.at,
            kind: .checkin(
                member: Self.ana, department: 6, departmentName: "Counter", request: "r1", checkins: 3, verified: false))
        #expect(try PhoneMessageLine.checkin(WireCodec.encode(event)) == "\(Self.time)  check-in  at Counter (#3)")
        let refused = StoreEvent(
            id: "e2", store: 9, at: Self.at,
            kind: .checkinRefused(
                request: "r2", member: "ana", department: 6, reason: .notNearTill))
        #expect(try PhoneMessageLine.checkin(WireCodec.encode(refused)) == "\(Self.time)  check-in  refused at department 6: not-near-till")
    }

    @Test(
        "malformed payloads are errors with a reason, not lines",
        arguments: [
            "not json", "{\"v\":2,\"id\":\"o\"}", "{\"v\":1,\"id\":\"o1\",\"store\":1}", "[]",
        ])
    func malformed(payload: String) {
        #expect(throws: WireError.self) { try PhoneMessageLine.offer(Array(payload.utf8)) }
        #expect(throws: WireError.self) { try PhoneMessageLine.checkin(Array(payload.utf8)) }
    }

    @Test("the time is the message's own, in local HH:MM:SS")
    func clock() {
        let text = PhoneMessageLine.clockTime(Self.at)
        #expect(text.count == 8 && text.split(separator: ":").count == 3, "\(text)")
        var seconds = time_t(Self.at.milliseconds / 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        #expect(text.hasSuffix(":00") == (parts.tm_sec == 0))
        #expect(Int(text.prefix(2)) == Int(parts.tm_hour))
    }
}
