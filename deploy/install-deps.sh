#!/usr/bin/env bash
# Installs what BeaconMesh builds, runs and tests with, when it is missing: the C libraries (-dev packages),
# the mosquitto broker and its command-line clients, tmux, sqlite3 and PostgreSQL. Swift itself is the one prerequisite
# (README: "Before you start"). Safe to run again: it installs nothing that is already there.
set -euo pipefail

packages=(pkg-config libmosquitto-dev libbluetooth-dev libjson-c-dev libsqlite3-dev libncurses-dev
          mosquitto mosquitto-clients tmux sqlite3 openssl python3 imagemagick)
# The dashboard's sign-in tests speak HTTP(S) with curl (cookies, Basic, a test CA, streams cut after a few seconds).
packages+=(curl)
# The erasure tests look at the SQLite file as a data-protection officer would, with `strings`.
packages+=(binutils)
# The dashboard's end-to-end tests drive Debian's headless Chromium through chromedriver (WebDriver); the fallback
# font draws CJK names (李小龍) in its screenshots.
packages+=(chromium chromium-driver fonts-droid-fallback)
# A chain's shared registry runs on PostgreSQL: the registry tests and the chain's end-to-end tests start their own
# server (initdb and pg_ctl as the postgres user, in a temporary folder); pg_dump checks what `forget` leaves.
packages+=(postgresql)
# The dashboard's API test runs schemathesis (PyPI) from a virtual environment (deploy/install-schemathesis.sh).
packages+=(python3-venv)
# promtool (in Debian's prometheus package) checks the Prometheus example and unit-tests the alert rules.
packages+=(prometheus)

if ! command -v swift >/dev/null 2>&1; then
  echo "BeaconMesh needs the Swift 6 toolchain (swift 6.1 or newer) on the PATH; see README.md, 'Before you start'." >&2
  exit 1
fi

missing=()
for package in "${packages[@]}"; do
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
