#!/usr/bin/env bash
# Installs schemathesis (PyPI), which the dashboard's API test runs against /api/openapi.json, into a virtual
# environment of its own in .build/schemathesis (nothing goes into the system's Python). Pinned; safe to run again:
# it installs nothing that is already there. Needs python3-venv (deploy/install-deps.sh tests installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
version=4.32.5
venv=.build/schemathesis
if [ -x "$venv/bin/st" ] && [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null)" = "$version" ]; then
  exit 0
fi
echo "Installing schemathesis $version into $venv" >&2
mkdir -p .build
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version"
