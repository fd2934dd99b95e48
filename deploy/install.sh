#!/usr/bin/env bash
# Installs BeaconMesh on a Raspberry Pi OS / Debian machine: release binaries, systemd units, example configs
# under /etc/beaconmesh, the `beaconmesh` service user; with --broker also the production mosquitto profile.
#
#   sudo deploy/install.sh [--role node|server|all] [--broker] [--prefix DIR] [--bin DIR] [--dry-run]
#
#   --role ROLE   node: a department node (beacon-scanner and its unit); server: the back office (coordinator,
#                 dashboard, monitor, their units, coordinator.yaml); all (the default): both. The runtime libraries
#                 of the role come too (deploy/install-deps.sh ROLE), and with a build from source what it compiles with
#   --broker      also install deploy/broker/mosquitto-production.conf as /etc/mosquitto/mosquitto.conf (the original
#                 is kept as mosquitto.conf.orig) and the bridge example (for the machine that runs the store's broker)
#   --prefix DIR  where programs go (default /usr/local: bin/, share/doc/beaconmesh/)
#   --bin DIR     install the programs found in DIR instead of building them (swift build -c release)
#   --dry-run     print what would be done, do nothing
#   DESTDIR=DIR   stage everything under DIR (for packaging, or to look first): no user, no systemctl, no chown
#
# Safe to run again: programs, units and docs are replaced; configs you have edited are never overwritten.
# On Debian 12/13 or Raspberry Pi OS (64-bit) the packages do the same without a toolchain on the machine:
# deploy/package.sh, then apt install ./beaconmesh-scanner_….deb or ./beaconmesh-server_….deb (deploy/README.md).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix=/usr/local
bin=""
broker=false
dry=false
destdir="${DESTDIR:-}"
role=all
usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --role) [ $# -ge 2 ] || usage; role="$2"; shift 2 ;;
    --broker) broker=true; shift ;;
    --prefix) [ $# -ge 2 ] || usage; prefix="$2"; shift 2 ;;
    --bin) [ $# -ge 2 ] || usage; bin="$2"; shift 2 ;;
    --dry-run) dry=true; shift ;;
    -h|--help) usage ;;
    *) echo "install: unknown argument $1" >&2; usage ;;
  esac
done
case "$role" in
  node) roles=(node); programs=(beacon-scanner); units=("beacon-scanner@.service") ;;
  server) roles=(server); programs=(beacon-coordinator beacon-monitor beacon-dashboard) ;;
  all) roles=(node server); programs=(beacon-scanner beacon-coordinator beacon-monitor beacon-dashboard) ;;
  *) echo "install: --role is node, server or all, not $role" >&2; exit 2 ;;
esac
if [ "$role" != node ]; then
  units=()
  [ "$role" = all ] && units+=("beacon-scanner@.service")
  units+=(beacon-coordinator.service beacon-dashboard.service beaconmesh-registry-purge.service beaconmesh-registry-purge.timer)
fi

# run COMMAND...: does it, or with --dry-run only says it.
run() {
  if $dry; then printf 'would run:'; printf ' %q' "$@"; printf '\n'; else "$@"; fi
}
# system COMMAND...: like run, but only on the real system (not when staging into DESTDIR).
system() {
  if [ -n "$destdir" ]; then printf 'skipped (DESTDIR is set):'; printf ' %q' "$@"; printf '\n'; else run "$@"; fi
}
# config SOURCE TARGET MODE: installs an example config unless TARGET exists (it may hold the user's edits).
config() {
  if [ -e "$2" ]; then echo "kept $2 (exists)"; else run install -D -m "$3" "$1" "$2"; fi
}

if [ -z "$destdir" ] && ! $dry && [ "$(id -u)" -ne 0 ]; then
  echo "install: run as root (sudo deploy/install.sh), or stage with DESTDIR=DIR or look with --dry-run" >&2
  exit 1
fi

# 1. The programs, built in release mode unless --bin names them.
if [ -z "$bin" ]; then
  command -v swift >/dev/null || { echo "install: swift is not on the PATH; see README.md, 'Before you start'" >&2; exit 1; }
  run "$repo/deploy/install-deps.sh" build
  for program in "${programs[@]}"; do
    run swift build --package-path "$repo" -c release --product "$program"
  done
  if $dry; then bin="$repo/.build/release"; else bin="$(swift build --package-path "$repo" -c release --show-bin-path)"; fi
fi
if ! $dry; then
  for program in "${programs[@]}"; do
    [ -x "$bin/$program" ] || { echo "install: $bin/$program is missing; build it first (swift build -c release)" >&2; exit 1; }
  done
