#!/usr/bin/env bash
# Lip sync on a real screen and a real ALSA driver, in the guest: `scanout play --output kms` shows
# flash-beep.mp4 (tools/make-clips.sh: a white frame and a 1 kHz beep on the same 1/30 s every 2 s)
# on vkms's Virtual-1 and plays its sound on snd-aloop's hw:Loopback,0,0, while loopback-capture.c
# records hw:Loopback,1,0 and logs when each beep's first sample was played (CLOCK_MONOTONIC, from
# the capture's hardware-pointer timestamps). `--present-log` gives each frame's page-flip vblank
# time. tools/lipsync-offsets.py pairs every flash with the nearest beep: offset = flash shown -
# beep played (positive: the picture is late).
#
# Prints the offsets and a `lipsync rate R: ...` line per rate; fails only when the rig is broken
# (the player or the capture failed, or fewer than 3 flashes were paired), never on the figure.
# SCANOUT_LIPSYNC_SECONDS: media seconds played (default 30); SCANOUT_LIPSYNC_RATES: the rates,
# one run each (default "1"). Builds nothing but the capture tool: run `swift build` first.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/vm/step-lib.sh
step_begin lipsync
seconds=${SCANOUT_LIPSYNC_SECONDS:-30}
rates=${SCANOUT_LIPSYNC_RATES:-1}
clip=.clips/flash-beep.mp4
[[ -s $clip ]] || tools/make-clips.sh .clips flash-beep.mp4
cc -O2 -o "$work/loopback-capture" tools/vm/loopback-capture.c -lasound || { echo "lipsync: 0 passed, 1 failed"; exit 1; }
ffmpeg -hide_banner -loglevel error -nostdin -y -i "$clip" -t "$seconds" -c copy "$work/clip.mp4"

cmd="grep -q Loopback /proc/asound/cards || echo '## no loopback card'; "
for r in $rates; do
  # The capture covers the run less its first and last second (it starts when the sound does).
  cap=$(python3 -c "print(max(1, $seconds / $r - 2))")
  cmd+="echo '## rate $r'; timeout $((seconds * 10 + 300)) '$work/loopback-capture' '$work/onsets-$r' $cap & cpid=\$!; "
  cmd+="$bin play '$work/clip.mp4' --output kms --mode 640x480@60 --renderer cpu --quiet --rate $r --audio-device hw:Loopback,0,0 --present-log '$work/present-$r' 2>&1 | $quiet; echo \"## play status \${PIPESTATUS[0]}\"; "
  cmd+="wait \$cpid; echo \"## capture status \$?\"; "
done
guest_run $((300 + seconds * 20))
for r in $rates; do
  sed -n "/^## rate $r\$/,/^## capture status/p" <<<"$out" | grep -q '^## play status 0$'; play_ok=$?
  sed -n "/^## rate $r\$/,/^## capture status/p" <<<"$out" | grep -q '^## capture status 0$'; cap_ok=$?
  report=$(python3 tools/lipsync-offsets.py "$work/present-$r" "$work/onsets-$r" 2>&1)
  printf '%s\n' "$report"
  paired=$(sed -n 's/.*paired \([0-9]*\);.*/\1/p' <<<"$report")
  echo "lipsync rate $r: $(tail -n1 <<<"$report")"
  check "rate $r: the player played on KMS with hw:Loopback,0,0" test $play_ok = 0
  check "rate $r: the loopback capture ran" test $cap_ok = 0
  check "rate $r: at least 3 flashes paired with beeps (got ${paired:-0})" test "${paired:-0}" -ge 3
done
(( vm != 0 )) && { echo "test-lipsync: the guest run failed (status $vm)" >&2; failed=$((failed + 1)); }
echo "lipsync: $passed passed, $failed failed"
(( failed == 0 ))
