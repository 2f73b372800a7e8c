#!/usr/bin/env bash
# Runs on the NVIDIA GPU machine, after `. .gpu-app/on-device.sh` (see README.md): every check of
# the hardware path, each in its own section of $OUT/prove.log. A failing check is reported and the
# next one runs.
set -uo pipefail
F=/opt/scanout/files
OUT=${OUT:-/tmp/prove}
mkdir -p "$OUT"
log=$OUT/prove.log
: > "$log"
section() { echo; echo "### $*"; } >> "$log"
run() { echo "\$ $*" >> "$log"; "$@" >> "$log" 2>&1; echo "(exit $?)" >> "$log"; }
clips=(h264-1080p30.mp4 h264-2160p30.mp4 hevc-1080p30.mkv hevc10-1080p30.mkv vp9-1080p30.webm av1-720p30.mkv)

section "machine"
run nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
run scanout probe
run scanout probe --json --hw-backend nvdec

section "framemd5: NVDEC against software"
for c in "${clips[@]}"; do
  scanout framemd5 "$F/$c" --player-type hw --hw-backend nvdec --no-fallback > "$OUT/$c.hw.md5" 2>> "$log"; hw=$?
  scanout framemd5 "$F/$c" --player-type sw > "$OUT/$c.sw.md5" 2>> "$log"
  if [[ $hw == 0 ]] && cmp -s "$OUT/$c.hw.md5" "$OUT/$c.sw.md5"; then
    echo "$c: equal ($(grep -vc '^#' "$OUT/$c.sw.md5") frames)" >> "$log"
  else
    echo "$c: DIFFERENT or failed (exit $hw)" >> "$log"
  fi
  rm -f "$OUT/$c.hw.md5" "$OUT/$c.sw.md5"
done

section "decode: NVDEC, 1 and 7 streams, against ffmpeg's NVDEC and nvdec-ref"
for c in h264-1080p30.mp4 hevc-1080p30.mkv h264-2160p30.mp4; do
  for n in 1 7; do
    run scanout bench decode "$F/$c" --player-type hw --hw-backend nvdec --streams "$n" --runs 3 --warmup 1 --compare ffmpeg
    run nvdec-ref "$F/$c" "$n"
  done
done

section "play: the whole GPU path, headless"
for c in h264-1080p30.mp4 hevc10-1080p30.mkv h264-2160p30.mp4; do
  run scanout play "$F/$c" --untimed --output headless --renderer gl --player-type hw --hw-backend nvdec
done

section "render: GL against CPU, and the decode-only ceiling"
for c in h264-1080p30.mp4 h264-2160p30.mp4; do
  run scanout bench render "$F/$c" --renderer gl --threads 16 --runs 3 --warmup 1 --compare ffmpeg
  run scanout bench render "$F/$c" --renderer cpu --threads 16 --runs 3 --warmup 1
  run scanout bench decode "$F/$c" --threads 16 --runs 3 --warmup 1
  run scanout bench render "$F/$c" --renderer gl --player-type hw --hw-backend nvdec --runs 3 --warmup 1
done
cat "$log"
