#!/usr/bin/env python3
"""Holds thousands of connections against `scanout serve` and checks that it goes on playing.

Starts `scanout serve` (the release build when there is one, else the debug build; --binary to
choose) headless on a free loopback port, playing a clip in a loop, with the unit's file limits
(soft 1024, hard --nofile, as systemd gives a unit with LimitNOFILE=; serve raises its soft limit
itself) and no rate limit (every client here is 127.0.0.1, which would share one bucket). Then:

  1. opens --idle keep-alive connections (each asks GET /health once, then stays silent) and
     --streams event streams (GET /events, read as they come), in batches;
  2. for --seconds, asks GET /health on a new connection every 100 ms, as a monitor would, and
     times each answer;
  3. reads /stats before and after: frames presented and dropped while the load was held.

Prints the figures and exits 1 when playback stopped, a frame was dropped, or a connection of the
load was refused or closed early; the /health latency is reported against the 100 ms target.
Loopback only; bounded: it stops by itself after --seconds plus the time to connect (at most
--timeout seconds in all). Needs python3 (no packages).

    tools/load.py [--idle 5000] [--streams 2000] [--seconds 30] [--binary PATH] [--nofile 65536]
"""
import argparse
import asyncio
import json
import multiprocessing
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_binary():
    for b in ("release", "debug"):
        p = os.path.join(ROOT, ".build", b, "scanout")
        if os.access(p, os.X_OK):
            return p
    sys.exit("load: no .build/release/scanout or .build/debug/scanout; run swift build first")


async def http_get(port, path, timeout=10.0):
    """One GET on a new connection: (status, body, seconds)."""
    start = time.monotonic()
    r, w = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
    try:
        w.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = await asyncio.wait_for(r.read(), timeout)
    finally:
        w.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head else 0
    return status, body, time.monotonic() - start


async def read_answer(r):
    """Reads one answer with a Content-Length body off a kept-alive connection: its status."""
    head = await r.readuntil(b"\r\n\r\n")
    m = re.search(rb"(?i)content-length:\s*(\d+)", head)
    if m:
        await r.readexactly(int(m.group(1)))
    return int(head.split(b" ", 2)[1])


