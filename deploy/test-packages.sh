#!/usr/bin/env bash
# Installs the Debian packages of deploy/package.sh the way a store's IT would, into pristine Debian 12 trees
# (debootstrap --variant=minbase from the archive in /etc/apt/sources.list.d, chroots in a temporary folder; the first
# tree made is kept as .build/debootstrap/bookworm-minbase-<arch>.tar, so a second run starts in seconds), and reports
# what it saw as `key: value` lines on standard output for PackageInstallTests to check:
#
#   deploy/test-packages.sh --packages DIR --upgrade DIR --work DIR --broker-port PORT --dashboard-port PORT
#                           [--broker-directory DIR]
#   deploy/test-packages.sh --base-only      (only make the cached tree)
#
#   --packages DIR        beaconmesh-scanner_*.deb and beaconmesh-server_*.deb, installed first
#   --upgrade DIR         the same packages with a higher version: installed over the first (the upgrade)
#   --work DIR            the test's files: scanner.yaml and coordinator.yaml (the "edited" configs, written over the
#                         installed ones), members.csv and capture.btsnoop (copied to /var/lib/beaconmesh)
#   --broker-port PORT    the test's broker on 127.0.0.1 (outside the chroots: they share this network)
#   --dashboard-port PORT where the server chroot's dashboard listens on 127.0.0.1
#   --broker-directory DIR the broker's folder (its mosquitto.conf): run at the idle scheduling class (run-tests.sh),
#                         the greeting's few seconds (that broker, the coordinator, dashboard and scanner) leave it
#
# One tree per package (what each one pulls in is measured on its own). In the server's, the coordinator runs as the
# beaconmesh user with the edited coordinator.yaml; in the scanner's, beacon-scanner --config replays the capture to
# the broker, and the report has the coordinator's first arrived event. Then: the upgrade, apt remove, apt purge.
# /proc is mounted into each tree while it is used and unmounted on every way out. Needs root, debootstrap, mosquitto
# clients, curl and lintian (deploy/install-deps.sh tests).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
packages="" upgrade="" work="" broker_port="" dashboard_port="" broker_directory="" base_only=false
usage() { echo "test-packages: $1 (see the top of deploy/test-packages.sh)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --packages|--upgrade|--work|--broker-port|--dashboard-port|--broker-directory)
      [ $# -ge 2 ] || usage "$1 needs a value"
      case "$1" in
        --packages) packages="$2" ;; --upgrade) upgrade="$2" ;; --work) work="$2" ;;
        --broker-port) broker_port="$2" ;; --dashboard-port) dashboard_port="$2" ;;
        --broker-directory) broker_directory="$2" ;;
      esac
      shift 2 ;;
    --base-only) base_only=true; shift ;;
    *) usage "unknown argument $1" ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "test-packages: debootstrap and chroot need root" >&2; exit 1; }
if ! $base_only; then
  for value in packages upgrade work broker_port dashboard_port; do [ -n "${!value}" ] || usage "--${value/_/-} is missing"; done
fi

arch="$(dpkg --print-architecture)"
cache="$repo/.build/debootstrap"
base="$cache/bookworm-minbase-$arch.tar"
mirror="$(sed -n 's#^URIs: *\(http[^ ]*/debian\)/\{0,1\}$#\1#p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)"
mirror="${mirror:-http://deb.debian.org/debian}"
temporary="$(mktemp -d "${TMPDIR:-/tmp}/beaconmesh-chroots.XXXXXX")"
trees=()
pids=()
# Every way out: stop what runs in the trees, unmount their /proc, then (only then) remove them.
cleanup() {
  local pid tree
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for tree in "${trees[@]}"; do
    if mountpoint -q "$tree/proc"; then umount "$tree/proc" || umount -l "$tree/proc"; fi
  done
  for tree in "${trees[@]}"; do mountpoint -q "$tree/proc" && return 0; done
  rm -rf --one-file-system "$temporary"
}
trap cleanup EXIT
trap 'exit 143' TERM INT
report() { printf '%s: %s\n' "$1" "$2"; }
started=$SECONDS
seconds() { echo $((SECONDS - started)); started=$SECONDS; }

