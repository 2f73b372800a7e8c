#!/usr/bin/env bash
# The kiosk service's content policy and overlay on the real vkms driver. In the guest, `scanout
# serve` reads a kiosk config (KMS output, writeback capture, the token key file, a playlist item
# with its content token) and plays on vkms's Virtual-1, which the policy classes as an external
# output:
#   1. a token with `externalOutput: deny`: every writeback capture is the black background, /stats
#      counts the censored frames on Virtual-1, and /load with an expired token answers 403 naming
#      the token, the playlist untouched;
#   2. an overlay in the kiosk config (a red 64x64 logo at bottom-right:16) over unrestricted
#      content (a blue picture): every capture shows the logo at its place and the content around it.
# The CPU renderer draws (GLES on llvmpipe in the emulated CPU takes seconds a frame).
#
# Builds nothing: run `swift build` first. Ends with `serve-policy: N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/vm/step-lib.sh
step_begin serve-policy
ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "color=c=blue:size=320x240:rate=30,format=yuv420p,trim=end_frame=30" \
  -c:v libx264 -threads 1 -preset ultrafast -pix_fmt yuv420p "$work/blue.mp4"
ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "color=c=red:size=64x64" -frames:v 1 -pix_fmt rgb24 "$work/logo.png"
python3 - "$work" <<'PY'
import base64, hashlib, hmac, json, sys, time
work = sys.argv[1]
secret = "scanout-vm-test-secret-0123456789abcdef"
json.dump({"keys": [{"kid": "vm", "alg": "HS256", "secret": secret}]}, open(f"{work}/keys.json", "w"))
def b64(b): return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def token(policy, exp):
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "vm"}).encode())
    body = b64(json.dumps({"exp": int(time.time()) + exp, "policy": policy}).encode())
    sig = b64(hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest())
    return f"{head}.{body}.{sig}"
deny = token({"externalOutput": "deny", "hdcp": "none", "capture": "allow"}, 3600)
expired = token({"externalOutput": "allow", "hdcp": "none", "capture": "allow"}, -3600)
def kiosk(name, item, **extra):
    config = {"output": "kms", "capture": f"{work}/{name}", "keys": f"{work}/keys.json", "unixSocket": f"/run/scanout-{name}.sock",
              "port": 0, "repeat": "all", "playlist": [item], **extra}
    json.dump(config, open(f"{work}/{name}.json", "w"))
kiosk("deny", {"source": f"{work}/blue.mp4", "token": deny})
kiosk("overlay", {"source": f"{work}/blue.mp4"}, overlay={"image": f"{work}/logo.png", "opacity": 1, "position": "bottom-right:16"})
json.dump({"source": f"{work}/blue.mp4", "token": expired}, open(f"{work}/expired.json", "w"))
# Reads the captures back: "deny: N captures, M not black" or "overlay: N captures, M with the logo and the content".
open(f"{work}/check.py", "w").write('''
import glob, subprocess, sys
mode, d = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(d + "/*.png"))
def rgb(f):
    dims = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                           "-of", "csv=p=0", f], capture_output=True, text=True).stdout.strip().split(",")
    data = subprocess.run(["ffmpeg", "-v", "error", "-i", f, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"], capture_output=True).stdout
    return int(dims[0]), int(dims[1]), data
def at(w, data, x, y):
    i = (y * w + x) * 3
    return tuple(data[i:i + 3])
good = 0
for f in files:
    w, h, data = rgb(f)
    if mode == "deny":
        good += any(data)
    else:
        logo, content = at(w, data, w - 16 - 32, h - 16 - 32), at(w, data, w // 2, h // 2)
        good += logo[0] > 200 and logo[1] < 60 and logo[2] < 60 and content[2] > 150 and content[0] < 60
print(f"{mode}: {len(files)} captures, {good} {'not black' if mode == 'deny' else 'with the logo and the content'}")
''')
PY
sock() { echo "/run/scanout-$1.sock"; }
# serve_run NAME EXTRA: starts the service on the config NAME.json, waits for 4 captures, runs
# EXTRA (curl commands against $S), stops it with SIGTERM and reads the captures back.
serve_run() {
  local s; s=$(sock "$1")
  cmd+="echo '## serve $1'; $bin serve --config '$work/$1.json' --renderer cpu > '$work/$1.log' 2>&1 & spid=\$!; "
  cmd+="for i in \$(seq 180); do [ \$(ls '$work/$1' 2>/dev/null | wc -l) -ge 4 ] && break; sleep 1; done; S=$s; $2 "
  cmd+="kill -TERM \$spid; wait \$spid; echo \"## serve $1 status \$?\"; python3 '$work/check.py' $1 '$work/$1'; "
}
cmd=""
serve_run deny "curl -s --unix-socket \$S http://localhost/stats | python3 -c 'import json,sys; s=json.load(sys.stdin); print(\"censored on Virtual-1:\", s.get(\"framesCensored\", {}).get(\"Virtual-1\", 0) >= 4)'; \
curl -s -o '$work/expired.out' -w 'expired token: %{http_code}\n' --unix-socket \$S -H 'Content-Type: application/json' -X POST --data @'$work/expired.json' http://localhost/load; \
python3 -c \"import json; print('refusal names:', json.load(open('$work/expired.out')).get('field'))\"; "
serve_run overlay ""
guest_run 900
check "serve stopped cleanly (deny)" grep -q '^## serve deny status 0$' <<<"$out"
check "externalOutput deny: every capture of Virtual-1 is black" grep -qE '^deny: ([4-9]|[1-9][0-9]+) captures, 0 not black$' <<<"$out"
check "censored frames counted on Virtual-1 in /stats" grep -q '^censored on Virtual-1: True$' <<<"$out"
check "an expired token on /load is refused with 403 naming the token" \
  bash -c 'grep -q "^expired token: 403$" <<<"$1" && grep -q "^refusal names: token$" <<<"$1"' _ "$out"
check "serve stopped cleanly (overlay)" grep -q '^## serve overlay status 0$' <<<"$out"
check "the kiosk config's overlay is in every capture, over the content" \
  bash -c 'line=$(grep "^overlay: " <<<"$1"); [[ $line =~ ^overlay:\ ([0-9]+)\ captures,\ ([0-9]+)\ with ]] && (( BASH_REMATCH[1] >= 4 && BASH_REMATCH[1] == BASH_REMATCH[2] ))' _ "$out"
(( vm != 0 )) && { echo "test-serve-policy: the guest run failed (status $vm)" >&2; failed=$((failed + 1)); }
echo "serve-policy: $passed passed, $failed failed ($((SECONDS - start)) s)"
(( failed == 0 ))
