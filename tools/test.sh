#!/usr/bin/env bash
# The test command from a clean clone: install what is needed, generate the fixtures, build and
# run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/make-fixtures.sh .fixtures
swift build --build-tests
swift test --skip-build
