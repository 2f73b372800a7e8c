#!/usr/bin/env bash
# The main job from a clean clone: install what is needed, build, make the sample clip, and play
# it on the best output available (headless here: no display), with a live progress line and a
# closing summary. Extra arguments go to `scanout play` (e.g. --untimed).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
swift build -c release --static-swift-stdlib --product scanout >&2
[[ -x .build/release/scanout ]] || { echo "build failed" >&2; exit 1; }
tools/make-clips.sh .clips sample.mp4
.build/release/scanout probe
exec .build/release/scanout play .clips/sample.mp4 "$@"
