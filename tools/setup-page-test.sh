#!/usr/bin/env bash
# Installs what tools/page-test.py drives the management page with, from PyPI into a virtual
# environment of its own, .build-tools/page-test (ignored by git), at pinned versions: selenium
# (which talks to Debian's chromium-driver), axe-selenium-python (which runs axe-core, the
# accessibility checker, in the page; it carries axe-core 3.1) and axe-core-python (for the
# axe-core 4.4 script it carries: the newer rules). Idempotent: nothing is fetched when those
# versions are there already. Needs python3 with venv (tools/setup.sh installs python3-venv,
# chromium and chromium-driver). Prints the venv's path.
set -euo pipefail
cd "$(dirname "$0")/.."
SELENIUM=4.51.0
AXE=2.1.6
AXE_CORE=0.1.0
VENV=${SCANOUT_PAGE_TEST_VENV:-"$PWD/.build-tools/page-test"}
installed() {
  "$VENV/bin/python" -c 'import importlib.metadata as m, sys; print(m.version(sys.argv[1]))' "$1" 2>/dev/null
}
if [[ -x $VENV/bin/python ]] && [[ $(installed selenium) == "$SELENIUM" ]] && [[ $(installed axe-selenium-python) == "$AXE" ]] \
   && [[ $(installed axe-core-python) == "$AXE_CORE" ]]; then
  echo "$VENV"
  exit 0
fi
python3 -m venv "$VENV" >&2 || { echo "setup-page-test: python3 -m venv failed (install python3-venv)" >&2; exit 1; }
"$VENV/bin/pip" install --quiet --disable-pip-version-check "selenium==$SELENIUM" "axe-selenium-python==$AXE" \
  "axe-core-python==$AXE_CORE" >&2
echo "$VENV"
