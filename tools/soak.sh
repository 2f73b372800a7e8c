#!/usr/bin/env bash
# Soak test of `scanout serve` on loopback: headless playlist looping (--repeat all) while 20 API
# clients (GET /state, /stats, /metrics; POST /pause + /play pairs) and 5 SSE subscribers on
# GET /events run for N minutes. Samples the server's RSS and open fds every 5 s.
#   tools/soak.sh [--minutes N] [--binary PATH] [--clip FILE]
# Prints one line per figure and a verdict; exits 1 when an API request failed (non-2xx other
# than 409), events were lost (an id hole or a `gap` event), an SSE stream broke, the server
# died, fds grew by more than 2 or RSS by more than 8 MB after warm-up (lowest sample of the first and
# last 2 minutes after the warm-up: the first 2 minutes, or the first 40% of a shorter run).
# Dropped frames and latency are reported, not asserted.
# Needs bash and python3 (standard library) only.
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=60; BINARY=.build/debug/scanout; CLIP=.fixtures/counter.mp4
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) MINUTES=$2; shift 2 ;;
    --binary) BINARY=$2; shift 2 ;;
    --clip) CLIP=$2; shift 2 ;;
    -h|--help) sed -n 2,10p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$BINARY" ] || { echo "soak: $BINARY is not an executable (swift build, or pass --binary PATH)" >&2; exit 2; }
[ -f "$CLIP" ] || { echo "soak: $CLIP is missing (tools/make-fixtures.sh .fixtures, or pass --clip FILE)" >&2; exit 2; }
exec python3 - "$MINUTES" "$BINARY" "$CLIP" <<'PY'
import http.client, json, os, random, signal, subprocess, sys, tempfile, threading, time

minutes, binary, clip = float(sys.argv[1]), sys.argv[2], sys.argv[3]
duration = minutes * 60
# The heap settles for up to about 2 minutes under this load (a debug build on a loaded machine
# was still climbing at 105 s), so growth is counted from there.
warmup = min(120.0, 0.4 * duration)
API_CLIENTS, SSE_CLIENTS, SAMPLE_S = 20, 5, 5.0
FD_LIMIT, RSS_LIMIT_MB = 2, 8.0

workdir = tempfile.mkdtemp(prefix="scanout-soak-")
config = os.path.join(workdir, "scanout.json")
with open(config, "w") as f:
    f.write("{}\n")  # defaults only: not /etc/scanout/scanout.json
logpath = os.path.join(workdir, "serve.log")
log = open(logpath, "w")
server = subprocess.Popen([binary, "serve", "--config", config, "--output", "headless", "--renderer", "cpu",
                           "--port", "0", "--no-socket", "--repeat", "all", clip],
                          stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
port = None
deadline = time.time() + 60
while port is None and time.time() < deadline and server.poll() is None:
    with open(logpath) as f:
        for line in f:
            if "listening on http://" in line:
                port = int(line.rsplit(":", 1)[1])
    time.sleep(0.2)
if port is None:
    server.kill()
    sys.exit(f"soak: the server did not announce its port in 60 s; its log: {logpath}")

stop = threading.Event()
lock = threading.Lock()
latencies = []            # seconds, every completed request
by_path = {}              # path -> [count, failures]
failures = []             # descriptions of the failed requests
conflicts = 0


def record(path, status, seconds, error=None):
    global conflicts
    with lock:
        c = by_path.setdefault(path, [0, 0])
        c[0] += 1
        if error is not None or not (200 <= status < 300 or status == 409):
            c[1] += 1
            failures.append(f"{path}: {error or status}")
        else:
            latencies.append(seconds)
            if status == 409:
                conflicts += 1


def api_client(index):
    conn, sent = None, 0
    rng = random.Random(index)
    while not stop.is_set():
        sent += 1
        if index < 4 and sent % 20 == 0:
            steps = [("POST", "/pause"), ("POST", "/play")]
        else:
            steps = [("GET", rng.choice(["/state", "/stats", "/metrics"]))]
        for method, path in steps:
            if conn is None or sent % 100 == 0:  # keep-alive, with a fresh connection now and then
                if conn is not None:
                    conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            headers = {"Content-Type": "application/json"} if method == "POST" else {}
            t0 = time.monotonic()
            try:
                conn.request(method, path, body=b"" if method == "POST" else None, headers=headers)
                r = conn.getresponse()
                r.read()
                record(f"{method} {path}", r.status, time.monotonic() - t0)
            except Exception as e:
                if stop.is_set():
                    break
                record(f"{method} {path}", 0, 0, error=repr(e))
                conn.close()
                conn = None
            if method == "POST" and path == "/pause":
                time.sleep(0.5)
        stop.wait(0.3 + rng.random() * 0.2)  # about 50 requests/s in all: under the default rate limit
    if conn is not None:
        conn.close()


subscribers = []


class Subscriber:
    def __init__(self, index):
        self.index, self.events, self.lost, self.gaps, self.breaks = index, 0, 0, 0, 0
        self.last_id, self.conn = None, None

    def run(self):
        while not stop.is_set():
            try:
                self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=40)
                headers = {"Accept": "text/event-stream"}
                if self.last_id is not None:
                    headers["Last-Event-ID"] = str(self.last_id)
                self.conn.request("GET", "/events", headers=headers)
                r = self.conn.getresponse()
                if r.status != 200:
                    raise RuntimeError(f"GET /events: {r.status}")
                name, ident, data = None, None, None
                while not stop.is_set():
                    line = r.readline()
                    if not line:
                        raise RuntimeError("GET /events: the stream ended")
                    line = line.decode().rstrip("\r\n")
                    if line == "":
                        if name is not None or data is not None:
                            self.dispatch(name or "message", ident, data)
                        name, ident, data = None, None, None
                    elif line.startswith(":"):
                        continue
                    else:
                        field, _, value = line.partition(":")
                        value = value[1:] if value.startswith(" ") else value
                        if field == "event":
                            name = value
                        elif field == "id":
                            ident = int(value)
                        elif field == "data":
                            data = value if data is None else data + "\n" + value
            except Exception as e:
                if stop.is_set():
                    break
                self.breaks += 1
                with lock:
                    failures.append(f"SSE subscriber {self.index}: {e!r}")
                stop.wait(1)
            finally:
                self.conn.close()

    def dispatch(self, name, ident, data):
        self.events += 1
        if name == "gap":
            self.gaps += 1
            try:
                self.lost += int(json.loads(data).get("missed", 1))
            except Exception:
                self.lost += 1
            self.last_id = None  # the snapshot that follows starts the count again
        if ident is not None:
            if self.last_id is not None and ident != self.last_id + 1 and ident > self.last_id:
                self.lost += ident - self.last_id - 1
            if self.last_id is not None and ident <= self.last_id and name != "state":
                self.lost += 1  # an id that went backwards: not consecutive
            self.last_id = ident


