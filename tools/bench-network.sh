#!/usr/bin/env bash
# The network benchmark in one command: installs the peers (mpv, GStreamer), builds Scanout in
# release mode (unless SCANOUT names a binary), and runs tools/bench-network.py: every profile,
# the MP4 and the HLS ladder, Scanout (play, serve), mpv and GStreamer, in one run. Prints the
# table (also to out/bench-network.txt) and writes out/bench-network/bench-network.json.
#   tools/bench-network.sh [bench-network.py options]       e.g. --profiles stall,trickle --media hls
#   SCANOUT=.build/debug/scanout tools/bench-network.sh      (another binary; no build)
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup-bench.sh --peers-only >&2
if [[ -z ${SCANOUT:-} ]]; then
  swift build -c release --static-swift-stdlib --product scanout >&2
  SCANOUT=.build/release/scanout
fi
mkdir -p out
python3 tools/bench-network.py --scanout "$SCANOUT" "$@" | tee out/bench-network.txt
