#!/usr/bin/env bash
# Lip sync on a real screen and a real ALSA driver, in the guest. flash-beep.mp4
# (tools/make-clips.sh: a white frame and a 1 kHz beep on the same 1/30 s every 2 s) plays its
# sound on snd-aloop's hw:Loopback,0,0 while loopback-capture.c records hw:Loopback,1,0 and logs
# when each beep's first sample was played (CLOCK_MONOTONIC, from the capture's hardware-pointer
# timestamps); `--present-log` gives when each frame reached the screen (on KMS its page-flip
# vblank time). tools/lipsync-offsets.py pairs every flash with the nearest beep: offset = flash
# shown - beep played (positive: the picture is late).
#
# The runs (SCANOUT_LIPSYNC_RUNS, default all three):
#   play      `scanout play --output kms` on vkms's Virtual-1, rate 1
#   serve     `scanout serve --output kms`, with a seek (POST /seek) and a rate change (PUT /rate
#             $SCANOUT_LIPSYNC_RATE, default 1.5) inside the run, over its Unix socket
#   headless  `scanout play --output headless`: the same measurement with no screen (the time is
#             when the headless display took the frame)
#   mpv       mpv 0.35 (`--vo=drm`, the same screen and device), rate 1; not in the default list:
#             mpv is a benchmark peer (tools/setup-bench.sh). mpv logs no frame times, so
#             flip-log.c, preloaded, reads each frame mpv flips to at its centre and logs the
#             flip's vblank time for the white ones.
# SCANOUT_LIPSYNC_SECONDS: wall seconds each run plays (default 60); SCANOUT_LIPSYNC_KEEP: a
# directory the logs (present, onsets, serve.log) are copied to.
#
# The guest gets 2 CPUs (SCANOUT_VM_CPUS, multi-threaded TCG): on one emulated CPU the player,
# the capture and the kernel's timers starve each other once the rate is above 1 (385 underruns
# in the minute at 1.5x, 35 with two), and the figure measured the emulator, not the player.
#
# Prints the offsets and a `lipsync RUN: ...` line per run; fails only when the rig is broken (the
# player or the capture failed, or fewer than 3 flashes were paired), never on the figure.
# Builds nothing but the capture tool: run `swift build` first.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/vm/step-lib.sh
step_begin lipsync
seconds=${SCANOUT_LIPSYNC_SECONDS:-60}
runs=${SCANOUT_LIPSYNC_RUNS:-play serve headless}
rate=${SCANOUT_LIPSYNC_RATE:-1.5}
export SCANOUT_VM_CPUS=${SCANOUT_VM_CPUS:-2}
clip=.clips/flash-beep.mp4
[[ -s $clip ]] || tools/make-clips.sh .clips flash-beep.mp4
cc -O2 -o "$work/loopback-capture" tools/vm/loopback-capture.c -lasound || { echo "lipsync: 0 passed, 1 failed"; exit 1; }
if [[ " $runs " == *" mpv "* ]]; then
  command -v mpv >/dev/null || { echo "test-lipsync: no mpv (tools/setup-bench.sh installs it)" >&2; echo "lipsync: 0 passed, 1 failed"; exit 1; }
  cc -O2 -shared -fPIC -o "$work/flip-log.so" tools/vm/flip-log.c -ldl $(pkg-config --cflags --libs libdrm) || { echo "lipsync: 0 passed, 1 failed"; exit 1; }
fi
# The play runs play the first SECONDS of the clip; serve plays all of it, repeated.
ffmpeg -hide_banner -loglevel error -nostdin -y -i "$clip" -t "$seconds" -c copy "$work/clip.mp4"
cp "$clip" "$work/whole.mp4"
# The capture covers the run less its first and last seconds (it starts when the sound does).
cap=$((seconds - 3))
audio="--audio-device hw:Loopback,0,0"
api() { echo "curl -s -o /dev/null -w '$1 %{http_code}\n' --unix-socket /run/lipsync.sock -H 'Content-Type: application/json' -X $2 --data '$3' http://localhost$4"; }