# 1. The pristine tree, made once.
if [ ! -s "$base" ]; then
  mkdir -p "$cache"
  debootstrap --variant=minbase bookworm "$temporary/base" "$mirror" > "$temporary/debootstrap.log" 2>&1 \
    || { tail -20 "$temporary/debootstrap.log" >&2; echo "test-packages: debootstrap failed" >&2; exit 1; }
  # The same archive as this machine (the release, its updates and security), its lists fetched once.
  rm -f "$temporary/base/etc/apt/sources.list"
  for file in /etc/apt/sources.list.d/*.sources; do
    grep -q 'deb.debian.org' "$file" && cp "$file" "$temporary/base/etc/apt/sources.list.d/"
  done
  cp /etc/resolv.conf "$temporary/base/etc/resolv.conf"
  chroot "$temporary/base" apt-get update -qq > "$temporary/update.log" 2>&1 \
    || { cat "$temporary/update.log" >&2; exit 1; }
  tar -C "$temporary/base" -cf "$base.partial" . && mv "$base.partial" "$base"
  rm -rf --one-file-system "$temporary/base"
  report base-made-seconds "$(seconds)"
fi
report base-tarball-bytes "$(stat -c %s "$base")"
$base_only && exit 0

# tree NAME: a fresh pristine tree with /proc mounted; prints its path.
tree() {
  local root="$temporary/$1"
  mkdir -p "$root"
  tar -C "$root" -xf "$base"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  trees+=("$root")
  mount -t proc proc "$root/proc"
  # The lists in the cached tree may be older than the archive's files.
  inside "$root" apt-get update -qq > "$root.update.log" 2>&1 || { cat "$root.update.log" >&2; exit 1; }
}
# in TREE COMMAND...: runs COMMAND in the tree as root, without a terminal or questions.
inside() {
  local root="$1"
  shift
  DEBIAN_FRONTEND=noninteractive chroot "$root" "$@" < /dev/null
}
# apt_install TREE DEB: apt install ./DEB in the tree, as IT would; the packages it pulled in, one line.
apt_install() {
  local root="$1" deb="$2" name
  name="$(basename "$deb")"
  cp "$deb" "$root/tmp/$name"
  inside "$root" apt-get install -y -q "/tmp/$name" > "$root.apt.log" 2>&1 || { cat "$root.apt.log" >&2; exit 1; }
  rm -f "$root/tmp/$name"
}
packages_of() { inside "$1" dpkg-query -W -f='${binary:Package} ${Status}\n' | awk '$NF == "installed" {print $1}' | sed 's/:.*//' | sort; }
kilobytes() { inside "$1" apt-get clean; du -skx "$1" | cut -f1; }
one() { local found=("$1"/$2); [ -e "${found[0]}" ] || usage "no $2 in $1"; echo "${found[0]}"; }

# 2. lintian on both packages: no error (warnings are listed too).
started=$SECONDS
lintian --tag-display-limit 0 "$(one "$packages" "beaconmesh-scanner_*.deb")" "$(one "$packages" "beaconmesh-server_*.deb")" \
  > "$temporary/lintian.log" 2>&1 || true
report lintian-seconds "$(seconds)"
report lintian-errors "$(grep -c '^E: ' "$temporary/lintian.log" || true)"
report lintian "$(grep -E '^(E|W): ' "$temporary/lintian.log" | tr '\n' '|')"

