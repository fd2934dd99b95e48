import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshWire

/// What the survey page needs (`--db`): where the seconds gathered per department come from, and the broker
/// connection its marks go out on — the one the dashboard reads through (`DashboardFeed`'s client), at QoS 1 on the
/// store's survey topic.
public struct DashboardSurvey: Sendable {
    let progress: any SurveyProgressReading
    let client: any MQTTClientProtocol
    let topics: Topics
    let listening = SightingsListening()

    /// The survey of `progress`, publishing through `client` under `topicRoot`.
    public init(progress: any SurveyProgressReading, client: any MQTTClientProtocol, topicRoot: String = Topics.defaultRoot) {
        self.progress = progress
        self.client = client
        self.topics = Topics(root: topicRoot)
    }

    /// Subscribes to `store`'s sightings for the page's list of beacons heard (at most once a minute, at QoS 0), and
    /// lets go of the stores whose survey page nobody asked for in `SightingsListening.idle`.
    func listen(to store: UInt16, at now: Timestamp) {
        let (subscribe, release) = listening.asked(for: store, at: now)
        for store in release { try? client.unsubscribe(topics.sightingsFilter(store: store)) }
        if subscribe { try? client.subscribe(topics.sightingsFilter(store: store), qos: .atMostOnce) }
    }

    /// Hands `mark` of `store` to the broker connection (QoS 1, not retained).
    ///
    /// Refused while the connection is down: a mark sent late would label what the coordinators hear then with a place
    /// the surveyor has left, so the surveyor is told and marks again.
    func publish(_ mark: SurveyMark, store: UInt16) throws(SurveyPublishFailure) {
        guard client.isConnected else { throw SurveyPublishFailure("the dashboard has lost the broker: the mark was not sent") }
        do {
            try client.publish(topic: topics.survey(store: store), payload: WireCodec.encode(mark), qos: .atLeastOnce, retain: false)
        } catch {
            throw SurveyPublishFailure("the broker connection refused the mark: \(error)")
        }
    }
}

/// Why a mark was not handed to the broker, in one line.
struct SurveyPublishFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
