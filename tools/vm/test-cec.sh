#!/usr/bin/env bash
# HDMI-CEC through the kernel's CEC API, on vivid's emulated CEC bus in the guest (beside vkms):
# cec-tv.c claims the TV's logical address on vivid's HDMI input and logs what it receives;
# `scanout serve` (KMS on vkms, `cec` naming vivid's HDMI output) gets `POST /display off` then
# `on`. The TV must receive Standby (0x36) from the player's playback address, then Image View
# On (0x04) and Active Source (0x82, broadcast, with the output's physical address), in order.
#
# Builds nothing: run `swift build` first. Ends with `cec: N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/vm/step-lib.sh
step_begin cec
cc -O2 -Wall -o "$work/cec-tv" tools/vm/cec-tv.c || { echo "cec: 0 passed, 1 failed"; exit 1; }
ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "testsrc2=size=320x240:rate=30,format=yuv420p,trim=end_frame=60" \
  -c:v libx264 -threads 1 -preset ultrafast -pix_fmt yuv420p "$work/clip.mp4"
S=/run/scanout-cec.sock
api() { echo "curl -s -o /dev/null -w '$1: %{http_code}\n' --unix-socket $S -H 'Content-Type: application/json' -X POST --data '$2' http://localhost/display; "; }
cmd="'$work/cec-tv' 90 > '$work/tv.log' 2>&1 & tv=\$!; "
cmd+="for i in \$(seq 40); do grep -q '^## cec out' '$work/tv.log' && break; sleep 0.5; done; "
cmd+="out=\$(sed -n 's/^## cec out //p' '$work/tv.log'); "
cmd+="printf '{\"output\": \"kms\", \"port\": 0, \"unixSocket\": \"$S\", \"repeat\": \"all\", \"playlist\": [\"$work/clip.mp4\"], \"cec\": \"%s\"}' \"\$out\" > '$work/cec.json'; "
cmd+="$bin serve --config '$work/cec.json' --renderer cpu > '$work/serve.log' 2>&1 & spid=\$!; "
cmd+="for i in \$(seq 120); do curl -s --unix-socket $S http://localhost/state | grep -q '\"state\":\"playing\"' && break; sleep 1; done; "
cmd+="$(api off '{"power": "off"}') sleep 2; $(api on '{"power": "on"}') sleep 2; "
cmd+="kill -TERM \$spid; wait \$spid; echo \"## serve status \$?\"; kill \$tv; cat '$work/tv.log'; grep -h 'HDMI-CEC\|cec' '$work/serve.log'; "
guest_run 600
rx=$(grep '^rx ' <<<"$out" | tr '\n' ' ')
check "vivid's CEC adapters are in the guest" grep -q '^## cec out /dev/cec' <<<"$out"
check "the service uses the adapter named in its config" grep -q 'HDMI-CEC: /dev/cec[0-9]* switches its TV with the screens' <<<"$out"
check "POST /display off and on answer 200" bash -c 'grep -q "^off: 200$" <<<"$1" && grep -q "^on: 200$" <<<"$1"' _ "$out"
check "the TV receives Standby, then Image View On and Active Source, from the playback address ($rx)" \
  bash -c '[[ $1 =~ rx\ 40:36\ .*rx\ 40:04\ .*rx\ 4f:82:[0-9a-f]{2}:[0-9a-f]{2} ]]' _ "$rx"
check "serve stopped cleanly" grep -q '^## serve status 0$' <<<"$out"
(( vm != 0 )) && { echo "test-cec: the guest run failed (status $vm)" >&2; failed=$((failed + 1)); }
echo "cec: $passed passed, $failed failed ($((SECONDS - start)) s)"
(( failed == 0 ))