# 3. Each package into a tree of its own: what it pulls in, what it adds to the disk, its user and configs.
for role in scanner server; do
  deb="$(one "$packages" "beaconmesh-${role}_*.deb")"
  root="$temporary/$role"
  tree "$role"
  before_packages="$(packages_of "$root")"
  before_kb="$(kilobytes "$root")"
  started=$SECONDS
  apt_install "$root" "$deb"
  report "$role-install-seconds" "$(seconds)"
  after_kb="$(kilobytes "$root")"
  report "$role-deb-bytes" "$(stat -c %s "$deb")"
  report "$role-installed-kb" "$((after_kb - before_kb))"
  report "$role-installed-size-field-kb" "$(dpkg-deb -f "$deb" Installed-Size)"
  report "$role-depends" "$(dpkg-deb -f "$deb" Depends)"
  report "$role-added" "$(comm -13 <(echo "$before_packages") <(packages_of "$root") | tr '\n' ' ')"
  report "$role-conffiles" "$(inside "$root" dpkg-query -W -f='${Conffiles}' "beaconmesh-$role" | tr -d '\n')"
  report "$role-user" "$(inside "$root" getent passwd beaconmesh || true)"
done
for program in beacon-scanner; do report "$program-version" "$(inside "$temporary/scanner" "$program" --version 2>&1 | tr '\n' '|')"; done
for program in beacon-coordinator beacon-dashboard beacon-monitor; do
  report "$program-version" "$(inside "$temporary/server" "$program" --version 2>&1 | tr '\n' '|')"
done
report scanner-config-installed "$(inside "$temporary/scanner" ls /etc/beaconmesh/scanner | tr '\n' ' ')"
report server-config-installed "$(inside "$temporary/server" ls /etc/beaconmesh | tr '\n' ' ')"

# 4. The store's IT edits the configs; the coordinator greets the member whose beacon the node replays.
scanner="$temporary/scanner" server="$temporary/server"
cp "$work/scanner.yaml" "$scanner/etc/beaconmesh/scanner/node.yaml"
cp "$work/coordinator.yaml" "$server/etc/beaconmesh/coordinator.yaml"
cp "$work/capture.btsnoop" "$scanner/var/lib/beaconmesh-capture.btsnoop"
inside "$server" install -m 640 -o beaconmesh -g beaconmesh /dev/null /var/lib/beaconmesh/members.csv
cp "$work/members.csv" "$server/var/lib/beaconmesh/members.csv"
scanner_sum="$(sha256sum < "$scanner/etc/beaconmesh/scanner/node.yaml")"
server_sum="$(sha256sum < "$server/etc/beaconmesh/coordinator.yaml")"
events="$temporary/events.log"
lift=()
if chrt -p $$ | grep -q SCHED_IDLE; then
  lift=(chrt --other 0)
  if [ -n "$broker_directory" ]; then
    for process in /proc/[0-9]*; do
      if tr '\0' ' ' < "$process/cmdline" 2>/dev/null | grep -q -F "$broker_directory/mosquitto.conf"; then
        chrt --other -p 0 "${process#/proc/}" || true
      fi
    done
  fi
fi
"${lift[@]}" mosquitto_sub -h 127.0.0.1 -p "$broker_port" -t 'beaconmesh/v1/stores/1/events' -v -q 1 > "$events" 2>&1 & pids+=($!)
# As the unit runs it: the beaconmesh user, in /var/lib/beaconmesh.
(cd "$server" && DEBIAN_FRONTEND=noninteractive exec "${lift[@]}" chroot --userspec=beaconmesh:beaconmesh "$server" \
  /bin/sh -c 'cd /var/lib/beaconmesh && exec beacon-coordinator run --config /etc/beaconmesh/coordinator.yaml') \
  > "$temporary/coordinator.log" 2>&1 & pids+=($!)
"${lift[@]}" chroot --userspec=beaconmesh:beaconmesh "$server" beacon-dashboard --broker "mqtt://127.0.0.1:$broker_port" \
  --listen "127.0.0.1:$dashboard_port" > "$temporary/dashboard.log" 2>&1 & pids+=($!)
for _ in $(seq 150); do grep -q "coordinator running" "$temporary/coordinator.log" && break; sleep 0.1; done
# The node starts; the seconds until the coordinator's first greeting; then the node's replay ends (exit 0).
scanner_started="$(date +%s%N)"
"${lift[@]}" chroot --userspec=beaconmesh:beaconmesh "$scanner" beacon-scanner --config /etc/beaconmesh/scanner/node.yaml \
  > "$temporary/scanner.log" 2>&1 < /dev/null & node=$!