class Load:
    def __init__(self, port):
        self.port = port
        self.writers = []
        self.tasks = []
        self.failed = 0
        self.closed_early = 0
        self.holding = True
        self.events_bytes = 0

    async def idle(self):
        try:
            r, w = await asyncio.open_connection("127.0.0.1", self.port)
            w.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            status = await asyncio.wait_for(read_answer(r), 30)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
            self.failed += 1
            return
        if status != 200:
            self.failed += 1
        self.writers.append(w)
        self.tasks.append(asyncio.create_task(self.watch(r)))

    async def stream(self):
        try:
            r, w = await asyncio.open_connection("127.0.0.1", self.port)
            w.write(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            head = await asyncio.wait_for(r.readuntil(b"\r\n\r\n"), 30)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
            self.failed += 1
            return
        if int(head.split(b" ", 2)[1]) != 200:
            self.failed += 1
        self.writers.append(w)
        self.tasks.append(asyncio.create_task(self.watch(r)))

    async def watch(self, r):
        """Drains what the server sends; counts a close before the load is let go."""
        try:
            while True:
                chunk = await r.read(65536)
                if not chunk:
                    break
                self.events_bytes += len(chunk)
        except (OSError, asyncio.CancelledError):
            pass
        if self.holding:
            self.closed_early += 1

    async def open(self, count, make, batch=250):
        for i in range(0, count, batch):
            await asyncio.gather(*(make() for _ in range(min(batch, count - i))))

    def release(self):
        self.holding = False
        for w in self.writers:
            w.close()
        for t in self.tasks:
            t.cancel()


async def stats(port):
    status, body, _ = await http_get(port, "/stats")
    if status != 200:
        raise RuntimeError(f"/stats answered {status}")
    return json.loads(body)


async def run(args, port):
    before = await stats(port)
    load = Load(port)
    t0 = time.monotonic()
    await load.open(args.idle, load.idle)
    await load.open(args.streams, load.stream)
    opened = time.monotonic() - t0
    after_open = await stats(port)
    # The monitor runs in a process of its own, so that this loop's work on 7,000 sockets does
    # not count in the latency it measures.
    with multiprocessing.Pool(1) as pool:
        latencies, bad = await asyncio.get_running_loop().run_in_executor(None, pool.apply, probe, (port, args.seconds))
    after = await stats(port)
    _, state_body, _ = await http_get(port, "/state")
    state = json.loads(state_body).get("state")
    held = len(load.writers) - load.closed_early
    load.release()
    return dict(before=before, after_open=after_open, after=after, opened=opened, latencies=latencies, bad=bad,
                failed=load.failed, closed_early=load.closed_early, held=held, state=state,
                events_bytes=load.events_bytes)


def probe(port, seconds):
    """GET /health on a new connection every 100 ms for `seconds`: (latencies in s, answers not 200)."""
    latencies, bad = [], 0
    first = time.monotonic()
    end = first + seconds
    while time.monotonic() < end:
        start = time.monotonic()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                data = b""
                while chunk := s.recv(65536):
                    data += chunk
            latencies.append(time.monotonic() - start)
            if os.environ.get("SCANOUT_LOAD_TRACE") and latencies[-1] > 0.1:
                print(f"  slow /health: {latencies[-1] * 1000:.0f} ms at +{start - first:.2f} s", file=sys.stderr)
            if not data.startswith(b"HTTP/1.1 200"):
                bad += 1
        except OSError:
            bad += 1
        time.sleep(0.1)
    return latencies, bad


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--idle", type=int, default=5000)
    ap.add_argument("--streams", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--binary", default=None)
    ap.add_argument("--clip", default=os.path.join(ROOT, ".fixtures", "counter.mp4"))
    ap.add_argument("--nofile", type=int, default=65536, help="the hard file limit given to serve (the unit's LimitNOFILE)")
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args()
    binary = args.binary or default_binary()
    if not os.path.exists(args.clip):
        subprocess.run([os.path.join(ROOT, "tools", "make-fixtures.sh"), os.path.join(ROOT, ".fixtures")], check=True)
    need = args.idle + args.streams + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(need, soft), max(need, hard)))
    except (ValueError, OSError):
        sys.exit(f"load: this shell's file limit ({soft}/{hard}) is under the {need} descriptors the load needs (ulimit -n)")
    nofile = args.nofile

    def unit_limits():
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (1024, nofile))
        except (ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (1024, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    work = tempfile.mkdtemp(prefix="scanout-load.")
    log_path = os.path.join(work, "serve.log")
    with open(os.path.join(work, "scanout.json"), "w") as f:
        json.dump({"rateLimit": None}, f)
    log = open(log_path, "w")
    serve = subprocess.Popen([binary, "serve", "--config", os.path.join(work, "scanout.json"), "--host", "127.0.0.1", "--port", "0",
                              "--no-socket", "--output", "headless", "--state-dir", os.path.join(work, "state"), "--repeat", "all",
                              args.clip], stdout=subprocess.DEVNULL, stderr=log, preexec_fn=unit_limits)
    try:
        port = None
        for _ in range(300):
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", open(log_path).read())
            if m:
                port = int(m.group(1))
                break
            if serve.poll() is not None:
                break
            time.sleep(0.1)
        if port is None:
            sys.exit("load: scanout serve did not start:\n" + open(log_path).read()[-2000:])
        limit_line = next((l for l in open(log_path) if "file limit" in l), "").strip()
        time.sleep(1)  # the first frames
        r = asyncio.run(asyncio.wait_for(run(args, port), args.timeout))
    finally:
        serve.terminate()
        try:
            serve.wait(15)
        except subprocess.TimeoutExpired:
            serve.kill()
        log.close()
    presented = r["after"]["framesPresented"] - r["after_open"]["framesPresented"]
    dropped = r["after"]["framesDropped"] - r["before"]["framesDropped"]
    lat = [x * 1000 for x in r["latencies"]]
    print(f"binary: {binary}")
    print(f"serve: {limit_line.split('] ', 1)[-1]}")
    print(f"load: {args.idle} idle connections + {args.streams} event streams opened in {r['opened']:.1f} s; "
          f"{r['held']} held for {args.seconds:.0f} s, {r['failed']} refused or failed, {r['closed_early']} closed early; "
          f"{r['events_bytes']} bytes of events read")
    print(f"playback: state {r['state']}, {presented} frames presented while held, "
          f"{dropped} dropped during the run (framesPresented {r['before']['framesPresented']} -> {r['after']['framesPresented']})")
    if lat:
        print(f"/health on a new connection every 100 ms: {len(lat)} answers, {r['bad']} not 200; "
              f"p50 {statistics.median(lat):.1f} ms, p99 {percentile(lat, 99):.1f} ms, max {max(lat):.1f} ms "
              f"(target under 100 ms: {'met' if max(lat) < 100 else 'not met'})")
    shutil.rmtree(work, ignore_errors=True)
    ok = r["state"] == "playing" and presented > 0 and dropped == 0 and r["failed"] == 0 and r["closed_early"] == 0 and r["bad"] == 0
    print("load: " + ("passed" if ok else "FAILED"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
