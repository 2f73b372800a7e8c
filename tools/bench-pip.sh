#!/usr/bin/env bash
# Picture-in-picture moved, resized and swapped through the API while both zones play: the drops of
# each zone before and after (docs/BENCHMARKS.md, "Picture-in-picture moves"). A headless `scanout
# serve` with a 640x360 screen of two zones, the counter clip in each (the main zone full screen,
# the PiP 35%), on a free loopback port; 6 s idle, then 20 moves-and-resizes and 20 swaps over
# about 6 s. Builds nothing: run `swift build` first (SCANOUT_BIN names another binary).
#   tools/bench-pip.sh
set -euo pipefail
cd "$(dirname "$0")/.."
exe=${SCANOUT_BIN:-.build/debug/scanout}
[[ -x $exe ]] || { echo "bench-pip: $exe is missing; run swift build first" >&2; exit 1; }
tools/make-fixtures.sh .fixtures
work=$(mktemp -d /tmp/scanout-pip.XXXXXX)
pid=
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
clip="$PWD/.fixtures/counter.mp4"
cat >"$work/scanout.json" <<JSON
{"rateLimit": null, "unixSocket": null, "repeat": "all", "playlist": ["$clip"],
 "layout": {"width": 640, "height": 360, "zones": [{"id": "main"},
   {"id": "pip", "x": "60%", "y": "60%", "width": "35%", "height": "35%", "z": 1, "playlist": ["$clip"]}]}}
JSON
"$exe" serve --config "$work/scanout.json" --host 127.0.0.1 --port 0 --output headless 2>"$work/serve.log" &
pid=$!
port=
for _ in $(seq 1 200); do
  port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$work/serve.log" | head -n1)
  [[ -n $port ]] && break
  sleep 0.1
done
[[ -n $port ]] || { cat "$work/serve.log" >&2; echo "bench-pip: scanout serve did not listen" >&2; exit 1; }
api="http://127.0.0.1:$port"
figures() {
  curl -s "$api/stats" | python3 -c "import json, sys
d = json.load(sys.stdin)
zones = ['%s: %d presented, %d dropped' % (z['id'], z['stats']['framesPresented'], z['stats']['framesDropped']) for z in d['zones']]
print('  '.join(zones), '  composed:', d['screen']['composed'])"
}
sleep 3
echo "start:            $(figures)"
sleep 6
echo "after 6 s idle:   $(figures)"
for i in $(seq 1 20); do
  curl -s -o /dev/null -X PUT -H 'Content-Type: application/json' -d "{\"x\": $((i * 20)), \"y\": $((i * 5)), \"width\": \"$((20 + i))%\"}" "$api/zones/pip"
  sleep 0.1
  curl -s -o /dev/null -H 'Content-Type: application/json' -d '{"a": "main", "b": "pip"}' "$api/zones/swap"
  sleep 0.2
done
echo "after 20 moves and 20 swaps: $(figures)"
