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
deploy/install-deps.sh tests
deploy/install-schemathesis.sh
phase "installing what was missing"
# The Debian packages (a release build of four programs with the Swift runtime inside, ≈ 24 minutes of CPU) and the
# pristine Debian they are installed into (debootstrap; 7 min here, almost all of it waiting on the archive and
# writing 320 MB) are made after the tests: beside them, even at the idle class, the timing-bound end-to-end tests
# failed on the load (CPU for the build, disk for debootstrap).
mkdir -p .build
rm -f .build/run-tests.test-binary
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
# Whatever still runs beside a phase is stopped if the run ends early.
trap 'kill $(jobs -p) 2> /dev/null || true' EXIT
# Waits for a job run beside a phase: its whole log if it failed (and the run stops there), else the log's last lines.
finish_beside() {
  if ! wait "$1"; then
    cat "$2"
    exit 1
  fi
  tail -n "$3" "$2"
}
swift build --build-tests
echo "$(swift build --show-bin-path)/BeaconMeshPackageTests.xctest" > .build/run-tests.test-binary
phase "the build (and the fuzzer beside it)"
# The fault suite's load tests (100,000 hostile messages, a broker restart under traffic, consumers that never read,
# a slow consumer of a 5,000-message flood, test processes on a machine made busy on purpose) run after the rest,
# one at a time: their load would disturb the timing of the
# other end-to-end tests, and each other's. The registry's tests on PostgreSQL (a server of their own, initdb and
# all) and the chain's (two coordinators on one, cut off and restarted) are among them: beside the rest they made
# timing-bound tests fail (a broker's start not seen within 10 s, a locked database's write not failing in time).
# (The flood takes 1.4 s alone but 9–34 s among the rest, whose tasks share the two threads of the concurrency pool on
# this 2-core machine, and once ran out of its 2 minutes.) So do the lease
# fail-over tests: coordinators killed, frozen and cut off from the database, timed against a lease of 2 s. So do
# the alerts' end-to-end tests, which time the alert against the greeting (within 1 s: topic, monitor, browser).
# So do the in-memory lease tests: their keeper renews at a real pace, and at the start of the parallel phase a check
# that takes 2 s alone (or beside two busy loops) twice ran out of its 20 s (a store-undecided alert not heard).
# So does the scanner on a fake hci0 fed at a steady 2 000 adverts/s (beacon-bench scanner-live-process), and so do
# the resumed visit, the broker restarted under a TLS scanner and the fleet benchmark (timed against exitAfter or a
# reconnect; beside the parallel phase they failed on its load), and this round's other process-heavy suites (the fleet
# credential's broker, the nodes pages' browser, every program's --version, package.sh's bad input on a clone).
# So does a coordinator's start made to fail at each step (it counts the process's threads and file descriptors).
# So does a webhook receiver failing for 10 s across a kill -9 of the coordinator (its rules are WebhookDispatchTests').
# So do the webhook lists compared across a chain (three coordinators on one PostgreSQL, leases of 2 s), and an
# Eddystone-EID fob replayed through a real scanner (no left while it rotates, against an exitAfter of 2 s).
# So do the coordinator's fault suite (node clocks skewed and jumping, timed against exitAfter while its batches go
# out through one mosquitto_pub each) and the till panel (a check-in within 5 s, in tmux): in the end-to-end phase a
# visit ended early in one clean run, and the check-in came late in the next run of that phase (2026-12-02).
load_tests='CoordinatorStartFailureTests|WebhookOutageTests|CoordinatorFaultTests|WebhookListEndToEndTests|EIDMemberEndToEndTests|TillEndToEndTests|FleetACLTests|DashboardNodesBrowserTests|VersionTests|PackageScriptTests|ScannerLiveProcessBenchTests|LeaseServiceTests|AlertEndToEndTests|RestoredDwellAlertTests|ResumedVisitTests|SystemTrustReconnectTests|NodesBenchTests|WebhookEndToEndTests|WebhookFailoverTests|DashboardAlertBrowserTests|AnalyticsEndToEndTests|ColdStartTests|RefusedDatabaseTests|FirstRunEndToEndTests|LeaseFailoverTests|BeaconMeshRegistryTests|ChainRegistryTests|CoordinatorHostileInputTests|BrokerRestartTests|StuckConsumerTests|MQTTBackpressureTests|TestProcessOutputTests'
# Six load tests keep no timing that load could break: three use both cores — the scoreboard's floors (both; a minute
# of replay on the concurrency pool's threads, which starved every other test's tasks in the parallel phase), the
# million-advert replay's peak memory and schemathesis against the dashboard (116 s together) — and three mostly
# wait: the coordinator killed 50 times around promo firings (87 s; nothing published twice), the README's mesh on a
# fresh checkout (26 s; its bounds are 20-60 s) and a member erased from a chain's PostgreSQL registry (9 s; nothing
# of her left). They run one at a time in a test process of their own beside the load tests, at the idle scheduling
# class (SCHED_IDLE: a core only when nothing else wants it; the kernel takes it back the moment a test's process
# wakes), so they fill the cores the load tests leave idle.
idle_tests='ScoreboardFloorTests|ScannerReplayMemoryTests|DashboardOpenAPITests|PromoKillTests|RunMeshFirstRunTests|ChainErasureTests|ChainEIDSecrecyTests'
# The tests that mostly wait on real time with little to do run side by side in a phase of their own, after the
# parallel phase and before the load tests, with nothing busy beside them: a live survey (marks 15 s apart, samples
# within 10 % of them), a scanner frozen and a scanner's network cut past the broker's keep-alive (52 s together), then the accuracy suite's two real-time walks (84 s,
# side by side after their preparations). A walk's figures bend under load as its scanners start (beside the other
# walk's preparations, 0.548 of seconds right against the scoreboard's 0.679; alone, 0.679-0.702), so the walks
# start only once those three have ended.
# The references' drift check waits 75 s for a minute of samples 10 s apart; a survey mark across a coordinator's
# kill -9 waits for samples before and after it (17 s).
waiting_tests='SurveyMarkRestartTests|LiveSurveyTests|ScannerFreezeTests|NetworkCutTests|NodeConfigEndToEndTests|ReferenceEndToEndTests'
walks='AccuracyRealTimeTests'
package_test='PackageInstallTests'
# The parallel phase runs in two halves: the unit tests (every target but EndToEndTests; 37 s), then the end-to-end
# tests (80 s). Side by side, the unit tests' CPU-bound cases held both threads of the concurrency pool for tens of
# seconds at the start (a pure test "started" to "passed" in 38 s), and an end-to-end test's in-process server, whose
# task waits for that pool, once did not listen within 10 s (a clean-clone CI run, 2026-12-01). Apart they take 117 s
# against 111-125 s together.
not_here="$load_tests|$idle_tests|$waiting_tests|$walks|$package_test"
swift test --skip-build --skip "^EndToEndTests\.|$not_here"
phase "the unit tests, in parallel"
swift test --skip-build --filter "^EndToEndTests\." --skip "$not_here"
phase "the end-to-end tests, in parallel"
swift test --skip-build --filter "$waiting_tests"
swift test --skip-build --filter "$walks"
phase "the real-time tests, side by side"
test_binary="$(swift build --show-bin-path)/BeaconMeshPackageTests.xctest"
chrt --idle 0 "$test_binary" --no-parallel --filter "$idle_tests" --testing-library swift-testing \
  > .build/idle-tests.log 2>&1 &
