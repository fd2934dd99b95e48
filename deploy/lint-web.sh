#!/usr/bin/env bash
# Lints the dashboard's HTML, CSS and JavaScript (Sources/BeaconMeshDashboard/Web, or the files given) with
# deploy/lint-web.py, installing its parsers first when they are missing (deploy/install-weblint.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-weblint.sh
exec .build/weblint/bin/python deploy/lint-web.py "$@"
