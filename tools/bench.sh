#!/usr/bin/env bash
# The benchmark from a clean clone: installs the peers (mpv, GStreamer; ffmpeg) and makes the clip
# set, builds Scanout in release mode, and runs `scanout bench SUITE` on every clip against
# ffmpeg, mpv and GStreamer, writing a table to stdout and out/bench-SUITE.{json,svg}.
#   tools/bench.sh [SUITE] [extra scanout bench options]      (SUITE: decode (default), render, startup, seek, play)
set -euo pipefail
cd "$(dirname "$0")/.."
SUITE=${1:-decode}; shift || true
tools/setup-bench.sh >&2
swift build -c release --static-swift-stdlib --product scanout >&2
mkdir -p out
CLIPS=(); while read -r c; do CLIPS+=(".clips/$c"); done < <(tools/make-clips.sh --list)
.build/release/scanout bench "$SUITE" "${CLIPS[@]}" --threads 2 --compare ffmpeg,mpv,gstreamer \
  --plot "out/bench-$SUITE.svg" "$@" | tee "out/bench-$SUITE.txt"
