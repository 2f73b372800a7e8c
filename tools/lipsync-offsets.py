#!/usr/bin/env python3
"""Flash-to-beep offsets of one run over tools/make-clips.sh's flash-beep.mp4.

  lipsync-offsets.py PRESENT_LOG ONSET_LOG [PERIOD_SECONDS]

PRESENT_LOG: `scanout play --present-log` lines (media seconds, CLOCK_MONOTONIC ns after the frame
was presented); ONSET_LOG: tools/alsa-pacer.py's (ns at which each beep's first sample was
consumed). A flash is a frame whose media time is a multiple of PERIOD (2 s); each is paired with
the onset nearest it. Offset = flash shown − beep heard (positive: the picture is late).
"""
import statistics, sys

period = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
frames = [(float(a), int(b)) for a, b in (l.split() for l in open(sys.argv[1]))]
onsets = [int(l.split()[0]) for l in open(sys.argv[2])]
flashes = [(m, t) for m, t in frames if abs(m / period - round(m / period)) < 1e-3]
offsets = []
for m, t in flashes:
    o = min(onsets, key=lambda x: abs(x - t))
    if abs(o - t) < period * 1e9 / 2:
        offsets.append((m, (t - o) / 1e6))
for m, d in offsets:
    print("flash at %7.3f s: %+7.1f ms" % (m, d))
ds = [d for _, d in offsets]
if ds:
    print("flashes %d, beeps %d, paired %d; offset ms: mean %+.1f, median %+.1f, min %+.1f, max %+.1f, max |offset| %.1f"
          % (len(flashes), len(onsets), len(ds), statistics.mean(ds), statistics.median(ds), min(ds), max(ds), max(abs(d) for d in ds)))
