#!/usr/bin/env bash
# Makes the sample and benchmark clips into DIR (default .clips/), deterministically (fixed
# encoder settings, single-threaded encoders where threading changes the bytes, bit-exact flags).
# Each clip is made only when missing.
#
#   sample.mp4            H.264 1280x720 30 fps, 10 s: the README's playback demo
#   h264-1080p30.mp4      H.264 1920x1080 30 fps, 10 s, MP4       (the decode benchmark)
#   h264-1080p30.ts       the same stream in MPEG-TS
#   h264-1080p25-gop12.ts H.264 1920x1080 25 fps, 20 s, a keyframe every 12 frames, constant-rate
#                         MPEG-TS (7 Mbit/s): a broadcast channel    (the zapping benchmark)
#   h264-720p60.mp4       H.264 1280x720 60 fps, 5 s
#   h264-1080p60.mp4      H.264 1920x1080 60 fps, 60 s             (the playback benchmark)
#   h264-2160p30.mp4      H.264 3840x2160 30 fps, 3 s
#   hevc-1080p30.mkv      HEVC 8-bit 1920x1080 30 fps, 5 s
#   hevc10-1080p30.mkv    HEVC 10-bit (yuv420p10le) 1920x1080 30 fps, 5 s
#   vp9-1080p30.webm      VP9 1920x1080 30 fps, 5 s
#   av1-720p30.mkv        AV1 1280x720 30 fps, 3 s
#   flash-beep.mp4        H.264 640x360 30 fps + AAC 48 kHz stereo, 70 s: black, with one white frame
#                         and a 1 kHz beep of the same 1/30 s every 2 s (t = 0, 2, 4...): lip sync
#   layout-1080p30.mp4    H.264 1920x1080 30 fps, 70 s             (the layout benchmark: a trial
#   layout-720p30.mp4     H.264 1280x720 30 fps, 70 s               plays 60 s of it once through,
#   layout-360p30.mp4     H.264 640x360 30 fps, 70 s                gst-launch cannot loop a file)
#
# Usage: tools/make-clips.sh [DIR] [CLIP...]   (no CLIP: all of them but the layout benchmark's,
# which are made when named; `--list` prints the names of the clips `tools/bench.sh` decodes)
set -euo pipefail
ALL=(sample.mp4 h264-1080p30.mp4 h264-1080p30.ts h264-1080p25-gop12.ts h264-720p60.mp4 h264-1080p60.mp4 h264-2160p30.mp4 hevc-1080p30.mkv hevc10-1080p30.mkv vp9-1080p30.webm av1-720p30.mkv flash-beep.mp4)
LAYOUT=(layout-1080p30.mp4 layout-720p30.mp4 layout-360p30.mp4)
if [[ ${1:-} == --list ]]; then printf '%s\n' "${ALL[@]:1}"; exit 0; fi
DIR=${1:-"$(cd "$(dirname "$0")/.." && pwd)/.clips"}
shift || true
CLIPS=("$@"); ((${#CLIPS[@]})) || CLIPS=("${ALL[@]}")
mkdir -p "$DIR"
FF=(ffmpeg -hide_banner -loglevel error -nostdin -y)
BX=(-fflags +bitexact -flags:v +bitexact)
X265=(-c:v libx265 -preset ultrafast -x265-params pools=2:frame-threads=1:log-level=error:keyint=60)

src() { # size rate seconds [pix_fmt]
  echo "testsrc2=size=$1:rate=$2,format=${4:-yuv420p},trim=duration=$3"
}

make_clip() { # name source encoder-args...
  local name=$1 source=$2; shift 2
  [[ -s $DIR/$name ]] && return 0
  echo "making $DIR/$name" >&2
  local tmp="$DIR/.tmp-$name"
  "${FF[@]}" -f lavfi -i "$source" "$@" "${BX[@]}" "$tmp"
  mv "$tmp" "$DIR/$name"
}

for c in "${CLIPS[@]}"; do
  case $c in
    sample.mp4)        make_clip "$c" "$(src 1280x720 30 10)" -c:v libx264 -preset veryfast -g 60 -bf 2 -movflags +faststart ;;
    h264-1080p30.mp4)  make_clip "$c" "$(src 1920x1080 30 10)" -c:v libx264 -preset veryfast -g 60 -bf 3 -b:v 8M -movflags +faststart ;;
    h264-1080p30.ts)   "$0" "$DIR" h264-1080p30.mp4
                       [[ -s $DIR/$c ]] || { echo "making $DIR/$c" >&2; "${FF[@]}" -i "$DIR/h264-1080p30.mp4" -c copy "${BX[@]}" "$DIR/.tmp-$c" && mv "$DIR/.tmp-$c" "$DIR/$c"; } ;;
    h264-1080p25-gop12.ts) make_clip "$c" "$(src 1920x1080 25 20)" -c:v libx264 -preset veryfast -g 12 -keyint_min 12 -sc_threshold 0 -bf 2 -b:v 5M -maxrate 5M -bufsize 2M -f mpegts -muxrate 7M ;;
    h264-720p60.mp4)   make_clip "$c" "$(src 1280x720 60 5)" -c:v libx264 -preset veryfast -g 120 -bf 3 -b:v 6M ;;
    layout-1080p30.mp4) make_clip "$c" "$(src 1920x1080 30 70)" -c:v libx264 -preset veryfast -g 60 -bf 3 -b:v 8M -movflags +faststart ;;
    layout-720p30.mp4) make_clip "$c" "$(src 1280x720 30 70)" -c:v libx264 -preset veryfast -g 60 -bf 3 -b:v 4M -movflags +faststart ;;
    layout-360p30.mp4) make_clip "$c" "$(src 640x360 30 70)" -c:v libx264 -preset veryfast -g 60 -bf 3 -b:v 1M -movflags +faststart ;;
    h264-1080p60.mp4)  make_clip "$c" "$(src 1920x1080 60 60)" -c:v libx264 -preset veryfast -g 120 -bf 3 -b:v 8M -movflags +faststart ;;
    h264-2160p30.mp4)  make_clip "$c" "$(src 3840x2160 30 3)" -c:v libx264 -preset ultrafast -g 60 -b:v 20M ;;
    hevc-1080p30.mkv)  make_clip "$c" "$(src 1920x1080 30 5)" "${X265[@]}" -b:v 6M ;;
    hevc10-1080p30.mkv) make_clip "$c" "$(src 1920x1080 30 5 yuv420p10le)" "${X265[@]}" -b:v 6M ;;
    vp9-1080p30.webm)  make_clip "$c" "$(src 1920x1080 30 5)" -c:v libvpx-vp9 -threads 2 -row-mt 0 -deadline realtime -cpu-used 8 -g 60 -b:v 6M ;;
    av1-720p30.mkv)    make_clip "$c" "$(src 1280x720 30 3)" -c:v libaom-av1 -threads 2 -row-mt 0 -cpu-used 8 -usage realtime -g 60 -b:v 3M ;;
    flash-beep.mp4)
      # The beep is gated per sample (a filter's `enable` acts per frame of 1024 samples, which
      # started the beeps 0, 5.3, 10.7 or 16 ms late in turn).
      beep="if(lt(mod(n\\,96000)\\,1600)\\,0.5*sin(2*PI*1000*n/48000)\\,0)"
      [[ -s $DIR/$c ]] || { echo "making $DIR/$c" >&2
        "${FF[@]}" -f lavfi -i "color=black:size=640x360:rate=30,drawbox=w=iw:h=ih:color=white:t=fill:enable='lt(mod(n\,60)\,1)',format=yuv420p,trim=duration=70" \
          -f lavfi -i "aevalsrc='$beep|$beep':s=48000:d=70" \
          -c:v libx264 -preset veryfast -g 60 -bf 2 -c:a aac -b:a 128k -movflags +faststart "${BX[@]}" "$DIR/.tmp-$c" && mv "$DIR/.tmp-$c" "$DIR/$c"; } ;;
    *) echo "make-clips: unknown clip '$c' (known: ${ALL[*]} ${LAYOUT[*]})" >&2; exit 2 ;;
  esac
done
