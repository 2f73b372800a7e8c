#!/usr/bin/env python3
"""One command to a fleet: how long until every box has switched.

Starts a mosquitto broker on loopback and N `scanout serve` boxes (headless, 60 Hz, each with a
present log), all in the group `bench`. Each round publishes one command on
`scanout/group/bench/cmd` (a `/load` of the other of two 30 s clips) and takes, for every box,
the time from just before the publish to the first frame of the new item on its screen: the
first present-log line after the publish whose media time went back (the clip before was at
least a second in). All times are CLOCK_MONOTONIC (the present logs' and this script's).

    python3 tools/fleet-bench.py --scanout .build/release/scanout --boxes 10 --rounds 20

Prints every box's figures and the p50/p99/max over all; `--check MS` exits 1 when a box did not
switch or the p99 is above MS; `--all-switch` (CI) only when a box did not switch.
"""
import argparse, json, os, shutil, socket, subprocess, sys, tempfile, time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_clip(path, seconds, source):
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"{source}=size=160x90:rate=30:duration={seconds}",
                    "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-pix_fmt", "yuv420p", path], check=True)


def wait_port(port, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    sys.exit(f"fleet-bench: nothing listens on {port}")


def present_lines(path):
    """(media seconds, monotonic ns) of every complete line."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and line.endswith("\n"):
                    out.append((float(parts[0]), int(parts[1])))
    except FileNotFoundError:
        pass
    return out


def switched_at(lines, t0):
    """The monotonic ns of the first present after t0 whose media time went back."""
    before = None
    for media, t in lines:
        if t >= t0 and before is not None and media < before - 0.5:
            return t
        before = media
    return None


def percentile(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--scanout", default=".build/release/scanout")
    ap.add_argument("--boxes", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--interval", type=float, default=3.0, help="seconds between two commands")
    ap.add_argument("--check", type=float, help="exit 1 when the p99 is above this many ms or a box did not switch")
    ap.add_argument("--all-switch", action="store_true", help="exit 1 when a box did not switch (no figure asserted: CI)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    o = ap.parse_args()
    for tool in ("mosquitto", "mosquitto_pub", "ffmpeg"):
        if not shutil.which(tool):
            sys.exit(f"fleet-bench: {tool} is not installed (tools/setup.sh installs it)")
    work = tempfile.mkdtemp(prefix="fleet-bench-")
    clips = [f"{work}/a.mp4", f"{work}/b.mp4"]
    make_clip(clips[0], 30, "testsrc2")
    make_clip(clips[1], 30, "smptebars")
    port = free_port()
    with open(f"{work}/mosquitto.conf", "w") as f:
        f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
    broker = subprocess.Popen(["mosquitto", "-c", f"{work}/mosquitto.conf"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    boxes = []
    try:
        wait_port(port)
        for i in range(o.boxes):
            config = {"output": "headless", "outputSize": "160x90", "outputRefresh": 60, "port": 0, "unixSocket": f"{work}/b{i}.sock",
                      "playlist": [clips[0]], "repeat": "all", "presentLog": f"{work}/present{i}.log", "logLevel": "notice",
                      "stateDir": f"{work}/state{i}",
                      "mqtt": {"url": f"mqtt://127.0.0.1:{port}", "clientId": f"box{i}", "groups": ["bench"]}}
            with open(f"{work}/b{i}.json", "w") as f:
                json.dump(config, f)
            err = open(f"{work}/b{i}.stderr", "w")
            boxes.append(subprocess.Popen([o.scanout, "serve", "--config", f"{work}/b{i}.json"], stdout=subprocess.DEVNULL, stderr=err))
        # Every box playing, and connected (its status retained as online).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all(len(present_lines(f"{work}/present{i}.log")) > 60 for i in range(o.boxes)):
            time.sleep(0.2)
        status = subprocess.run(["mosquitto_sub", "-p", str(port), "-t", "scanout/+/status", "-v", "-W", "2"],
                                capture_output=True, text=True).stdout.split("\n")
        online = sum(1 for line in status if line.endswith(" online"))
        print(f"{o.boxes} boxes playing, {online} online at the broker")
        samples, missed = {i: [] for i in range(o.boxes)}, 0
        for r in range(o.rounds):
            clip = clips[(r + 1) % 2]
            payload = json.dumps({"id": f"round{r}", "path": "/load", "body": {"source": clip, "autoplay": True}})
            t0 = time.monotonic_ns()
            subprocess.run(["mosquitto_pub", "-p", str(port), "-t", "scanout/group/bench/cmd", "-q", "1", "-m", payload], check=True)
            time.sleep(o.interval)
            for i in range(o.boxes):
                t = switched_at(present_lines(f"{work}/present{i}.log"), t0)
                if t is None:
                    missed += 1
                else:
                    samples[i].append((t - t0) / 1e6)
        every = [v for s in samples.values() for v in s]
        for i in range(o.boxes):
            s = samples[i]
            if s:
                print(f"box{i}: {len(s)}/{o.rounds} switched, p50 {percentile(s, 50):.1f} ms, max {max(s):.1f} ms")
            else:
                print(f"box{i}: never switched")
        if every:
            print(f"all: {len(every)} switches of {o.boxes * o.rounds}, p50 {percentile(every, 50):.1f} ms, "
                  f"p99 {percentile(every, 99):.1f} ms, max {max(every):.1f} ms (from before mosquitto_pub starts to the new item's first present)")
        ok = missed == 0 and bool(every) and (o.check is None or percentile(every, 99) <= o.check)
        checked = o.check is not None or o.all_switch
        if checked:
            print("check:", "passed" if ok else f"FAILED ({missed} not switched)")
        return 0 if ok or not checked else 1
    finally:
        for b in boxes:
            b.terminate()
        for b in boxes:
            try:
                b.wait(10)
            except subprocess.TimeoutExpired:
                b.kill()
        broker.kill()
        if not o.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("kept", work)


if __name__ == "__main__":
    sys.exit(main())
