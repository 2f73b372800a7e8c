#!/usr/bin/env bash
# Packs Scanout for the NVIDIA GPU machine (see README.md): a release build with the Swift runtime
# linked in, the clips the proof decodes, prove.sh, ffmpeg (the peer) and nvdec-ref (the reference
# NVDEC loop), through ../shared/tools/gpu/bundle.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
bundle=../shared/tools/gpu/bundle.sh
[[ -x $bundle || -f $bundle ]] || { echo "pack: $bundle not found (the shared GPU tools sit beside the checkout)" >&2; exit 1; }
clips=(h264-1080p30.mp4 h264-2160p30.mp4 hevc-1080p30.mkv hevc10-1080p30.mkv vp9-1080p30.webm av1-720p30.mkv)
tools/make-clips.sh .clips "${clips[@]}"
swift build -c release --static-swift-stdlib --product scanout
bash "$bundle" --ffmpeg --ref .build/release/scanout "${clips[@]/#/.clips/}" tools/gpu/prove.sh
