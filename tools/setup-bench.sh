#!/usr/bin/env bash
# Installs the peers `scanout bench --compare` runs (mpv, GStreamer with its libav plugins; ffmpeg
# comes with tools/setup.sh) and makes the benchmark clips. Part of the benchmark set-up, not of the
# tests. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
# The peers: mpv, and GStreamer with its libav decoders.
tools/setup.sh mpv gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-libav
tools/make-clips.sh .clips "$@"
