#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, builds, and runs every test target (unit tests of the
# pure Core, the wire codec, the MQTT client against a real mosquitto, the BLE captures, and the end-to-end tests
# that drive the real programs with mosquitto_pub/mosquitto_sub), and, beside the build, a short fuzzing run of the HCI
# event parser (FUZZ_SECONDS, default 20; no crash allowed).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase says how long it took, so a slow run shows where its time went.
phase_started=$SECONDS
phase() {
  echo "run-tests: $1 took $((SECONDS - phase_started)) s ($SECONDS s in all)"
  phase_started=$SECONDS
}
deploy/install-deps.sh
deploy/install-schemathesis.sh
phase "installing what was missing"
# House style: the toolchain's formatter with the repository's .swift-format; any finding fails the run.
swift format lint --strict --recursive --parallel Sources Tests Package.swift
phase "swift format lint"
# The dashboard's HTML, CSS and script (Sources/BeaconMeshDashboard/Web) through their parsers (PyPI, installed into
# .build/weblint when missing: three pure-Python packages, about a minute); any finding fails the run.
deploy/lint-web.sh
phase "the web files' lint"
# The fuzzer (its own optimised compile of BeaconMeshCore's radio path, then FUZZ_SECONDS of fuzzing; no crash
# allowed) runs beside the build: neither keeps a timing, and the build leaves a core idle while it links. Its result
# is read last.
mkdir -p .build
FUZZ_SECONDS="${FUZZ_SECONDS:-20}" deploy/fuzz-hci.sh > .build/fuzz-hci.log 2>&1 &
fuzz=$!
outage=
trap 'kill $fuzz $outage 2> /dev/null || true' EXIT
swift build --build-tests
phase "the build (and the fuzzer beside it)"
# The fault suite's load tests (100,000 hostile messages, a million-advert replay, a broker restart under traffic,
# consumers that never read, a slow consumer of a 5,000-message flood, test processes
# on a machine made busy on purpose) run after the rest, one at a time: their load would disturb the timing of the
# other end-to-end tests, and each other's. The registry's tests on PostgreSQL (a server of their own, initdb and
# all) and the chain's (two coordinators on one, cut off and restarted) are among them: beside the rest they made
# timing-bound tests fail (a broker's start not seen within 10 s, a locked database's write not failing in time).
# So do the accuracy scoreboard's floors (a minute of replay on the concurrency pool's threads, which starved every
# other test's tasks while it ran). (The
# flood takes 1.4 s alone but 9–34 s among the rest, whose tasks share the two threads of the concurrency pool on
# this 2-core machine, and once ran out of its 2 minutes.) So do the lease
# fail-over tests: coordinators killed, frozen and cut off from the database, timed against a lease of 2 s. So do
# the alerts' end-to-end tests, which time the alert against the greeting (within 1 s: topic, monitor, browser).
# So do the in-memory lease tests: their keeper renews at a real pace, and at the start of the parallel phase a check
# that takes 2 s alone (or beside two busy loops) twice ran out of its 20 s (a store-undecided alert not heard).
load_tests='LeaseServiceTests|AlertEndToEndTests|WebhookEndToEndTests|WebhookFailoverTests|DashboardAlertBrowserTests|AnalyticsEndToEndTests|ColdStartTests|RefusedDatabaseTests|PromoKillTests|FirstRunEndToEndTests|RunMeshFirstRunTests|ChainErasureTests|DashboardOpenAPITests|ScoreboardFloorTests|LeaseFailoverTests|BeaconMeshRegistryTests|ChainRegistryTests|CoordinatorHostileInputTests|BrokerRestartTests|StuckConsumerTests|ScannerReplayMemoryTests|MQTTBackpressureTests|TestProcessOutputTests'
# The tests that mostly wait on real time with little to do run side by side in a phase of their own, after the
# parallel phase and before the load tests, with nothing busy beside them: a webhook receiver failing for two minutes
# (136 s) in a test process of its own (the test binary itself: a second `swift test` waits for the first's lock),
# and beside it a live survey (marks 15 s apart, samples within 10 % of them), a scanner frozen and a scanner's
# network cut past the broker's keep-alive (52 s together), then the accuracy suite's two real-time walks (84 s,
# side by side after their preparations). A walk's figures bend under load as its scanners start (beside the other
# walk's preparations, 0.548 of seconds right against the scoreboard's 0.679; alone, 0.679-0.702), so the walks
# start only once those three have ended, beside the outage's quiet wait. One at a time these took 412 s.
waiting_tests='LiveSurveyTests|ScannerFreezeTests|NetworkCutTests'
walks='AccuracyRealTimeTests'
outage_test='WebhookOutageTests'
swift test --skip-build --skip "$load_tests|$waiting_tests|$walks|$outage_test"
phase "the tests, in parallel"
"$(swift build --show-bin-path)/BeaconMeshPackageTests.xctest" --testing-library swift-testing --filter "$outage_test" \
  > .build/outage-test.log 2>&1 &
outage=$!
swift test --skip-build --filter "$waiting_tests"
swift test --skip-build --filter "$walks"
if ! wait "$outage"; then
  cat .build/outage-test.log
  exit 1
fi
outage=
tail -n 3 .build/outage-test.log
phase "the real-time tests, side by side"
swift test --skip-build --no-parallel --filter "$load_tests"
phase "the load tests, one at a time"
if ! wait "$fuzz"; then
  tail -n 40 .build/fuzz-hci.log
  exit 1
fi
trap - EXIT
tail -n 1 .build/fuzz-hci.log
phase "waiting for the fuzzer"
