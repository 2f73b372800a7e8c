#!/usr/bin/env bash
# Installs schemathesis (the API fuzzer of tools/api-fuzz.sh) from PyPI into a virtual
# environment of its own, .build-tools/schemathesis (ignored by git), at a pinned version.
# Idempotent: nothing is fetched when that version is there already. Needs python3 with venv
# (tools/setup.sh installs python3; Debian's venv module is python3-venv). Prints the venv's path.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=4.32.5
VENV=${SCANOUT_SCHEMATHESIS_VENV:-"$PWD/.build-tools/schemathesis"}
if [[ -x $VENV/bin/st ]] && [[ $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null) == "$VERSION" ]]; then
  echo "$VENV"
  exit 0
fi
python3 -m venv "$VENV" >&2 || { echo "setup-schemathesis: python3 -m venv failed (install python3-venv)" >&2; exit 1; }
"$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$VERSION" >&2
echo "$VENV"
