#!/usr/bin/env bash
# Frame-exact presentation on the real vkms driver: in the guest, `scanout play --output kms
# --capture` shows a generated 60 fps clip (its frame number drawn as a binary code) on vkms's
# Virtual-1 at 640x480@60 and captures every committed frame through the writeback connector;
# `scanout selftest captures` then reads each capture's frame number and compares its pixels with
# the headless render of that frame (24 frames with the CPU renderer, 4 with GLES). Passes when every frame appears exactly once, in order, and
# equal to the headless render (CPU renderer: exactly; GL renderer: exactly, both on llvmpipe).
# Then the native plane path: DMA-BUF frames on the plane, and the TEST_ONLY fallback; then DRM
# master held by another player, and SIGINT restoring the screen; then the content policy; then
# the service on the screen.
#
# Builds nothing: run `swift build` first. Ends with `present: N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/vm/step-lib.sh
step_begin present
# GLES runs on llvmpipe inside an emulated CPU (seconds per 640x480 frame), so its clip is shorter.
frame_clip "${SCANOUT_PRESENT_FRAMES:-24}" "$work/cpu.mp4"
frame_clip "${SCANOUT_PRESENT_GL_FRAMES:-4}" "$work/gl.mp4"
ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "testsrc2=size=640x480:rate=60,format=yuv420p,$frame_band,trim=end_frame=8" \
  -c:v libx264 -threads 1 -preset veryfast -g 4 -pix_fmt yuv420p -fflags +bitexact -flags:v +bitexact "$work/native.mp4"

cmd=""
for r in cpu gl; do
  cmd+="echo '## renderer $r'; $bin play '$work/$r.mp4' --output kms --mode 640x480@60 --renderer $r --capture '$work/$r' 2>&1 | $quiet; echo \"## play status \${PIPESTATUS[0]}\"; "
  cmd+="$bin selftest captures '$work/$r' --input '$work/$r.mp4' --size 640x480 --renderer $r 2>&1 | $quiet; echo \"## check status \${PIPESTATUS[0]}\"; "
done
# The native plane path: XRGB8888 DMA-BUFs go on the primary plane with no drawing; NV12 ones
# (which vkms's planes do not take) are refused by TEST_ONLY and composited instead.
for f in xrgb nv12; do
  cmd+="echo '## native $f'; $bin selftest native '$work/native.mp4' --format $f --mode 640x480@60 --capture '$work/native-$f' 2>&1 | $quiet; echo \"## native status \${PIPESTATUS[0]}\"; "
  cmd+="$bin selftest captures '$work/native-$f' --input '$work/native.mp4' --size 640x480 --renderer cpu 2>&1 | $quiet; echo \"## check status \${PIPESTATUS[0]}\"; "
done
# Ownership: a second player cannot take the screen from the first (and names it); SIGINT stops
# the first, which puts back what was on the screen.
ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "testsrc2=size=320x240:rate=30,trim=end_frame=600" \
  -c:v libx264 -threads 1 -preset ultrafast -pix_fmt yuv420p "$work/long.mp4"
cmd+="echo '## master'; ($bin play '$work/long.mp4' --output kms --renderer cpu > '$work/first.log' 2>&1 & echo \$! > '$work/first.pid'); sleep 4; "
cmd+="$bin play '$work/long.mp4' --output kms --renderer cpu 2>&1 | $quiet | tail -1; echo \"## second status \${PIPESTATUS[0]}\"; "
cmd+="kill -INT \$(cat '$work/first.pid'); for i in \$(seq 50); do kill -0 \$(cat '$work/first.pid') 2>/dev/null || break; sleep 0.2; done; $quiet '$work/first.log' | grep -v '^00:' ; "
# Content policy on a real driver: a token asking for HDCP type 0 plays censored on vkms's
# Virtual-1, which has no Content Protection property (every capture is the black background);
# a token denying capture makes --capture refuse before anything is shown.
python3 - "$work" <<'PY'
import base64, hashlib, hmac, json, sys, time
work = sys.argv[1]
secret = "scanout-vm-test-secret-0123456789abcdef"
json.dump({"keys": [{"kid": "vm", "alg": "HS256", "secret": secret}]}, open(f"{work}/keys.json", "w"))
def b64(b): return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def token(policy):
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "vm"}).encode())
    body = b64(json.dumps({"exp": int(time.time()) + 3600, "policy": policy}).encode())
    sig = b64(hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest())
    return f"{head}.{body}.{sig}"
