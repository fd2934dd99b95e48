#!/usr/bin/env bash
# Installs the dashboard web files' linter (deploy/lint-web.py) into a virtual environment of its own in
# .build/weblint: html5lib (HTML, parsed as browsers do, any parse error fails), tinycss2 (CSS) and esprima (a
# JavaScript parser in pure Python, so no Node.js). Pinned, pure Python wheels, a few seconds; safe to run again:
# it installs nothing that is already there. Needs python3-venv (deploy/install-deps.sh tests installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/weblint
pins=(html5lib==1.1 tinycss2==1.5.1 esprima==4.0.1)
if [ -x "$venv/bin/python" ] && "$venv/bin/python" - "${pins[@]}" <<'PY' 2>/dev/null; then
import importlib.metadata as m, sys
sys.exit(0 if all(m.version(n) == v for n, v in (p.split("==") for p in sys.argv[1:])) else 1)
PY
  exit 0
fi
echo "Installing the web files' linter (${pins[*]}) into $venv" >&2
mkdir -p .build
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}"
