#!/usr/bin/env python3
"""Consumes raw s16 interleaved audio from stdin at real time, as a sound card would, and logs
when each beep starts: the CLOCK_MONOTONIC nanosecond at which its first sample is consumed.

Used as the far end of ALSA's file plugin (`file:FILE="|tools/alsa-pacer.py LOG RATE CHANNELS"`),
it paces the writer (the pipe is shrunk to one page, so the writer blocks within ~21 ms at 48 kHz
stereo) and stands in for the capture of a loopback device. Each line of LOG: `onset_ns level`.
"""
import fcntl, os, struct, sys, time

log = open(sys.argv[1], "w")
rate = int(sys.argv[2]) if len(sys.argv) > 2 else 48000
channels = int(sys.argv[3]) if len(sys.argv) > 3 else 2
try:
    fcntl.fcntl(0, 1031, 4096)  # F_SETPIPE_SZ
except OSError:
    pass
frame_bytes = 2 * channels
block = 256 * frame_bytes
start = None
consumed = 0           # frames consumed so far
silent = rate          # frames of silence before the current sample
threshold = 1000
while True:
    data = os.read(0, block)
    if not data:
        break
    if start is None:
        start = time.monotonic_ns()
    n = len(data) // frame_bytes
    # The frames of this read are "heard" from start + consumed / rate on.
    due = start + consumed * 1_000_000_000 // rate
    now = time.monotonic_ns()
    if now < due:
        time.sleep((due - now) / 1e9)
    elif now - due > 50_000_000:
        start += now - due  # an underrun: the card would have played silence meanwhile
        due = now
    samples = struct.unpack("<%dh" % (n * channels), data[: n * frame_bytes])
    for i in range(n):
        v = abs(samples[i * channels])
        if v > threshold:
            if silent > rate // 4:
                log.write("%d %d\n" % (due + i * 1_000_000_000 // rate, v))
                log.flush()
            silent = 0
        else:
            silent += 1
    consumed += n