idle=$!
swift test --skip-build --no-parallel --filter "$load_tests"
finish_beside "$idle" .build/idle-tests.log 3
phase "the load tests, one at a time (and the idle-class ones beside them)"
finish_beside "$fuzz" .build/fuzz-hci.log 1
phase "waiting for the fuzzer"
trap - EXIT
deploy/test-packages.sh --base-only > .build/debootstrap.log 2>&1 || { cat .build/debootstrap.log; exit 1; }
phase "the pristine Debian"
# The Debian packages (deploy/package.sh: its own build folder), the upgrade's (the same, another version), and their
# install into the pristine Debian (PackageInstallTests).
export BEACONMESH_PACKAGE_SCRATCH="$PWD/.build/package"
rm -rf .build/packages .build/packages-upgrade
deploy/package.sh --out .build/packages --compression gzip
version="$(dpkg-deb -f .build/packages/beaconmesh-scanner_*.deb Version)"
deploy/package.sh --out .build/packages-upgrade --package-version "$version+upgrade" --compression gzip
phase "the Debian packages"
BEACONMESH_PACKAGES="$PWD/.build/packages" BEACONMESH_PACKAGES_UPGRADE="$PWD/.build/packages-upgrade" \
  swift test --skip-build --filter "$package_test"
phase "their install into a pristine Debian"
