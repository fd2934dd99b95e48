import BeaconMeshTesting
import Foundation
import Testing

/// The dashboard's and the coordinator's HTTP endpoints against the real programs: JSON API, health, Prometheus
/// metrics that move with traffic, and bad input.
@Suite("beacon-dashboard and coordinator metrics end to end", .serialized)
struct DashboardEndToEndTests {
    @Test("coordinator /metrics: batches, sightings, events by type, drops by reason and members present move with traffic")
    func coordinatorMetricsMove() async throws {
        try await DashboardMesh.run { mesh in
            let url = "http://127.0.0.1:\(mesh.metricsPort)/metrics"
            let before = try PrometheusText(try await HTTP.get(url).body)
            #expect(before["beaconmesh_batches_total"] ?? 0 == 0)

            mesh.shoppers.place(1, in: 10)
            let arrived = await eventually(timeout: .seconds(15), interval: .milliseconds(200)) { () -> PrometheusText? in
                guard let text = try? await HTTP.get(url).body, let metrics = try? PrometheusText(text),
                    metrics[#"beaconmesh_events_total{type="arrived"}"#] == 1,
                    metrics[#"beaconmesh_members_present{store="1"}"#] == 1,
                    (metrics["beaconmesh_batches_total"] ?? 0) >= 2
                else { return nil }
                return metrics
            }
            let during = try #require(arrived, "no arrival in the metrics")
            #expect((during["beaconmesh_sightings_total"] ?? 0) >= (during["beaconmesh_batches_total"] ?? 0))
            #expect((during["beaconmesh_tracked_beacons"] ?? 0) >= 1)

            // A node that says it is offline shows as 0 in beaconmesh_node_online (what the node-offline alert watches).
            try await mesh.shoppers.nodeStatus(department: 30, online: false)
            let nodeSeries = #"beaconmesh_node_online{store="1",department="30",node="a"}"#
            let offline = await eventually(timeout: .seconds(5), interval: .milliseconds(200)) { () -> Double? in
                guard let text = try? await HTTP.get(url).body, let value = try? PrometheusText(text)[nodeSeries] else { return nil }
                return value
            }
            #expect(offline == 0)

            try await MosquittoClients.publish(
                port: mesh.broker.port, topic: "beaconmesh/v1/stores/1/departments/10/nodes/a/sightings",
                string: "not json", qos: 1)
            try await MosquittoClients.publish(
                port: mesh.broker.port, topic: "beaconmesh/v1/stores/1/departments/10/nodes/a/sightings",
                string: "{broken", qos: 1)
            let dropped = await eventually(timeout: .seconds(5), interval: .milliseconds(200)) { () -> Double? in
                guard let text = try? await HTTP.get(url).body, let metrics = try? PrometheusText(text),
                    let value = metrics[#"beaconmesh_dropped_total{reason="invalid-json"}"#], value >= 2
                else { return nil }
                return value
            }
            #expect(dropped == 2)
            let later = try PrometheusText(try await HTTP.get(url).body)
            #expect((later["beaconmesh_batches_total"] ?? 0) > (during["beaconmesh_batches_total"] ?? 0), "batches did not grow")

            // On a loaded machine a pause of the simulated scanner longer than `exitAfter` (2 s) may already have
            // made her leave, and come back, any number of times, and she may be out at this moment (so taking her
            // out adds no leave). Coming back within `visitGap` continues her visit with no new `arrived` (the contract),
            // and its end is a `left` of its own: a clean run saw 1 arrival and 2 leaves. What must hold once she is
            // gone is a leave for every arrival, at least one, and nobody present.
            mesh.shoppers.place(1, in: nil)
            let left = await eventually(timeout: .seconds(30), interval: .milliseconds(200)) { () -> Bool? in
                guard let text = try? await HTTP.get(url).body, let metrics = try? PrometheusText(text) else { return nil }
                let arrivals = metrics[#"beaconmesh_events_total{type="arrived"}"#] ?? 0
                let leaves = metrics[#"beaconmesh_events_total{type="left"}"#] ?? 0
                guard leaves >= 1, leaves >= arrivals, metrics[#"beaconmesh_members_present{store="1"}"#] == 0 else { return nil }
                return true
            }
            if left != true {
                let text = (try? await HTTP.get(url).body) ?? ""
                let counts = text.split(separator: "\n").filter { $0.hasPrefix("beaconmesh_events") || $0.hasPrefix("beaconmesh_members") }
                Issue.record("the leave did not show in the metrics:\n\(counts.joined(separator: "\n"))\n\(mesh.coordinator.transcript)")
            }
            #expect(try await HTTP.get("http://127.0.0.1:\(mesh.metricsPort)/other").status == 404)
        }
    }

    @Test("dashboard: /api/stores/1/presence is the retained snapshot, /healthz is ok, /metrics counts messages, bad store numbers are 400")
    func dashboardEndpoints() async throws {
        try await DashboardMesh.run { mesh in
            let base = mesh.dashboardURL
            let firstMetrics = try PrometheusText(try await HTTP.get(base + "/metrics").body)

            mesh.shoppers.place(1, in: 10)
            let presence = await eventually(timeout: .seconds(15), interval: .milliseconds(200)) { () -> [String: Any]? in
                guard let reply = try? await HTTP.get(base + "/api/stores/1/presence"), reply.status == 200,
                    let object = try? JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any],
                    let members = object["members"] as? [[String: Any]], !members.isEmpty
                else { return nil }
                return object
            }
            let snapshot = try #require(presence, "no snapshot with Ana: \(mesh.dashboard.transcript)")
            #expect(snapshot["v"] as? Int == 1)
            #expect(snapshot["store"] as? Int == 1)
            #expect(snapshot["name"] as? String == "San Francisco")
            let member = (snapshot["members"] as? [[String: Any]])?.first?["member"] as? [String: Any]
            #expect(member?["id"] as? String == "ana")

            // The same bytes as the retained message on the broker (read right after; a newer snapshot published in
            // between makes them differ, so it looks again).
            var compared: (served: String, retained: String) = ("", "")
            let same =
                await eventually(timeout: .seconds(15), interval: .milliseconds(200)) { () async -> Bool? in
                    guard let served = try? await HTTP.get(base + "/api/stores/1/presence").body,
                        let retained = try? await MosquittoClients.subscribe(
                            port: mesh.broker.port, filter: "beaconmesh/v1/stores/1/presence", qos: 1)
                    else { return nil }
                    let line = await retained.waitForLine(timeout: .seconds(5), where: { _ in true })
                    await retained.stop()
                    compared = (served, String(line?.drop { $0 != " " }.dropFirst() ?? ""))
                    return compared.served == compared.retained ? true : nil
                } ?? false
            #expect(same, "served \(compared.served)\nretained \(compared.retained)")
            #expect(compared.served.contains("\"store\":1") && compared.served.contains("\"ana\""))

            let health = try await HTTP.get(base + "/healthz")
            #expect(health.status == 200)
            #expect(health.body.contains("\"broker\":\"connected\""))
            let metrics = try PrometheusText(try await HTTP.get(base + "/metrics").body)
            let received = metrics["beaconmesh_dashboard_messages_total"] ?? 0
            #expect(received > (firstMetrics["beaconmesh_dashboard_messages_total"] ?? 0), "messages received did not grow")
            #expect(metrics["beaconmesh_dashboard_clients"] != nil)

            let page = try await HTTP.get(base + "/stores/1")
            #expect(page.status == 200 && page.body.contains("data-store=\"1\"") && page.body.contains("/assets/dashboard.js"))
            let overview = try await HTTP.get(base + "/")
            #expect(overview.status == 200 && overview.body.contains("Chain overview"))
            for bad in ["abc", "70000", "-1", "1x"] {
                let reply = try await HTTP.get(base + "/stores/\(bad)")
                #expect(reply.status == 400, "/stores/\(bad) gave \(reply.status)")
                #expect(reply.body == "bad store number '\(bad)': a store is a number from 0 to 65535\n")
            }
            #expect(try await HTTP.get(base + "/api/stores/9/presence").status == 404)
            let api = try await HTTP.get(base + "/api/stores/1")
            #expect(api.status == 200 && api.body.contains("\"initials\":\"AS\""))
        }
    }

    @Test("dashboard --store shows only the stores asked for")
    func storeFilter() async throws {
        let broker = try await MosquittoBroker.start()
        let port = try FreePort.next()
        let dashboard = try await DashboardMesh.startDashboard(brokerURL: broker.url, port: port, extra: ["--store", "2", "--store", "3"])
        try await MosquittoClients.publish(
            port: broker.port, topic: "beaconmesh/v1/stores/1/departments/10/nodes/a/status",
            string: #"{"v":1,"state":"online","version":"t","boot":"b","source":"sim","startedAt":1}"#, qos: 1, retain: true)
        try await MosquittoClients.publish(
            port: broker.port, topic: "beaconmesh/v1/stores/3/departments/10/nodes/a/status",
            string: #"{"v":1,"state":"offline","version":"t","boot":"b","source":"sim","startedAt":1}"#, qos: 1, retain: true)
        let stores = await eventually(timeout: .seconds(5), interval: .milliseconds(100)) { () -> String? in
            guard let body = try? await HTTP.get("http://127.0.0.1:\(port)/api/stores").body, body.contains("\"nodesOffline\":1") else {
                return nil
            }
            return body
        }
        let body = try #require(stores)
        #expect(body.contains("\"store\":2") && body.contains("\"store\":3") && !body.contains("\"store\":1,"))
        #expect(try await HTTP.get("http://127.0.0.1:\(port)/stores/1").status == 404)
        #expect(await dashboard.stop(with: SIGINT, timeout: .seconds(10)) == .exited(0))
        await broker.stop()
    }

    @Test(
        "bad flags exit 2 with one line naming what is wrong",
        arguments: [
            (["--store", "70000"], "store"),
            (["--listen", "localhost"], "listen"),
            (["--listen", "127.0.0.1:99999"], "listen"),
            (["--broker", "http://x:1"], "mqtt"),
            (["--frobnicate"], "frobnicate"),
        ])
    func badFlags(arguments: [String], named: String) async throws {
        let process = try Mesh.program("beacon-dashboard", arguments)
        let status = await process.waitForExit(timeout: .seconds(10))
        #expect(status == .exited(2), "\(process.transcript)")
        let errors = process.stderrLines.filter { !$0.isEmpty }
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.hasPrefix("beacon-dashboard: ") == true)
        #expect(errors.first?.lowercased().contains(named) == true, "\(errors)")
    }

    @Test("--help shows the usage line with every flag, exit 0")
    func help() async throws {
        let process = try Mesh.program("beacon-dashboard", ["--help"])
        #expect(await process.waitForExit(timeout: .seconds(10)) == .exited(0))
        #expect(
            process.stdoutLines.contains(
                "USAGE: beacon-dashboard [--broker <URL>] [--username <U>] [--password-file <F>] [--cafile <F>] [--listen <HOST:PORT>] [--store <N> ...] [--db <FILE|URL>] [--users <FILE>] [--tls-cert <F> --tls-key <F>] [--log-level <log-level>]"
            ),
            "\(process.transcript)")
        #expect(process.stdoutLines.contains { $0.hasPrefix("  --listen <HOST:PORT>    Where to serve the pages") })
        #expect(process.stdoutLines.contains("                          (default: 127.0.0.1:8080)"))
    }

    @Test("a coordinator config with a bad metrics address exits 2 naming the key")
    func badMetricsKey() async throws {
        let directory = try Mesh.temporaryDirectory()
        let config = try Mesh.writeCoordinatorConfig(in: directory, brokerURL: "mqtt://127.0.0.1:1", extra: "metrics: \"nowhere\"")
        let process = try Mesh.program("beacon-coordinator", ["run", "--config", config])
        let status = await process.waitForExit(timeout: .seconds(10))
        #expect(status == .exited(2), "\(process.transcript)")
        #expect(process.stderrLines.contains { $0.contains("metrics must be HOST:PORT") }, "\(process.transcript)")
    }
}
