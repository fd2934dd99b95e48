#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, builds, and runs every test target (unit tests of the
# pure Core, the wire codec, the MQTT client against a real mosquitto, the BLE captures, and the end-to-end tests
# that drive the real programs with mosquitto_pub/mosquitto_sub).
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
swift build --build-tests
swift test
