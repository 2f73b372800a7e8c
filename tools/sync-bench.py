#!/usr/bin/env python3
"""Screens in lockstep, measured: N `scanout serve` members of one sync group on this machine.

tools/sync-bench.py --scanout PATH [--members 4] [--seconds 600] [--delay-ms 5 --jitter-ms 2 --loss 0.01]
                    [--failover-at S] [--rejoin MEMBER@S] [--json OUT] [--workdir DIR] [--keep]

Runs itself in a network namespace of its own (`unshare -n`, root), with loopback up and a route
for 239.0.0.0/8. Every member is headless with a refresh rate of its own (59.94, 60.00, 60.03,
60.06 Hz: free-running vblanks, each its own phase), a clock skewed through the test seam
SCANOUT_SYNC_CLOCK_SKEW (seconds off and ±100 ppm), and sends its sync datagrams to a relay in
this process, which hands each one to every other member after a delay (--delay-ms ± --jitter-ms,
uniform, as netem's `delay D J`) or drops it (--loss, each copy on its own): netem is missing from
this kernel.
Member 0 has the highest priority and leads; --failover-at kills it (SIGKILL) at that second;
--rejoin kills member K at S seconds and starts it again at once.

The clip is made here (ffmpeg testsrc2, 320x180, 30 fps, a keyframe every 2 s, as long as the
run). Figures come from the members' present logs, all on one CLOCK_MONOTONIC: each line is a
frame's media time, when it reached the member's screen (its vblank), and when the member meant
it to be due (its estimate of the group's timeline). The group's timeline is the leader's due
times. For each member and frame:
  error   = shown - due on the leader's timeline: within half the member's refresh when the
            frame is at its vblank nearest its due time ("0 frames apart" from the group);
  offset  = the member's due - the leader's due: the timeline offset without the vblank phase;
and for each frame shown by every member, spread = last shown - first shown.
Locked: from the first frame that starts 2 s of frames all within half a refresh (+1 ms, the
clock's error) of due; after it, a frame further off is a present that missed its vblank (one
alone) or a member off the group (several in a row). Prints a summary and writes --json.

--check (CI's short run) fails unless: every member that started with the group is locked within
2 s of the group's first frame, a member restarted (--rejoin) within 3 s of its restart; after
that no two frames in a row off their vblank nearest the due time (0 frames apart from the
group, but for a lone present that missed its vblank on a loaded machine: counted, at most 0.5 %);
a failover leaves every member within 1 frame of the group's timeline; the timeline offset's p99
is at most --offset-limit ms once a member has played 10 s (2 by default: in a 30-s run a member
restarted at 10 s has 20 s of exchanges, across a change of leader, and was seen at 1.10 ms; the
10-minute run's 0.46 to 0.61 ms is where the 1 ms target is judged); every member alive at the end
says it is locked (GET /sync), the one that took over leading.
"""
import argparse, heapq, json, os, random, signal, socket, statistics, subprocess, sys, threading, time

REFRESH = [59.94, 60.00, 60.03, 60.06]
SKEW = [(0.0, 0.0), (3.2, 100.0), (-1.7, -100.0), (7.5, 45.0)]
GROUP, PORT0, RELAY = "239.255.42.42", 6100, 6099


def args():
    a = argparse.ArgumentParser()
    a.add_argument("--scanout", required=True)
    a.add_argument("--members", type=int, default=4)
    a.add_argument("--seconds", type=float, default=600)
    a.add_argument("--delay-ms", type=float, default=0)
    a.add_argument("--jitter-ms", type=float, default=0)
    a.add_argument("--loss", type=float, default=0)
    a.add_argument("--failover-at", type=float)
    a.add_argument("--rejoin", help="MEMBER@SECONDS")
    a.add_argument("--json")
    a.add_argument("--workdir")
    a.add_argument("--keep", action="store_true")
    a.add_argument("--seed", type=int, default=1)
    a.add_argument("--check", action="store_true", help="exit 1 unless the targets are met (below)")
    a.add_argument("--offset-limit", type=float, default=2.0, help="--check: the timeline offset's p99 allowed (ms)")
    return a.parse_args()


