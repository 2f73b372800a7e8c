#!/usr/bin/env bash
# The benchmark from a clean clone: installs the peers (mpv, GStreamer; ffmpeg) and makes the clip
# set, builds Scanout in release mode, and runs `scanout bench SUITE` on every clip against
# ffmpeg, mpv and GStreamer, writing a table to stdout and out/bench-SUITE.{json,svg}.
#   tools/bench.sh [SUITE] [extra scanout bench options]      (SUITE: decode (default), render, startup, seek, play)
#   tools/bench.sh layout [extra scanout bench layout options]  (the most zones composed at 30 fps, per clip
#                                                                size, against GStreamer and ffmpeg: about an hour)
set -euo pipefail
cd "$(dirname "$0")/.."
SUITE=${1:-decode}; shift || true
tools/setup-bench.sh >&2
swift build -c release --static-swift-stdlib --product scanout >&2
mkdir -p out
if [[ $SUITE == layout ]]; then
  tools/make-clips.sh .clips layout-1080p30.mp4 layout-720p30.mp4 layout-360p30.mp4 >&2
  .build/release/scanout bench layout --clips .clips "$@" | tee out/bench-layout.txt
  exit
fi
CLIPS=(); while read -r c; do CLIPS+=(".clips/$c"); done < <(tools/make-clips.sh --list)
.build/release/scanout bench "$SUITE" "${CLIPS[@]}" --threads 2 --compare ffmpeg,mpv,gstreamer \
  --plot "out/bench-$SUITE.svg" "$@" | tee "out/bench-$SUITE.txt"