for _ in $(seq 300); do grep -q '"type":"arrived"' "$events" && break; sleep 0.1; done
grep -q '"type":"arrived"' "$events" \
  && report greeting-seconds "$(awk -v from="$scanner_started" -v to="$(date +%s%N)" 'BEGIN { printf "%.1f", (to - from) / 1e9 }')"
report greeting "$(grep -m1 '"type":"arrived"' "$events" || echo none)"
node_status=0
wait "$node" || node_status=$?
report scanner-exit "$node_status"
[ "$node_status" -eq 0 ] || report scanner-log "$(tail -3 "$temporary/scanner.log" | tr '\n' '|')"
healthz="none"
for _ in $(seq 50); do healthz="$(curl -s -m 2 "http://127.0.0.1:$dashboard_port/healthz" 2>/dev/null)" && break; sleep 0.1; done
report healthz "$(echo "$healthz" | tr '\n' ' ')"
for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
pids=()
if [ "$(grep -c . "$temporary/coordinator.log")" -gt 0 ] && ! grep -q '"type":"arrived"' "$events"; then
  report coordinator-log "$(tail -5 "$temporary/coordinator.log" | tr '\n' '|')"
  report scanner-log "$(tail -5 "$temporary/scanner.log" | tr '\n' '|')"
fi

# 5. An unattended upgrade keeps the edits, without a question; so does apt remove; apt purge removes the configs.
for role in scanner server; do
  root="$temporary/$role"
  started=$SECONDS
  apt_install "$root" "$(one "$upgrade" "beaconmesh-${role}_*.deb")"
  report "$role-upgrade-seconds" "$(seconds)"
  report "$role-upgraded-version" "$(inside "$root" dpkg-query -W -f='${Version}' "beaconmesh-$role")"
done
report scanner-config-after-upgrade "$([ "$(sha256sum < "$scanner/etc/beaconmesh/scanner/node.yaml")" = "$scanner_sum" ] && echo kept || echo changed)"
report server-config-after-upgrade "$([ "$(sha256sum < "$server/etc/beaconmesh/coordinator.yaml")" = "$server_sum" ] && echo kept || echo changed)"
report scanner-version-after-upgrade "$(inside "$scanner" beacon-scanner --version 2>&1 | tr '\n' '|')"
for role in scanner server; do
  inside "$temporary/$role" apt-get remove -y -q "beaconmesh-$role" > "$temporary/$role-remove.log" 2>&1 \
    || { cat "$temporary/$role-remove.log" >&2; exit 1; }
done
report scanner-config-after-remove "$([ -e "$scanner/etc/beaconmesh/scanner/node.yaml" ] && [ "$(sha256sum < "$scanner/etc/beaconmesh/scanner/node.yaml")" = "$scanner_sum" ] && echo kept || echo gone)"
report server-config-after-remove "$([ -e "$server/etc/beaconmesh/coordinator.yaml" ] && [ "$(sha256sum < "$server/etc/beaconmesh/coordinator.yaml")" = "$server_sum" ] && echo kept || echo gone)"
report scanner-program-after-remove "$([ -e "$scanner/usr/bin/beacon-scanner" ] && echo present || echo gone)"
for role in scanner server; do
  inside "$temporary/$role" apt-get purge -y -q "beaconmesh-$role" > "$temporary/$role-purge.log" 2>&1 \
    || { cat "$temporary/$role-purge.log" >&2; exit 1; }
  report "$role-etc-after-purge" "$(inside "$temporary/$role" sh -c 'ls -A /etc/beaconmesh 2>/dev/null || echo gone' | tr '\n' ' ')"
  report "$role-user-after-purge" "$(inside "$temporary/$role" sh -c 'getent passwd beaconmesh >/dev/null && passwd -S beaconmesh || echo gone')"
done
report server-state-after-purge "$([ -e "$server/var/lib/beaconmesh" ] && echo present || echo gone)"
