#!/usr/bin/env bash
# Installs, when missing, the Debian packages one role of BeaconMesh needs, and nothing more:
#
#   deploy/install-deps.sh ROLE...    (several roles: what each needs)
#
#   build    what `swift build` compiles and links against: the C libraries' -dev packages and pkg-config
#   node     what a department node's beacon-scanner runs with (built from source; the .deb pulls these in itself)
#   server   what the back office runs with: the coordinator's, dashboard's and monitor's libraries, the store's
#            broker (mosquitto) and openssl for deploy/make-certificates.sh
#   demo     the README's mesh on this machine (deploy/run-mesh.sh): build, the broker and its command-line clients
#   package  deploy/package.sh: build and dpkg-dev (dpkg-shlibdeps, dpkg-deb)
#   tests    the whole test suite (deploy/run-tests.sh): all of the above and the tests' own tools (Chromium,
#            PostgreSQL, Prometheus, debootstrap, lintian, ...)
#
# Swift itself is the one prerequisite of build, demo, package and tests (README: "Before you start"). Safe to run
# again: it installs nothing that is already there. A bad role exits 2 with one line.
set -euo pipefail

# Each role's own packages; a role also gets the roles it names in `includes`.
build=(pkg-config libmosquitto-dev libbluetooth-dev libjson-c-dev libsqlite3-dev libncurses-dev)
# beacon-scanner links libbluetooth, libmosquitto and json-c (libssl comes with libmosquitto).
node=(libbluetooth3 libmosquitto1 libjson-c5)
# The coordinator and dashboard link libmosquitto, json-c and SQLite (GRDB); the monitor ncurses.
server=(libmosquitto1 libjson-c5 libsqlite3-0 libncursesw6 mosquitto openssl)
demo=(mosquitto mosquitto-clients)
package=(dpkg-dev)
# The tests: the broker's clients drive the programs (mosquitto_pub/_sub), tmux the monitor's screen, sqlite3 and
# openssl look at what the programs wrote, python3 and imagemagick the fixtures and screenshots.
tests=(mosquitto mosquitto-clients tmux sqlite3 openssl python3 imagemagick)
# The dashboard's sign-in tests speak HTTP(S) with curl (cookies, Basic, a test CA, streams cut after a few seconds).
tests+=(curl)
# The erasure tests look at the SQLite file as a data-protection officer would, with `strings`.
tests+=(binutils)
# The dashboard's end-to-end tests drive Debian's headless Chromium through chromedriver (WebDriver); the fallback
# font draws CJK names (李小龍) in its screenshots.
tests+=(chromium chromium-driver fonts-droid-fallback)
# A chain's shared registry runs on PostgreSQL: the registry tests and the chain's end-to-end tests start their own
# server (initdb and pg_ctl as the postgres user, in a temporary folder); pg_dump checks what `forget` leaves.
tests+=(postgresql)
# The dashboard's API test runs schemathesis (PyPI) from a virtual environment (deploy/install-schemathesis.sh).
tests+=(python3-venv)
# promtool (in Debian's prometheus package) checks the Prometheus example and unit-tests the alert rules.
tests+=(prometheus)
# The package tests: a pristine Debian made with debootstrap, the packages installed into it with apt; lintian.
tests+=(debootstrap lintian)

usage() { echo "install-deps: $1 (usage: deploy/install-deps.sh build|node|server|demo|package|tests ...)" >&2; exit 2; }
[ $# -ge 1 ] || usage "name a role"
packages=()
needs_swift=false
add_role() {
  case "$1" in
    build) packages+=("${build[@]}"); needs_swift=true ;;
    node) packages+=("${node[@]}") ;;
    server) packages+=("${server[@]}") ;;
    demo) add_role build; packages+=("${demo[@]}") ;;
    package) add_role build; packages+=("${package[@]}") ;;
    tests) add_role build; add_role node; add_role server; add_role demo; add_role package; packages+=("${tests[@]}") ;;
    *) usage "unknown role $1" ;;
  esac
}
for role in "$@"; do add_role "$role"; done

if $needs_swift && ! command -v swift >/dev/null 2>&1; then
  echo "BeaconMesh needs the Swift 6 toolchain (swift 6.1 or newer) on the PATH; see README.md, 'Before you start'." >&2
  exit 1
fi

missing=()
for package in $(printf '%s\n' "${packages[@]}" | sort -u); do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing: ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "Please run as root or install sudo: apt-get install ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
