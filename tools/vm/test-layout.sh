#!/usr/bin/env bash
# Layouts on the real vkms driver: in the guest, `scanout play --layout L.json --output kms
# --capture DIR` composes a 2x2 layout of four frame-numbered clips on Virtual-1 at 640x480@60
# (the CPU renderer) and captures every committed frame through the writeback connector; then a
# portrait layout (rotation 90: a 480x640 canvas of two zones turned onto the mode). On the host,
# each capture is checked zone by zone: the zone's clip is known by the colour of its bar (each
# clip has its own), its frame by the binary code in its band, and the zone's pixels must equal
# the same zone of `scanout render --layout L.json --at T` (the CPU compositor) for that frame's
# time; a portrait capture is turned back first, as is its render. A zone may show its
# background only before its first frame; each zone must show at least two frames, in order.
#
# Builds nothing: run `swift build` first. Ends with `layout: N passed, M failed`.
#   SCANOUT_LAYOUT_FRAMES  frames per clip (default 120: 4 s at 30 fps)
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/vm/step-lib.sh
step_begin layout
frames=${SCANOUT_LAYOUT_FRAMES:-120}
colours=(FF0000 00FF00 0000FF FFFF00)
for i in 0 1 2 3; do
  ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi \
    -i "testsrc2=size=320x240:rate=30,format=yuv420p,drawbox=x=0:y=200:w=320:h=40:color=0x${colours[i]}:t=fill,$frame_band,trim=end_frame=$frames" \
    -c:v libx264 -threads 1 -preset veryfast -g 15 -bf 2 -pix_fmt yuv420p -fflags +bitexact -flags:v +bitexact "$work/clip$i.mp4"
done
zone() { # id x y clip
  printf '{"id": "%s", "x": %s, "y": %s, "width": 320, "height": 240, "playlist": ["%s"], "repeat": "none"}' "$1" "$2" "$3" "$work/clip$4.mp4"
}
cat > "$work/grid.json" <<EOF
{"width": 640, "height": 480, "background": "202020", "zones": [
  $(zone z0 0 0 0), $(zone z1 320 0 1), $(zone z2 0 240 2), $(zone z3 320 240 3)]}
EOF
cat > "$work/portrait.json" <<EOF
{"width": 480, "height": 640, "rotation": 90, "background": "202020", "zones": [
  $(zone top 80 60 0), $(zone bottom 80 340 3)]}
EOF

cmd=""
for l in grid portrait; do
  cmd+="echo '## $l'; $bin play --layout '$work/$l.json' --output kms --mode 640x480@60 --renderer cpu --capture '$work/$l' 2>&1 | $quiet; echo \"## $l status \${PIPESTATUS[0]}\"; "
done
guest_start=$SECONDS
guest_run 300
guest_seconds=$((SECONDS - guest_start))

