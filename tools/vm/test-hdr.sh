#!/usr/bin/env bash
# HDR content on the real vkms driver, as far as vkms goes: its Virtual-1 has no EDID, no
# HDR_OUTPUT_METADATA, Colorspace or max bpc property, and its planes take no XRGB2101010 (Debian's
# 6.1 kernel). In the guest, `scanout probe` must say so; `scanout play --output kms --capture` of
# a 10-bit HEVC PQ clip (its frame number drawn as a binary code) must tone map it, say why
# ("no HDR static metadata block"), and every writeback capture must equal the headless CPU
# render of that frame, tone mapped the same way, exactly. Then `scanout serve` configured to take
# the screen for an HDR one (`hdr.screens`) must go one step further and stop at the missing
# HDR_OUTPUT_METADATA property, still tone mapping.
#
# Builds nothing: run `swift build` first. Ends with `hdr: N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/vm/step-lib.sh
step_begin hdr
ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "testsrc2=size=320x240:rate=60,format=yuv420p,$frame_band,trim=end_frame=12,format=yuv420p10le" \
  -c:v libx265 -x265-params "colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:max-cll=1000,400:log-level=error" \
  -color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc "$work/pq.mp4"
S=/run/scanout-hdr.sock
cmd="$bin probe 2>&1 | grep -e 'Virtual-1' -e 'hdr:' -e 'primary'; "
cmd+="echo '## play'; $bin play '$work/pq.mp4' --output kms --mode 640x480@60 --renderer cpu --capture '$work/pq' 2>&1 | $quiet | grep -e '^hdr:' -e '^output:'; echo \"## play status \${PIPESTATUS[0]}\"; "
cmd+="$bin selftest captures '$work/pq' --input '$work/pq.mp4' --size 640x480 --renderer cpu 2>&1 | $quiet | tail -1; echo \"## check status \${PIPESTATUS[0]}\"; "
cmd+="printf '{\"output\": \"kms\", \"port\": 0, \"unixSocket\": \"$S\", \"repeat\": \"all\", \"playlist\": [\"$work/pq.mp4\"], \"hdr\": {\"screens\": {\"Virtual-1\": {\"eotfs\": [\"sdr\", \"pq\"]}}}}' > '$work/hdr.json'; "
cmd+="$bin serve --config '$work/hdr.json' --renderer cpu > '$work/serve.log' 2>&1 & spid=\$!; "
cmd+="for i in \$(seq 120); do grep -q 'hdr: Virtual-1' '$work/serve.log' && break; sleep 1; done; "
cmd+="kill -TERM \$spid; wait \$spid; echo \"## serve status \$?\"; grep -o 'hdr: Virtual-1: .*' '$work/serve.log' | head -1; "
guest_run 600
check "probe: Virtual-1 states no HDR (no EDID)" grep -q 'hdr: none stated' <<<"$out"
check "play tone maps PQ on Virtual-1, saying why" grep -q "^hdr: Virtual-1: tone mapped to SDR (Virtual-1's EDID has no HDR static metadata block)" <<<"$out"
check "play ran to the end" grep -q '^## play status 0$' <<<"$out"
check "every capture is its frame, tone mapped as the headless render, exactly" \
  bash -c 'grep -q "^captures: 12 of 12 frames; each once in order: yes; max diff 0" <<<"$1" && grep -q "^## check status 0$" <<<"$1"' _ "$out"
check "configured as an HDR screen, Virtual-1 stops at the missing HDR_OUTPUT_METADATA property" \
  grep -q 'hdr: Virtual-1: tone mapped to SDR (Virtual-1 has no HDR_OUTPUT_METADATA property' <<<"$out"
check "serve stopped cleanly" grep -q '^## serve status 0$' <<<"$out"
(( vm != 0 )) && { echo "test-hdr: the guest run failed (status $vm)" >&2; failed=$((failed + 1)); }
echo "hdr: $passed passed, $failed failed ($((SECONDS - start)) s)"
(( failed == 0 ))
