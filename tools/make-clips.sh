#!/usr/bin/env bash
# Makes the sample and benchmark clips into DIR (default .clips/), deterministically (fixed
# encoder settings, bit-exact flags). Each clip is made only when missing.
#   sample.mp4          H.264 1280x720 30 fps, 10 s: the README's playback demo
#   h264-1080p30.mp4    H.264 1920x1080 30 fps, 10 s: the decode benchmark
# Usage: tools/make-clips.sh [DIR] [CLIP...]   (no CLIP: all of them)
set -euo pipefail
DIR=${1:-"$(cd "$(dirname "$0")/.." && pwd)/.clips"}
shift || true
mkdir -p "$DIR"
FF=(ffmpeg -hide_banner -loglevel error -nostdin -y)
BX=(-fflags +bitexact -flags:v +bitexact)

make_clip() { # name size rate seconds extra-encoder-args...
  local name=$1 size=$2 rate=$3 secs=$4; shift 4
  [[ -s $DIR/$name ]] && return 0
  echo "making $DIR/$name" >&2
  "${FF[@]}" -f lavfi -i "testsrc2=size=$size:rate=$rate,format=yuv420p,trim=duration=$secs" "$@" "${BX[@]}" "$DIR/.tmp-$name"
  mv "$DIR/.tmp-$name" "$DIR/$name"
}

want() { [[ ${#CLIPS[@]} == 0 ]] || [[ " ${CLIPS[*]} " == *" $1 "* ]]; }
CLIPS=("$@")
want sample.mp4 && make_clip sample.mp4 1280x720 30 10 -c:v libx264 -preset veryfast -g 60 -bf 2 -movflags +faststart
want h264-1080p30.mp4 && make_clip h264-1080p30.mp4 1920x1080 30 10 -c:v libx264 -preset veryfast -g 60 -bf 3 -b:v 8M -movflags +faststart
exit 0