fi
for program in "${programs[@]}"; do
  run install -D -m 755 "$bin/$program" "$destdir$prefix/bin/$program"
done

# The libraries the programs run with (not when staging: that machine may be another).
system "$repo/deploy/install-deps.sh" "${roles[@]}"

# 2. The service user: no login, no home of its own beyond the coordinator's state directory.
if ! getent passwd beaconmesh >/dev/null 2>&1; then
  system useradd --system --user-group --home-dir /var/lib/beaconmesh --no-create-home --shell /usr/sbin/nologin beaconmesh
fi

# 3. systemd units (ExecStart follows --prefix).
for unit in "${units[@]}"; do
  if $dry; then
    echo "would install $destdir/etc/systemd/system/$unit (ExecStart in $prefix/bin)"
  else
    install -d -m 755 "$destdir/etc/systemd/system"
    sed "s#/usr/local/bin/#$prefix/bin/#g" "$repo/deploy/systemd/$unit" > "$destdir/etc/systemd/system/$unit"
    chmod 644 "$destdir/etc/systemd/system/$unit"
  fi
done

# 4. Configuration folders and examples. Credentials and TLS keys never go in here from the repository.
run install -d -m 755 "$destdir/etc/beaconmesh" "$destdir/etc/beaconmesh/scanner" "$destdir/etc/beaconmesh/examples"
run install -d -m 711 "$destdir/etc/beaconmesh/credentials"
run install -d -m 755 "$destdir/etc/beaconmesh/tls"
run install -m 644 "$repo/deploy/examples/scanner.yaml" "$repo/deploy/examples/coordinator.yaml" "$destdir/etc/beaconmesh/examples/"
if [ "$role" != node ]; then
  config "$repo/deploy/examples/coordinator.yaml" "$destdir/etc/beaconmesh/coordinator.yaml" 640
  system chgrp beaconmesh /etc/beaconmesh/coordinator.yaml
fi

# 5. Documentation.
run install -D -m 644 "$repo/README.md" "$destdir$prefix/share/doc/beaconmesh/README.md"
run install -D -m 644 "$repo/deploy/README.md" "$destdir$prefix/share/doc/beaconmesh/deployment.md"

# 6. The broker (only where the store's mosquitto runs).
if $broker; then
  run install -d -m 755 "$destdir/etc/beaconmesh/broker"
  if [ -e "$destdir/etc/mosquitto/mosquitto.conf" ] && [ ! -e "$destdir/etc/mosquitto/mosquitto.conf.orig" ]; then
    run cp -p "$destdir/etc/mosquitto/mosquitto.conf" "$destdir/etc/mosquitto/mosquitto.conf.orig"
  fi
  run install -D -m 644 "$repo/deploy/broker/mosquitto-production.conf" "$destdir/etc/mosquitto/mosquitto.conf"
  run install -m 644 "$repo/deploy/bridge/store-bridge.conf" "$destdir/etc/beaconmesh/examples/store-bridge.conf"
fi

system systemctl daemon-reload

cat <<NEXT

BeaconMesh is installed${destdir:+ under $destdir}. What to edit next (deploy/README.md explains each step):
NEXT
if $broker; then cat <<NEXT
  On this broker machine:
    deploy/make-certificates.sh <broker host name> <broker IP>        # TLS certificate, into /etc/beaconmesh/tls
    beacon-coordinator provision node --store 1 --department 10        # one per scanner node
    beacon-coordinator provision coordinator --id backoffice-1 --store 1
    beacon-coordinator provision monitor --store 1
    beacon-coordinator provision dashboard                             # read-only, every store (head office)
    systemctl restart mosquitto
NEXT
fi
cat <<NEXT
  On a scanner node (one per department):
    cp /etc/beaconmesh/examples/scanner.yaml /etc/beaconmesh/scanner/dept10.yaml   # set store, department, broker
    copy its credential to /etc/beaconmesh/credentials/ (owner beaconmesh, mode 0600) and ca.pem to /etc/beaconmesh/tls/
    systemctl enable --now beacon-scanner@dept10
  In the back office:
    edit /etc/beaconmesh/coordinator.yaml (broker, stores, departments, promos)
    systemctl enable --now beacon-coordinator
  The web dashboard (sign-in and HTTPS; deploy/README.md, "The dashboard"):
    beacon-dashboard users add NAME --stores 1 --file /etc/beaconmesh/dashboard-users.yaml   # one per person
    deploy/make-certificates.sh --dashboard <dashboard host name>
    systemctl enable --now beacon-dashboard
  Logs: journalctl -u beacon-coordinator -u beacon-dashboard -u 'beacon-scanner@*'
NEXT