samples = []  # (seconds since load started, rss kB, fds, frames dropped so far, load average over 1 min)


def sample(t):
    try:
        rss = 0
        with open(f"/proc/{server.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
        fds = len(os.listdir(f"/proc/{server.pid}/fd"))
        with open("/proc/loadavg") as f:
            load1 = float(f.read().split()[0])
        try:
            dropped = get_json("/stats").get("framesDropped", -1)
        except Exception:
            dropped = -1
        samples.append((t, rss, fds, dropped, load1))
    except OSError:
        pass


def get_json(path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return json.loads(r.read())
    finally:
        conn.close()


loadavg_start = open("/proc/loadavg").read().split()[:3]
idle_fds_before = len(os.listdir(f"/proc/{server.pid}/fd"))
threads = [threading.Thread(target=api_client, args=(i,), daemon=True) for i in range(API_CLIENTS)]
for i in range(SSE_CLIENTS):
    s = Subscriber(i)
    subscribers.append(s)
    threads.append(threading.Thread(target=s.run, daemon=True))
start = time.monotonic()
for t in threads:
    t.start()
print(f"soak: {binary} serve on 127.0.0.1:{port}, {clip} looping, {API_CLIENTS} API clients, "
      f"{SSE_CLIENTS} SSE subscribers, {minutes:g} min (warm-up {warmup:.0f} s); log {logpath}", flush=True)
next_sample = start
while True:
    now = time.monotonic()
    if now - start >= duration or server.poll() is not None:
        break
    if now >= next_sample:
        sample(now - start)
        next_sample += SAMPLE_S
    time.sleep(min(1.0, max(0.0, next_sample - time.monotonic())))
sample(time.monotonic() - start)
alive = server.poll() is None
stats = {}
if alive:
    try:
        stats = get_json("/stats")
    except Exception as e:
        failures.append(f"GET /stats at the end: {e!r}")
stop.set()
for s in subscribers:
    try:
        s.conn.sock.shutdown(2)
    except Exception:
        pass
for t in threads:
    t.join(10)
time.sleep(1)
idle_fds_after = len(os.listdir(f"/proc/{server.pid}/fd")) if alive else -1
loadavg_end = open("/proc/loadavg").read().split()[:3]
exit_code = None
if alive:
    server.send_signal(signal.SIGTERM)
    try:
        exit_code = server.wait(30)
    except subprocess.TimeoutExpired:
        server.kill()
        exit_code = "hung (killed)"

with open(os.path.join(workdir, "samples.csv"), "w") as f:
    f.write("seconds,rss_kib,fds,frames_dropped,load1\n")
    for t, rss, fds, dropped, load1 in samples:
        f.write(f"{t:.1f},{rss},{fds},{dropped},{load1}\n")

# Figures. Warm-up baseline and end value: the lowest sample of a window of 2 minutes (24
# samples; a fifth of the run after warm-up when that is shorter). RSS swings by 5 to 10 MB from
# one sample to the next (connection buffers, decoded pictures, a metrics page being written), so
# a shorter window measures where a swing happened to be, not growth.
after = [s for s in samples if s[0] >= warmup]
window = max(3, min(24, len(after) // 5))
base, end = after[:window], after[-window:]
reasons = []
if not alive:
    reasons.append(f"the server exited ({server.returncode})")
if len(after) < 2:
    reasons.append("too few samples after warm-up")
    rss_growth = fd_growth = 0
else:
    rss_base, rss_end = min(s[1] for s in base), min(s[1] for s in end)
    fd_base, fd_end = min(s[2] for s in base), min(s[2] for s in end)
    rss_growth, fd_growth = (rss_end - rss_base) / 1024, fd_end - fd_base
total = sum(c[0] for c in by_path.values())
lat = sorted(latencies)
pct = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else float("nan")
lost = sum(s.lost for s in subscribers)
breaks = sum(s.breaks for s in subscribers)
print(f"requests: {total} in {duration:.0f} s ({total / max(duration, 1):.1f}/s), {len(failures) - breaks} failed, "
      f"{conflicts} answered 409; " + ", ".join(f"{p} {c[0]}" for p, c in sorted(by_path.items())))
print(f"latency: p50 {pct(0.50):.1f} ms, p99 {pct(0.99):.1f} ms, max {pct(1.0):.1f} ms (reported, not asserted)")
print(f"events: {' + '.join(str(s.events) for s in subscribers)} received by {SSE_CLIENTS} subscribers, "
      f"{lost} lost, {sum(s.gaps for s in subscribers)} gap events, {breaks} streams broken")
if len(after) >= 2:
    print(f"rss: {samples[0][1] / 1024:.1f} MB at start, {rss_base / 1024:.1f} MB after warm-up, "
          f"{rss_end / 1024:.1f} MB at the end, growth {rss_growth:+.2f} MB (limit {RSS_LIMIT_MB:g}), "
          f"peak {max(s[1] for s in samples) / 1024:.1f} MB")
    # A leak keeps growing; an allocator settling grows early and stops: the two halves tell.
    mid = after[max(0, len(after) // 2 - window // 2):len(after) // 2 + (window + 1) // 2]
    rss_mid = min(s[1] for s in mid)
    print(f"rss halves: {(rss_mid - rss_base) / 1024:+.2f} MB in the first half after warm-up, "
          f"{(rss_end - rss_mid) / 1024:+.2f} MB in the second; every sample in {workdir}/samples.csv")
    print(f"fds: {fd_base} after warm-up, {fd_end} at the end, growth {fd_growth:+d} (limit {FD_LIMIT}); "
          f"idle {idle_fds_before} before the load, {idle_fds_after} after it")
print(f"frames: {stats.get('framesPresented', '?')} presented, {stats.get('framesDropped', '?')} dropped, "
      f"{stats.get('decodeErrors', '?')} decode errors, {stats.get('itemsFailed', '?')} items failed (reported, not asserted)")
# When frames were dropped: the 5-s sample windows that saw new drops, and the load then. A
# drop under a load above the core count is the machine's; one on an idle machine is the player's.
cores = os.cpu_count() or 1
steps = [(b[3] - a[3], b[4]) for a, b in zip(samples, samples[1:]) if a[3] >= 0 and b[3] >= 0]
busy = [(d, l) for d, l in steps if d > 0]
if steps:
    print(f"drops by load: {sum(d for d, l in busy if l <= cores)} dropped in {sum(1 for d, l in busy if l <= cores)} "
          f"of {sum(1 for d, l in steps if l <= cores)} sample windows with load average <= {cores}, "
          f"{sum(d for d, l in busy if l > cores)} in {sum(1 for d, l in busy if l > cores)} "
          f"of {sum(1 for d, l in steps if l > cores)} above it")
print(f"machine: load average {' '.join(loadavg_start)} at start, {' '.join(loadavg_end)} at the end; "
      f"{os.cpu_count()} cores; server exit on SIGTERM: {exit_code}")
if failures:
    reasons.append(f"{len(failures)} failures (first: {failures[0]})")
if lost:
    reasons.append(f"{lost} events lost")
if fd_growth > FD_LIMIT:
    reasons.append(f"fds grew by {fd_growth}")
if rss_growth > RSS_LIMIT_MB:
    reasons.append(f"RSS grew by {rss_growth:.2f} MB")
if exit_code not in (None, 0):
    reasons.append(f"the server exited with {exit_code} on SIGTERM")
print("verdict: " + ("PASS" if not reasons else "FAIL: " + "; ".join(reasons)), flush=True)
sys.exit(1 if reasons else 0)
PY