class Relay(threading.Thread):
    """Hands each member's datagram to every other member after a delay, or drops it."""

    def __init__(self, members, delay, jitter, loss, seed):
        super().__init__(daemon=True)
        self.ports = [PORT0 + i for i in range(members)]
        self.delay, self.jitter, self.loss = delay / 1000, jitter / 1000, loss
        self.rand = random.Random(seed)
        self.inbound = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.inbound.bind(("127.0.0.1", RELAY))
        self.out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.out.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
        self.out.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
        self.queue, self.lock, self.wake = [], threading.Lock(), threading.Event()
        self.forwarded = self.dropped = self.n = 0
        threading.Thread(target=self.sender, daemon=True).start()

    def run(self):
        while True:
            data, (_, port) = self.inbound.recvfrom(4096)
            now = time.monotonic()
            with self.lock:
                for p in self.ports:
                    if p == port:
                        continue
                    if self.rand.random() < self.loss:
                        self.dropped += 1
                        continue
                    # netem's `delay D J`: uniform in D ± J (its default distribution).
                    d = max(0.0, self.delay + self.rand.uniform(-self.jitter, self.jitter))
                    self.n += 1
                    heapq.heappush(self.queue, (now + d, self.n, p, data))
            self.wake.set()

    def sender(self):
        while True:
            with self.lock:
                due = self.queue[0][0] if self.queue else None
            if due is None:
                self.wake.wait(0.05)
                self.wake.clear()
                continue
            wait = due - time.monotonic()
            if wait > 0:
                self.wake.wait(min(wait, 0.05))
                self.wake.clear()
                continue
            with self.lock:
                _, _, port, data = heapq.heappop(self.queue)
            self.out.sendto(data, (GROUP, port))
            self.forwarded += 1


def make_clip(path, seconds):
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size=320x180:rate=30:duration={seconds}",
                    "-c:v", "libx264", "-preset", "ultrafast", "-g", "60", "-pix_fmt", "yuv420p", path], check=True)


