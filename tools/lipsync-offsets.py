#!/usr/bin/env python3
"""Flash-to-beep offsets of one run over tools/make-clips.sh's flash-beep.mp4.

  lipsync-offsets.py PRESENT_LOG ONSET_LOG [PERIOD_SECONDS]

PRESENT_LOG: `scanout play|serve --present-log` lines (media seconds, CLOCK_MONOTONIC ns the frame
reached the screen, ns it was aimed at); ONSET_LOG: tools/vm/loopback-capture.c's or
tools/alsa-pacer.py's (ns at which each beep's first sample was played). A flash is a frame whose
media time is a multiple of PERIOD (2 s); each is paired with the onset nearest it. Offset = flash
shown − beep heard (positive: the picture is late). Also printed: how far from its aim every frame
reached the screen (shown − aimed), which separates the display's part from the audio clock's.
"""
import statistics, sys

period = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
onsets = [int(l.split()[0]) for l in open(sys.argv[2])]
rows = [l.split() for l in open(sys.argv[1])]
frames = [(float(r[0]), int(r[1])) for r in rows]
aims = [(int(r[1]) - int(r[2])) / 1e6 for r in rows if len(r) > 2 and int(r[2]) > 0]
flashes = [(m, t) for m, t in frames if abs(m / period - round(m / period)) < 1e-3]
offsets = []
for m, t in flashes:
    o = min(onsets, key=lambda x: abs(x - t)) if onsets else t + period * 1e9
    if abs(o - t) < period * 1e9 / 2:
        offsets.append((m, (t - o) / 1e6))
for m, d in offsets:
    print("flash at %7.3f s: %+7.1f ms" % (m, d))
if aims:
    q = sorted(aims)
    print("frames %d, shown - aimed ms: median %+.1f, p5 %+.1f, p95 %+.1f, min %+.1f, max %+.1f"
          % (len(q), statistics.median(q), q[len(q) // 20], q[len(q) * 19 // 20], q[0], q[-1]))
ds = [d for _, d in offsets]
if not ds:
    print("flashes %d, beeps %d, paired 0" % (len(flashes), len(onsets)))
else:
    print("flashes %d, beeps %d, paired %d; offset ms: mean %+.1f, median %+.1f, min %+.1f, max %+.1f, max |offset| %.1f"
          % (len(flashes), len(onsets), len(ds), statistics.mean(ds), statistics.median(ds), min(ds), max(ds), max(abs(d) for d in ds)))
