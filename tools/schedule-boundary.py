#!/usr/bin/env python3
"""How late a schedule's switch reaches the screen, in real time.

tools/schedule-boundary.py --scanout PATH --default CLIP --slot CLIP [--trials 3] [--refresh 60]

Starts `scanout serve` headless at --refresh Hz with a present log, the default clip looping, and a
schedule (time zone UTC) whose slots play the slot clip for 5 s every 10 s from 8 s after the
start. For every slot's start (a wall-clock second), the first frame of the slot clip in the
present log (its media time 0, the clip going on past the default's length) less that second,
on one clock (CLOCK_MONOTONIC, the log's, against CLOCK_REALTIME read beside it), and in
refreshes of the output; and how long the frame before it was held. The slot clip must be longer
than 3.3 s and the default one shorter.
"""
import argparse, json, os, subprocess, sys, tempfile, time


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--scanout", required=True)
    a.add_argument("--default", required=True)
    a.add_argument("--slot", required=True)
    a.add_argument("--trials", type=int, default=3)
    a.add_argument("--refresh", type=float, default=60)
    o = a.parse_args()
    work = tempfile.mkdtemp(prefix="schedule-boundary-")
    start = int(time.time()) + 8
    slots = []
    for k in range(o.trials):
        s = start + 10 * k
        hms = lambda t: time.strftime("%H:%M:%S", time.gmtime(t))
        slots.append({"id": f"s{k}", "start": hms(s), "end": hms(s + 5), "playlist": [o.slot]})
    config = {"output": "headless", "outputRefresh": o.refresh, "port": 0, "unixSocket": f"{work}/s.sock", "playlist": [o.default],
              "repeat": "all", "presentLog": f"{work}/present.log", "stateDir": f"{work}/state",
              "schedule": {"timeZone": "UTC", "slots": slots}}
    with open(f"{work}/config.json", "w") as f:
        json.dump(config, f)
    # The log's clock against the wall clock, read together (the smallest gap of a few reads).
    pairs = []
    for _ in range(5):
        m0 = time.monotonic_ns(); r = time.time_ns(); m1 = time.monotonic_ns()
        pairs.append((m1 - m0, r - (m0 + m1) // 2))
    offset = min(pairs)[1]   # realtime - monotonic
    serve = subprocess.Popen([o.scanout, "serve", "--config", f"{work}/config.json"], stdout=subprocess.DEVNULL,
                             stderr=open(f"{work}/stderr", "w"))
    try:
        time.sleep(start + 10 * o.trials - time.time() + 2)
    finally:
        serve.terminate()
        serve.wait(10)
    lines = [l.split() for l in open(f"{work}/present.log")]
    frames = [(float(m), int(t)) for m, t, _ in lines]
    period = 1e9 / o.refresh
    results = []
    for k in range(o.trials):
        boundary = (start + 10 * k) * 10**9 - offset   # on the monotonic clock
        first = None
        for i, (m, t) in enumerate(frames):
            if t < boundary - 1e9 or m > 0.05:
                continue
            # The slot clip: from media 0 on past the default's length without going back.
            after = [x for x, _ in frames[i:i + 110]]
            if t >= boundary - 1e9 and max(after) > 3.3 and all(b >= c for b, c in zip(after[1:], after)):
                first = t
                break
        if first is None:
            results.append({"slot": k, "late": None})
            continue
        late = (first - boundary) / 1e6
        before = max((t for _, t in frames if t < first), default=first)
        results.append({"slot": k, "lateMs": round(late, 2), "lateRefreshes": round(late * 1e6 / period, 2),
                        "heldBeforeMs": round((first - before) / 1e6, 1)})
    # How long the picture before the switch was held: the last frame of the default shown
    # before the slot's first, to that first.
    print(json.dumps({"refresh": o.refresh, "results": results}))
    if os.environ.get("KEEP"):
        print(work, offset, start)
    else:
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
