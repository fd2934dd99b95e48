import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Logging

/// Store surveys: sampling surveyors' beacons, new fits, and how well live readings still fit.
extension CoordinatorState {
    // MARK: Surveys

    /// Keeps about once a second what the nodes hear of each surveyor's beacon marked in a department of a store
    /// decided here, and every 10 s what they hear of its references, as the store's survey samples (written by the
    /// registry writer, off the path to events).
    mutating func sampleSurveys(at now: Timestamp) {
        var marks = surveyMarks
        let samples = marks.samples(
            at: now, deciding: { store in leases == nil || active.contains(store) },
            readings: { beacon, store in engine.surveyReadings(of: beacon, store: store, at: now) })
        surveyMarks = marks
        var references = referenceSamples
        let referenced = references.samples(
            at: now, deciding: { store in leases == nil || active.contains(store) },
            readings: { beacon, store in engine.surveyReadings(of: beacon, store: store, at: now) })
        referenceSamples = references
        for sample in referenced { referenceDrift.record(sample) }
        if !samples.isEmpty || !referenced.isEmpty { actions.registry.addSurveySamples(samples + referenced) }
    }

    /// A verified check-in's trusted truth: what `store`'s nodes hear now of each of `member`'s beacons, as a survey
    /// sample of the till `department` (a beacon no node hears gives none).
    mutating func sampleCheckin(of member: String, store: UInt16, department: UInt16, at now: Timestamp) {
        let samples = engine.beacons(of: member).compactMap { beacon in
            engine.surveyReadings(of: beacon, store: store, at: now).map { readings in
                SurveySample(store: store, beacon: beacon, department: department, at: now, readings: readings, source: .checkin)
            }
        }
        if !samples.isEmpty { actions.registry.addSurveySamples(samples) }
    }

    /// Decides the stores in `fits` from their new fit (`nil`: the survey was cleared) from now on, and checks their
    /// references against `baselines` (how the nodes heard them in the fit's samples).
    mutating func surveysChanged(_ fits: [UInt16: SurveyFit?], baselines: [UInt16: ReferenceDrift.Baseline] = [:]) -> CoordinatorActions {
        for (store, fit) in fits.sorted(by: { $0.key < $1.key }) where configuration.store(store) != nil {
            engine.setSurvey(fit, store: store)
            referenceDrift.setBaseline(fit == nil ? nil : baselines[store], store: store)
            surveys[store] = fit
            cacheSchedule.changedSoon()
            if let fit {
                logger.notice(
                    "deciding a store from its survey",
                    metadata: ["store": "\(store)", "fittedAt": "\(fit.fittedAt.milliseconds)", "accuracy": "\(fit.accuracy)"])
            } else {
                logger.notice("the store's survey was cleared: deciding it by the uncalibrated rules", metadata: ["store": "\(store)"])
            }
        }
        return takeActions()
    }

    /// The surveyed stores decided here, with how well live readings fit their survey.
    func surveyHealth() -> [SurveyStatus] {
        configuration.storeIDs.sorted().compactMap { surveyStatus(of: $0) }
    }

    /// How `store`'s survey is doing, if it is surveyed and decided here.
    func surveyStatus(of store: UInt16) -> SurveyStatus? {
        guard leases == nil || active.contains(store), let fit = engine.survey(of: store), let state = engine.surveyFitness(of: store)
        else { return nil }
        return SurveyStatus(
            store: store, fittedAt: fit.fittedAt, accuracy: fit.accuracy, checks: state.checks, share: state.share, stale: state.isStale,
            drift: referenceDrift.drift(store: store))
    }
}