cmd="grep -q Loopback /proc/asound/cards || echo '## no loopback card'; "
for r in $runs; do
  cmd+="echo '## run $r'; timeout $((seconds * 10 + 300)) '$work/loopback-capture' '$work/onsets-$r' $cap & cpid=\$!; "
  case $r in
    play)
      cmd+="timeout $((seconds * 5)) $bin play '$work/clip.mp4' --output kms --mode 640x480@60 --renderer cpu --quiet $audio --present-log '$work/present-$r' 2>&1 | $quiet; echo \"## play status \${PIPESTATUS[0]}\"; " ;;
    mpv)
      cmd+="LD_PRELOAD='$work/flip-log.so' FLIP_LOG='$work/present-$r' timeout $((seconds * 5)) mpv --no-config --msg-level=all=error --vo=drm --drm-mode=640x480 --hwdec=no --ao=alsa --audio-device=alsa/hw:Loopback,0,0 --audio-format=s16 --audio-samplerate=48000 --audio-channels=stereo '$work/clip.mp4' 2>&1 | $quiet; echo \"## play status \${PIPESTATUS[0]}\"; " ;;
    headless)
      cmd+="timeout $((seconds * 5)) $bin play '$work/clip.mp4' --output headless --renderer cpu --quiet $audio --present-log '$work/present-$r' 2>&1 | $quiet; echo \"## play status \${PIPESTATUS[0]}\"; " ;;
    serve)
      # Seek from about 12 s to 30 s, then the rate change from about 24 s of the run on.
      cmd+="$bin serve --output kms --mode 640x480@60 --renderer cpu --socket /run/lipsync.sock --port 0 --repeat one $audio --present-log '$work/present-$r' '$work/whole.mp4' > '$work/serve.log' 2>&1 & spid=\$!; "
      cmd+="for i in \$(seq 120); do curl -sf --unix-socket /run/lipsync.sock http://localhost/health >/dev/null && break; sleep 0.5; done; "
      cmd+="sleep 12; $(api seek POST '{"position": 30, "exact": true}' /seek); sleep 12; $(api rate PUT "{\"rate\": $rate}" /rate); sleep $((seconds - 24)); "
      cmd+="curl -s --unix-socket /run/lipsync.sock http://localhost/stats | grep -o '\"audio\":{[^}]*}'; "
      cmd+="kill -TERM \$spid; wait \$spid; echo \"## play status \$?\"; grep -e 'error' -e 'audio' '$work/serve.log' | head -5; " ;;
  esac
  cmd+="wait \$cpid; echo \"## capture status \$?\"; "
done
guest_run $((300 + seconds * 20))
for r in $runs; do
  part=$(sed -n "/^## run $r\$/,/^## capture status/p" <<<"$out")
  grep -q '^## play status 0$' <<<"$part"; play_ok=$?
  grep -q '^## capture status 0$' <<<"$part"; cap_ok=$?
  report=$(python3 tools/lipsync-offsets.py "$work/present-$r" "$work/onsets-$r" 2>&1)
  printf '%s\n' "$report"
  paired=$(sed -n 's/.*paired \([0-9]*\);.*/\1/p' <<<"$report")
  echo "lipsync $r: $(tail -n1 <<<"$report")"
  check "$r: the player ran with hw:Loopback,0,0" test $play_ok = 0
  check "$r: the loopback capture ran" test $cap_ok = 0
  check "$r: at least 3 flashes paired with beeps (got ${paired:-0})" test "${paired:-0}" -ge 3
  if [[ $r == serve ]]; then
    check "serve: the seek was taken" grep -q '^seek 20[04]' <<<"$part"
    check "serve: the rate change was taken" grep -q '^rate 20[04]' <<<"$part"
  fi
done
[[ -n ${SCANOUT_LIPSYNC_KEEP:-} ]] && mkdir -p "$SCANOUT_LIPSYNC_KEEP" && cp "$work"/present-* "$work"/onsets-* "$work"/serve.log "$SCANOUT_LIPSYNC_KEEP"/ 2>/dev/null
(( vm != 0 )) && { echo "test-lipsync: the guest run failed (status $vm)" >&2; failed=$((failed + 1)); }
echo "lipsync: $passed passed, $failed failed"
(( failed == 0 ))
