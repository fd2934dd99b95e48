#!/usr/bin/env bash
# Runs the whole mesh on this machine: the broker (mosquitto.conf, port 1884), the coordinator with the demo config
# (deploy/demo), simulated scanners in San Francisco's three departments, one phone-only member (Mia: no beacon, heard
# only through her simulated phone app ranging the departments), the web dashboard (BEACONMESH_DASHBOARD, default
# 127.0.0.1:8080, with the store's analytics from the coordinator's database) and the monitor of store 1.
# Logs go to .mesh/. Ctrl-C (or q in the monitor) stops everything.
# BEACONMESH_RUN_FOR=SECONDS stops it by itself after that long (used by the tests); BEACONMESH_BIN=DIR runs the
# programs built there instead of building (the tests, whose build is in use).
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh demo
if [ -n "${BEACONMESH_BIN:-}" ]; then
  bin=$BEACONMESH_BIN
else
  swift build 2>&1 | tail -1
  bin=$(swift build --show-bin-path)
fi
mkdir -p .mesh
broker=mqtt://127.0.0.1:1884

pids=()        # the clients: coordinator, scanners and the phone
broker_pid=""  # the broker this script started, if any
# Clients first, and wait for them: scanners flush their queued batches and say `offline`, the coordinator saves its
# visits, all through the broker. Only then the broker.
stop() {
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "$broker_pid" ]; then
    kill -TERM "$broker_pid" 2>/dev/null || true
    wait "$broker_pid" 2>/dev/null || true
  fi
}
trap stop EXIT INT TERM

if (exec 3<>/dev/tcp/127.0.0.1/1884) 2>/dev/null; then
  echo "A broker already listens on 127.0.0.1:1884; using it." >&2
else
  # In a session of its own, so that Ctrl-C on the terminal does not reach it at the same time as the clients.
  setsid mosquitto -c mosquitto.conf 2>.mesh/mosquitto.log & broker_pid=$!
  for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/1884) 2>/dev/null && break; sleep 0.1; done
fi

"$bin/beacon-coordinator" run --config deploy/demo/coordinator.yaml 2>.mesh/coordinator.log & pids+=($!)
for department in 10 20 30; do
  "$bin/beacon-scanner" --store 1 --department "$department" --source sim --sim-route 10,20,30 --broker "$broker" \
    2>".mesh/scanner-$department.log" & pids+=($!)
done
# Mia walks the store with her phone: the offers and check-ins it prints, and its log, go to .mesh/phone-mia.log.
"$bin/beacon-phone" --member mia --store 1 --route 10,20,30 --dwell 20s --loop --broker "$broker" \
  >.mesh/phone-mia.log 2>&1 & pids+=($!)

dashboard=${BEACONMESH_DASHBOARD:-127.0.0.1:8080}
# With the coordinator's database (--db): the store's analytics page fills up as the simulated shoppers come and go.
"$bin/beacon-dashboard" --broker "$broker" --listen "$dashboard" --db .mesh/beaconmesh.sqlite \
  >.mesh/dashboard.out 2>.mesh/dashboard.log & pids+=($!)
for _ in $(seq 50); do grep -q "serving" .mesh/dashboard.out 2>/dev/null && break; sleep 0.1; done
if grep -q "serving" .mesh/dashboard.out 2>/dev/null; then
  echo "Dashboard: http://$dashboard/ (store 1: http://$dashboard/stores/1, its analytics: http://$dashboard/stores/1/analytics?from=$(date -d today +%Y-%m-%d)); coordinator metrics: http://127.0.0.1:9464/metrics" >&2
else
  echo "The dashboard did not start on $dashboard (see .mesh/dashboard.log); set BEACONMESH_DASHBOARD=HOST:PORT to move it." >&2
fi
echo "Mesh running. Watch the traffic with: mosquitto_sub -p 1884 -v -t 'beaconmesh/v1/#'" >&2
monitor=("$bin/beacon-monitor" --store 1 --broker "$broker")
if [ -n "${BEACONMESH_RUN_FOR:-}" ]; then
  timeout --signal=TERM "$BEACONMESH_RUN_FOR" "${monitor[@]}" --plain || true
else
  "${monitor[@]}"
fi