open(f"{work}/hdcp.jwt", "w").write(token({"externalOutput": "allow", "hdcp": "type0", "capture": "allow"}))
open(f"{work}/nocapture.jwt", "w").write(token({"externalOutput": "allow", "hdcp": "none", "capture": "deny"}))
PY
cmd+="echo '## policy hdcp'; $bin play '$work/native.mp4' --output kms --mode 640x480@60 --renderer cpu --capture '$work/hdcp' --token @'$work/hdcp.jwt' --keys '$work/keys.json' 2>&1 | $quiet | grep -e '^policy' -e '^kms:'; "
cmd+="python3 -c \"import sys,glob,subprocess; fs=sorted(glob.glob('$work/hdcp/*.png')); print('hdcp captures', len(fs), 'nonblack', sum(1 for f in fs if any(subprocess.run(['ffmpeg','-v','error','-i',f,'-f','rawvideo','-pix_fmt','rgb24','-'],capture_output=True).stdout)))\"; "
cmd+="echo '## policy capture'; $bin play '$work/native.mp4' --output kms --renderer cpu --capture '$work/denied' --token @'$work/nocapture.jwt' --keys '$work/keys.json' 2>&1 | $quiet | tail -1; echo \"## denied status \${PIPESTATUS[0]}\"; ls '$work/denied' 2>/dev/null | wc -l | sed 's/^/denied files /'; "
# The service on a real screen: `scanout serve --output kms` plays its playlist on Virtual-1 (the
# CPU renderer: GLES on llvmpipe in the emulated CPU takes seconds a frame), answers on its Unix
# socket (the guest has no network), stops on SIGTERM with exit 0 and puts the screen back.
cmd+="echo '## serve'; $bin serve --output kms --renderer cpu --socket /run/scanout-test.sock --port 0 --repeat all '$work/cpu.mp4' > '$work/serve.log' 2>&1 & spid=\$!; "
cmd+="for i in \$(seq 90); do curl -sf --unix-socket /run/scanout-test.sock http://scanout/health >/dev/null && break; sleep 1; done; sleep 5; "
cmd+="curl -s --unix-socket /run/scanout-test.sock http://scanout/stats | python3 -c 'import json,sys; s=json.load(sys.stdin); print(\"serve presented\", s[\"framesPresented\"] > 0)'; "
cmd+="kill -TERM \$spid; wait \$spid; echo \"## serve status \$?\"; grep -o 'output: kms /dev/dri/card0 \\[Virtual-1[^]]*\\]' '$work/serve.log' | head -1; "
out=$(SCANOUT_VM_OUT=$work SCANOUT_VM_TIMEOUT=${SCANOUT_VM_TIMEOUT:-900} tools/vm/run.sh "$cmd")
vm=$?
printf '%s\n' "$out"
passed=$(grep -c '^## check status 0$' <<<"$out")
plays=$(grep -c '^## play status 0$' <<<"$out")
# Which path the native frames took.
grep -q '^native: 8 native, 0 refused, 0 composited, 8 captures$' <<<"$out" && passed=$((passed + 1)) || echo "FAIL xrgb frames did not all go on the plane" >&2
grep -q '^native: 0 native, 8 refused, 8 composited, 8 captures$' <<<"$out" && passed=$((passed + 1)) || echo "FAIL nv12 frames were not all refused and composited" >&2
# The second player was refused with the first one named; the first stopped and restored.
grep -qE '^scanout: cannot become DRM master of /dev/dri/card0: another process is master \(processes with it open: [0-9]+ \(scanout\)\)' <<<"$out" \
  && grep -q '^## second status 1$' <<<"$out" && passed=$((passed + 1)) || echo "FAIL the second player was not refused with the holder named" >&2
grep -q '^scanout: stopped by signal$' <<<"$out" && grep -q '^output: restored the previous state of Virtual-1$' <<<"$out" \
  && passed=$((passed + 1)) || echo "FAIL SIGINT did not stop playback and restore the screen" >&2
# HDCP content censored on the Virtual connector (no Content Protection property), every frame.
grep -q '^policy: outputRestricted Virtual-1: Virtual-1: the content needs HDCP and the connector has no "Content Protection" property$' <<<"$out" \
  && grep -q '^hdcp captures 8 nonblack 0$' <<<"$out" && passed=$((passed + 1)) || echo "FAIL hdcp content was not censored on Virtual-1" >&2
# Capture denied: refused with the policy named, exit 1, no capture written.
grep -q '^scanout: .*capture' <<<"$out" && grep -q '^## denied status 1$' <<<"$out" && grep -q '^denied files 0$' <<<"$out" \
  && passed=$((passed + 1)) || echo "FAIL writeback capture of capture-deny content was not refused" >&2
# The service played on the screen and stopped cleanly.
grep -q '^serve presented True$' <<<"$out" && grep -q '^## serve status 0$' <<<"$out" && grep -q '^output: kms /dev/dri/card0 \[Virtual-1' <<<"$out" \
  && passed=$((passed + 1)) || echo "FAIL scanout serve did not play on KMS and stop cleanly" >&2
failed=$(( 11 - passed ))
(( plays != 2 && failed == 0 )) && failed=1
(( vm != 0 )) && echo "test-present: the guest run failed (status $vm)" >&2
echo "present: $passed passed, $failed failed"
(( failed == 0 && vm == 0 ))