# check_captures NAME: the zone-by-zone check of the captures of layout NAME (see the top).
check_captures() {
  python3 - "$work/$1" "$work/$1.json" "$bin" "$work/$1-refs" "${colours[@]}" <<'PY'
import json, os, subprocess, sys
caps, layout_path, binary, refs = sys.argv[1:5]
colours = [tuple(int(c[i:i + 2], 16) for i in (0, 2, 4)) for c in sys.argv[5:]]
layout = json.load(open(layout_path))
W, H, turn = layout["width"], layout["height"], layout.get("rotation", 0)
zones = [(z["id"], z["x"], z["y"], int(os.path.basename(z["playlist"][0])[4])) for z in layout["zones"]]

def upright(png):
    # The picture as the canvas is, upright: a capture of a screen turned 90 degrees clockwise is
    # turned back counter-clockwise (transpose=cclock).
    vf = ["-vf", "transpose=cclock"] if turn == 90 else []
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", png, *vf, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         capture_output=True, check=True).stdout
    assert len(out) == W * H * 3, f"{png}: {len(out)} bytes, not {W}x{H}"
    return out

def px(img, x, y): return img[3 * (y * W + x):3 * (y * W + x) + 3]
def rect(img, x, y): return b"".join(img[3 * ((y + r) * W + x):3 * ((y + r) * W + x + 320)] for r in range(240))
def code(img, x, y): return sum(1 << b for b in range(10) if sum(px(img, x + 32 * b + 16, y + 16)) / 3 > 128)
def is_clip(img, x, y, c): return all(abs(a - b) <= 40 for a, b in zip(px(img, x + 160, y + 220), c))

names = sorted(f for f in os.listdir(caps) if f.startswith("capture-") and f.endswith(".png"))
seen = {z[0]: [] for z in zones}
problems, shown, times = [], [], set()
for name in names:
    img = upright(os.path.join(caps, name))
    row = {}
    for zid, x, y, clip in zones:
        if rect(img, x, y) == bytes(320 * 240 * 3):   # the zone's own background: no frame yet
            if seen[zid]: problems.append(f"{name}: {zid} empty after frame {seen[zid][-1]}")
            continue
        n = code(img, x, y)
        if not is_clip(img, x, y, colours[clip]):
            problems.append(f"{name}: {zid} does not show clip{clip} (bar {tuple(px(img, x + 160, y + 220))})")
        if seen[zid] and n < seen[zid][-1]: problems.append(f"{name}: {zid} went back from frame {seen[zid][-1]} to {n}")
        seen[zid].append(n)
        row[zid] = n
        times.add((n + 0.5) / 30)
    shown.append((name, img, row))
# The references: the layout rendered by the CPU compositor at each frame's time.
times = sorted(times)
out = subprocess.run([binary, "render", "--layout", layout_path, "--at", ",".join(f"{t:.4f}" for t in times),
                      "--renderer", "cpu", "--out", refs], capture_output=True, text=True)
if out.returncode != 0: sys.exit(f"render --layout failed: {out.stderr}")
paths = [line.split()[0] for line in out.stdout.splitlines() if line.strip()]
reference = {round(t, 4): upright(p) for t, p in zip(times, paths)}
worst = 0
for name, img, row in shown:
    for zid, x, y, clip in zones:
        if zid not in row: continue
        got, want = rect(img, x, y), rect(reference[round((row[zid] + 0.5) / 30, 4)], x, y)
        if got != want:
            diff = max(abs(a - b) for a, b in zip(got, want))
            worst = max(worst, diff)
            problems.append(f"{name}: {zid} frame {row[zid]} differs from the render by up to {diff}")
for zid, ns in seen.items():
    print(f"zone {zid}: {len(ns)} captures, frames {ns[0] if ns else '-'}..{ns[-1] if ns else '-'}, {len(set(ns))} distinct")
    if len(set(ns)) < 2: problems.append(f"{zid}: fewer than two frames seen")
for p in problems[:20]: print("  " + p)
print(f"captures: {len(names)}; zones checked against render --layout: max diff {worst}; {len(problems)} problems")
sys.exit(1 if problems or not names else 0)
PY
}

check "grid: play --layout on kms exited 0" grep -q '^## grid status 0$' <<<"$out"
check "grid: the layout was composed on Virtual-1" grep -q '^layout .*grid.json: 4 zones on a 640x480 canvas, kms /dev/dri/card0 \[Virtual-1 640x480@60\]' <<<"$out"
check "grid: every zone played to its end" bash -c '[[ $(grep -c "^zone z[0-3]: ended, " <<<"$1") == 4 ]]' _ "$out"
echo "## grid captures"
check "grid: each zone's captures show its own clip's frames, equal to render --layout" check_captures grid
check "portrait: play --layout on kms exited 0" grep -q '^## portrait status 0$' <<<"$out"
check "portrait: the 480x640 canvas turned 90 on the 640x480 mode" grep -q '^layout .*portrait.json: 2 zones on a 480x640 canvas turned 90°' <<<"$out"
check "portrait: how it turns is said once" bash -c '[[ $(grep -cE "^rotation: (plane|compositor) .*on Virtual-1$" <<<"$1") == 1 ]]' _ "$out"
echo "## portrait captures"
check "portrait: the captures are the layout turned, each zone its own clip's frames" check_captures portrait
(( vm != 0 )) && { echo "test-layout: the guest run failed (status $vm)" >&2; failed=$((failed + 1)); }
echo "layout: $passed passed, $failed failed ($((SECONDS - start)) s; guest run $guest_seconds s)"
(( failed == 0 ))
