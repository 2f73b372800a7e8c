#!/usr/bin/env bash
# Installs the peers `scanout bench --compare` and tools/bench-network.py run (mpv, GStreamer with
# its libav plugins and its Python bindings for the network benchmark's playbin app; ffmpeg comes
# with tools/setup.sh) and makes the benchmark clips. Part of the benchmark set-up, not of the
# tests. Idempotent.
#   tools/setup-bench.sh [--peers-only] [CLIP...]     (--peers-only: no clips)
set -euo pipefail
cd "$(dirname "$0")/.."
PEERS_ONLY=0
if [[ ${1:-} == --peers-only ]]; then PEERS_ONLY=1; shift; fi
# The peers: mpv, and GStreamer with its libav decoders (and, for playbin driven from Python,
# python3-gst-1.0; Debian's bindings are for /usr/bin/python3).
tools/setup.sh mpv gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-libav \
  python3-gi python3-gst-1.0 gir1.2-gstreamer-1.0
((PEERS_ONLY)) || tools/make-clips.sh .clips "$@"
