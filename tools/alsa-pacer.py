#!/usr/bin/env python3
"""Consumes raw s16 interleaved audio from a FIFO at real time, as a sound card would, and logs
when each beep starts: the CLOCK_MONOTONIC nanosecond at which its first sample is consumed.

  alsa-pacer.py LOG RATE CHANNELS FIFO &
  scanout play ... --audio-device file:FILE=FIFO,FORMAT=raw

The pacer makes FIFO and shrinks it to one page (4096 bytes: 21 ms at 48 kHz stereo) before the
player opens it, so it paces the writer the way a card's buffer does; it stands in for the capture
of a loopback device. Each line of LOG:
`onset_ns level`; a beep is a sample above 1000 after at least 0.25 s below it.
"""
import array, fcntl, os, sys, time

log = open(sys.argv[1], "w")
rate = int(sys.argv[2])
channels = int(sys.argv[3])
fifo = sys.argv[4]
if os.path.exists(fifo):
    os.unlink(fifo)
os.mkfifo(fifo)
fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
fcntl.fcntl(fd, 1031, 4096)   # F_SETPIPE_SZ: one page
fcntl.fcntl(fd, fcntl.F_SETFL, 0)
frame_bytes = 2 * channels
start = None
consumed = 0                 # frames consumed so far
last_loud = -rate            # frame index of the last sample above the threshold
threshold = 1000
pending = b""
while True:
    data = os.read(fd, 1024 * frame_bytes)
    if not data:
        if start is None:        # no writer yet
            time.sleep(0.005)
            continue
        break
    data = pending + data
    n = len(data) // frame_bytes
    pending = data[n * frame_bytes:]
    if n == 0:
        continue
    if start is None:
        start = time.monotonic_ns()
    # The frames of this read are heard from start + consumed / rate on.
    due = start + consumed * 1_000_000_000 // rate
    now = time.monotonic_ns()
    if now < due:
        time.sleep((due - now) / 1e9)
    elif now - due > 50_000_000:
        start += now - due   # the writer was late: a card would have played silence meanwhile
        due = now
    left = array.array("h", data[: n * frame_bytes])[0::channels]
    if max(left) > threshold or -min(left) > threshold:
        for i, v in enumerate(left):
            if abs(v) > threshold:
                if consumed + i - last_loud > rate // 4:
                    log.write("%d %d\n" % (due + i * 1_000_000_000 // rate, abs(v)))
                    log.flush()
                last_loud = consumed + i
    consumed += n
