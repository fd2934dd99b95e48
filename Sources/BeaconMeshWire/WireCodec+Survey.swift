import BeaconMeshCore

extension WireCodec {
    /// `survey show --json`: a store's seconds of samples per department (ascending), by where their department came
    /// from, and its fit, if any: `{"store":1,"samples":[{"department":10,"seconds":300,
    /// "sources":{"walk":240,"reference":60,"checkin":0}}],"fit":{"fittedAt":…,"accuracy":0.97}|null}`.
    public static func encodeSurvey(store: UInt16, seconds: [UInt16: [SurveySample.Source: Int]], fit: SurveyFit?) -> [UInt8] {
        payload { body in
            body.member("store", store)
            body.key("samples")
            body.array(seconds.sorted { $0.key < $1.key }) { department, writer in
                writer.object { item in
                    item.member("department", department.key)
                    item.member("seconds", department.value.values.reduce(0, +))
                    item.key("sources")
                    item.object { sources in
                        sources.member("walk", department.value[.walk] ?? 0)
                        sources.member("reference", department.value[.reference] ?? 0)
                        sources.member("checkin", department.value[.checkin] ?? 0)
                    }
                }
            }
            body.key("fit")
            if let fit {
                body.object { item in
                    item.member("fittedAt", fit.fittedAt)
                    item.member("accuracy", fit.accuracy)
                }
            } else {
                body.null()
            }
        }
    }

    /// `survey fit --json`: the quality of the fit made at `fittedAt`, as `survey fit` prints it —
    /// `{"store":1,"fittedAt":…,"accuracy":0.97,"samples":[{"department":10,"seconds":240,"stretches":3,"right":0.98}],
    /// "confusion":{"departments":[10,20],"rows":[[230,10],[4,176]]},"needsWalking":[{"department":20,"why":"…"}]}`:
    /// `right` is the share of the department's held-out seconds decided right; confusion rows are where the surveyor
    /// was, columns what was decided, in `departments` order.
    public static func encode(_ quality: SurveyQuality, fittedAt: Timestamp) -> [UInt8] {
        let count = quality.departments.count
        return payload(capacity: 256 + count * (64 + count * 8)) { body in
            body.member("store", quality.store)
            body.member("fittedAt", fittedAt)
            body.member("accuracy", quality.accuracy)
            let recall = quality.recall
            body.key("samples")
            body.array(quality.departments.indices) { index, writer in
                writer.object { item in
                    item.member("department", quality.departments[index])
                    item.member("seconds", quality.samples[index])
                    item.member("stretches", quality.stretches[index])
                    item.member("right", recall[index])
                }
            }
            body.member("confusion") { confusion in
                confusion.key("departments")
                confusion.array(quality.departments) { department, writer in writer.int(department) }
                confusion.key("rows")
                confusion.array(0..<count) { truth, writer in
                    writer.array(quality.confusion[truth * count..<(truth + 1) * count]) { seconds, row in row.int(seconds) }
                }
            }
            body.key("needsWalking")
            body.array(quality.needsWalking) { department, writer in
                writer.object { item in
                    item.member("department", department.department)
                    item.member("why", department.why)
                }
            }
        }
    }
}