class Member:
    def __init__(self, i, o, work, clip):
        self.i, self.o, self.work, self.clip = i, o, work, clip
        self.proc, self.starts = None, []

    def config(self, run):
        return {"output": "headless", "outputRefresh": REFRESH[self.i % 4], "port": 0, "unixSocket": self.socket,
                "playlist": [self.clip], "presentLog": self.log(run), "stateDir": f"{self.work}/state{self.i}-{run}", "logLevel": "notice",
                "sync": {"group": "bench", "key": "sync-bench-shared-key", "role": "auto", "priority": 1000 - self.i,
                         "port": PORT0 + self.i, "interface": "lo", "sendTo": f"127.0.0.1:{RELAY}"}}

    @property
    def socket(self):
        return f"{self.work}/m{self.i}.sock"

    def log(self, run):
        return f"{self.work}/present{self.i}-{run}.log"

    def start(self):
        run = len(self.starts)
        path = f"{self.work}/m{self.i}-{run}.json"
        with open(path, "w") as f:
            json.dump(self.config(run), f)
        env = dict(os.environ, SCANOUT_SYNC_CLOCK_SKEW="%g:%g" % SKEW[self.i % 4])
        err = open(f"{self.work}/m{self.i}-{run}.stderr", "w")
        self.proc = subprocess.Popen([self.o.scanout, "serve", "--config", path], env=env, stdout=subprocess.DEVNULL, stderr=err)
        self.starts.append(time.monotonic_ns())

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def sync_state(self):
        """GET /sync over the member's Unix socket; None when it does not answer."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(2)
                s.connect(self.socket)
                s.sendall(b"GET /sync HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                data = b""
                while chunk := s.recv(65536):
                    data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            if b"chunked" in head.lower():
                out, rest = b"", body
                while rest:
                    size, _, rest = rest.partition(b"\r\n")
                    n = int(size, 16)
                    if n == 0:
                        break
                    out, rest = out + rest[:n], rest[n + 2:]
                body = out
            return json.loads(body)
        except Exception:
            return None


def read_log(path):
    frames = []
    try:
        for line in open(path):
            p = line.split()
            if len(p) == 3:
                frames.append((round(float(p[0]) * 30), int(p[1]), int(p[2])))
    except FileNotFoundError:
        pass
    return frames


def pct(values, q):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


def analyse(o, members, failover_ns, start_ns):
    # Frames by member, across its runs: frame number -> (shown, due).
    shown = []
    for m in members:
        d = {}
        for run in range(len(m.starts)):
            for n, t, due in read_log(m.log(run)):
                d[n] = (t, due, run)
        shown.append(d)
    period = [1e9 / REFRESH[i % 4] for i in range(len(members))]

    def leader_at(t):
        return 1 if failover_ns is not None and t >= failover_ns else 0

    # The group's timeline: the leader's due times, as a line per leadership (fit on its frames).
    def line(i, lo, hi):
        pts = [(n, due) for n, (t, due, _) in shown[i].items() if due and lo <= t < hi]
        if not pts:
            return None
        return statistics.median(due - n * 1e9 / 30 for n, due in pts)
    end = max((t for d in shown for (t, _, _) in d.values()), default=start_ns)
    lines = [(start_ns, failover_ns or end + 1, line(0, start_ns, failover_ns or end + 1))]
    if failover_ns is not None:
        lines.append((failover_ns, end + 1, line(1, failover_ns, end + 1)))

    def due(n, t):
        for lo, hi, a in lines:
            if lo <= t < hi and a is not None:
                return a + n * 1e9 / 30
        return None

    report = {"members": []}
    for i, d in enumerate(shown):
        half = period[i] / 2 + 1e6
        seq = sorted((t, n, dd, run) for n, (t, dd, run) in d.items())
        errors = [(t, n, t - due(n, t), dd - due(n, t) if dd else None, run) for t, n, dd, run in seq if due(n, t) is not None]
        # Locked: from the first frame after which every frame (of that run) is within half a refresh.
        runs = {}
        for e in errors:
            runs.setdefault(e[4], []).append(e)
        member = {"refreshHz": REFRESH[i % 4], "skew": SKEW[i % 4], "frames": len(seq), "runs": []}
        for run, es in sorted(runs.items()):
            started = members[i].starts[run]
            # In lock from the first frame that starts 2 s (60 frames) all within half a refresh.
            lock_index = len(es)
            run_length = 0
            for k in range(len(es)):
                run_length = run_length + 1 if abs(es[k][2]) <= half else 0
                if run_length == 60:
                    lock_index = k - 59
                    break
            locked_at = (es[lock_index][0] - started) / 1e9 if lock_index < len(es) else None
            after = es[lock_index:]
            off = [abs(e[3]) / 1e6 for e in after if e[3] is not None and not (i == leader_at(e[0]))]
            settled = [abs(e[3]) / 1e6 for e in after if e[3] is not None and not (i == leader_at(e[0])) and e[0] - started > 10e9 + (es[0][0] - started)]
            first = (es[0][0] - started) / 1e9 if es else None
            member["runs"].append({
                "firstFrameAfter": first,
                "lockedAfter": locked_at,
                "framesAfterLock": len(after),
                "framesOffSlotAfterLock": sum(1 for e in after if abs(e[2]) > half),
                # Off two frames in a row: the member lost the group, not one present its vblank.
                "offSlotRunsAfterLock": sum(1 for a, b in zip(after, after[1:]) if abs(a[2]) > half and abs(b[2]) > half),
                "offSlotMsMax": max((abs(e[2]) / 1e6 for e in after if abs(e[2]) > half), default=None),
                "framesOffSlotBeforeLock": lock_index,
                "errorMsP99": pct([abs(e[2]) / 1e6 for e in after], 0.99),
                "errorMsMax": max((abs(e[2]) / 1e6 for e in after), default=None),
                "offsetMsP99": pct(off, 0.99), "offsetMsMax": max(off, default=None),
                "offsetMsP99From10s": pct(settled, 0.99), "offsetMsMaxFrom10s": max(settled, default=None)})
        report["members"].append(member)
    # Spread: frames shown by every member alive then.
    spreads = []
    common = set.intersection(*(set(d) for d in shown)) if shown else set()
    for n in common:
        ts = [d[n][0] for d in shown]
        spreads.append((max(ts) - min(ts)) / 1e6)
    report["framesCommon"] = len(common)
    report["spreadMs"] = {"p50": pct(spreads, 0.5), "p99": pct(spreads, 0.99), "max": max(spreads, default=None)}
    if failover_ns is not None:
        window = [abs(t - due(n, t)) / period[i] for i, d in enumerate(shown) if i != 0
                  for n, (t, _, _) in d.items() if failover_ns - 1e9 <= t <= failover_ns + 4e9 and due(n, t) is not None]
        report["failover"] = {"framesApartMax": max((round(w) for w in window), default=None),
                              "errorRefreshesMax": max(window, default=None)}
    return report


def main():
    o = args()
    if os.environ.get("SYNC_BENCH_NS") != "1":
        os.environ["SYNC_BENCH_NS"] = "1"
        os.execvp("unshare", ["unshare", "-n", sys.executable] + sys.argv)
    subprocess.run("ip link set lo up && ip route add 239.0.0.0/8 dev lo", shell=True, check=True)
    work = o.workdir or f"/tmp/sync-bench-{os.getpid()}"
    os.makedirs(work, exist_ok=True)
    clip = f"{work}/clip.mp4"
    make_clip(clip, int(o.seconds + 20))
    relay = Relay(o.members, o.delay_ms, o.jitter_ms, o.loss, o.seed)
    relay.start()
    members = [Member(i, o, work, clip) for i in range(o.members)]
    start = time.monotonic_ns()
    for m in members:
        m.start()
    rejoin = None
    if o.rejoin:
        k, s = o.rejoin.split("@")
        rejoin = (int(k), float(s))
    failover_ns = None
    events = sorted(([(o.failover_at, "failover")] if o.failover_at is not None else [])
                    + ([(rejoin[1], "rejoin")] if rejoin else []), key=lambda e: e[0])
    states = {}
    try:
        t0 = time.monotonic()
        for at, what in events:
            time.sleep(max(0, t0 + at - time.monotonic()))
            if what == "failover":
                states["beforeFailover"] = [m.sync_state() for m in members]
                members[0].kill()
                failover_ns = time.monotonic_ns()
            else:
                members[rejoin[0]].kill()
                members[rejoin[0]].start()
        time.sleep(max(0, t0 + o.seconds - time.monotonic()))
        states["end"] = [m.sync_state() for m in members]
    finally:
        for m in members:
            m.stop()
    report = analyse(o, members, failover_ns, start)
    report["relay"] = {"forwarded": relay.forwarded, "dropped": relay.dropped, "delayMs": o.delay_ms, "jitterMs": o.jitter_ms, "loss": o.loss}
    report["seconds"] = o.seconds
    report["sync"] = states
    text = json.dumps(report, indent=1)
    if o.json:
        with open(o.json, "w") as f:
            f.write(text)
    for i, m in enumerate(report["members"]):
        for r in m["runs"]:
            print(f"member {i} ({m['refreshHz']} Hz, {m['skew'][0]:+g} s, {m['skew'][1]:+g} ppm): first frame {r['firstFrameAfter']} s, "
                  f"locked {r['lockedAfter']} s after its start; after lock {r['framesAfterLock']} frames, {r['framesOffSlotAfterLock']} off "
                  f"their vblank (at most {r['offSlotMsMax']} ms from due; {r['offSlotRunsAfterLock']} twice in a row), error p99 {r['errorMsP99']} ms; timeline offset p99 {r['offsetMsP99']} ms, max {r['offsetMsMax']} ms, "
                  f"from 10 s p99 {r['offsetMsP99From10s']} ms")
    print(f"spread over {report['framesCommon']} frames: {report['spreadMs']}")
    if "failover" in report:
        print(f"failover: {report['failover']}")
    print(f"relay: {report['relay']}")
    if not o.keep and not o.workdir:
        subprocess.run(["rm", "-rf", work])
    if o.check:
        failures = check(report, o)
        for f in failures:
            print("FAIL: " + f)
        if failures:
            sys.exit(1)
        print("sync check passed")


def check(report, o):
    failures = []
    firsts = [r["firstFrameAfter"] for m in report["members"] for r in m["runs"][:1] if r["firstFrameAfter"] is not None]
    group_start = min(firsts) if firsts else None
    for i, m in enumerate(report["members"]):
        for run, r in enumerate(m["runs"]):
            if r["lockedAfter"] is None:
                failures.append(f"member {i} run {run}: never locked")
                continue
            limit, since = (2.0, group_start) if run == 0 else (3.0, 0.0)
            if since is not None and r["lockedAfter"] - since > limit:
                failures.append(f"member {i} run {run}: locked {r['lockedAfter'] - since:.3f} s after {'the group started' if run == 0 else 'its restart'} (at most {limit} s)")
            if r["offSlotRunsAfterLock"] > 0:
                failures.append(f"member {i} run {run}: {r['offSlotRunsAfterLock']} times two frames in a row off their vblank after lock")
            if r["framesOffSlotAfterLock"] > 0.005 * max(1, r["framesAfterLock"]):
                failures.append(f"member {i} run {run}: {r['framesOffSlotAfterLock']} of {r['framesAfterLock']} frames off their vblank after lock")
            if r["offsetMsP99From10s"] is not None and r["offsetMsP99From10s"] > o.offset_limit:
                failures.append(f"member {i} run {run}: timeline offset p99 {r['offsetMsP99From10s']:.3f} ms from 10 s (at most {o.offset_limit} ms)")
    if "failover" in report and (report["failover"]["framesApartMax"] or 0) > 1:
        failures.append(f"failover: {report['failover']['framesApartMax']} frames apart (at most 1)")
    for i, s in enumerate(report["sync"].get("end", [])):
        if s is None:
            continue
        if not s.get("locked"):
            failures.append(f"member {i}: GET /sync says it is not locked at the end")
        if o.failover_at is not None and i == 1 and not s.get("leading"):
            failures.append("member 1 does not lead after the failover")
    return failures


if __name__ == "__main__":
    main()
