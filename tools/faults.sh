#!/usr/bin/env bash
# Fault figures of `scanout serve` on loopback: each fault is made to happen to a headless service
# and what the service did is printed: its events (from GET /events), the time it took to recover,
# and the frames lost (from GET /stats).
#   tools/faults.sh [--binary PATH] [--only NAME[,NAME...]]
# Faults (NAME):
#   sigkill    SIGKILL on item 1 of 3, then a plain restart (standing in for systemd's Restart=):
#              does playback resume at item 1?
#   deleted    the file of the playing item removed
#   truncated  the file of the playing item cut to 30 kB
#   replaced   the file of the playing item replaced by another clip (renamed over it)
#   stall1     HTTP source: the server stops sending mid-body for 5 s, once (timeout 2 s)
#   reset1     HTTP source: the connection reset (TCP RST) mid-body, once
#   resets     HTTP source: reset at the same byte on every connection (then a local item)
#   stalls     HTTP source: stops at the same byte on every connection (then a local item)
#   diskfull   the state directory on a full 64 kB tmpfs (root only; skipped otherwise)
# Needs bash and python3 (standard library) only; never part of tools/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
BINARY=.build/debug/scanout; ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) BINARY=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    -h|--help) sed -n 2,18p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "faults: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$BINARY" ] || { echo "faults: $BINARY is not an executable (swift build, or pass --binary PATH)" >&2; exit 2; }
for f in counter.mp4 faststart.mp4 bt709.mp4; do
  [ -f ".fixtures/$f" ] || { echo "faults: .fixtures/$f is missing (tools/make-fixtures.sh .fixtures)" >&2; exit 2; }
done
exec python3 - "$BINARY" "$ONLY" <<'PY'
import http.client, json, os, shutil, signal, socket, subprocess, sys, tempfile, threading, time

binary, only = os.path.abspath(sys.argv[1]), [n for n in sys.argv[2].split(",") if n]
fixtures = os.path.abspath(".fixtures")
work = tempfile.mkdtemp(prefix="scanout-faults-")
failures = []


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Serve:
    """`scanout serve` headless on a free port; its events recorded from GET /events."""

    def __init__(self, name, args, config=None):
        self.port = free_port()
        self.log = os.path.join(work, f"{name}.log")
        cfg = os.path.join(work, f"{name}.json")
        with open(cfg, "w") as f:
            json.dump(config or {}, f)
        self.proc = subprocess.Popen([binary, "serve", "--config", cfg, "--output", "headless", "--renderer", "cpu",
                                      "--port", str(self.port), "--no-socket"] + args,
                                     stdout=subprocess.DEVNULL, stderr=open(self.log, "a"), stdin=subprocess.DEVNULL)
        self.events = []
        self.t0 = time.time()
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                self.get("/version")
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError(f"serve did not start; log: {self.log}")
        threading.Thread(target=self.listen, daemon=True).start()

    def get(self, path):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        c.request("GET", path)
        r = c.getresponse()
        body = r.read()
        c.close()
        return json.loads(body) if body.startswith(b"{") else {}

    def listen(self):
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=3600)
            c.request("GET", "/events")
            r = c.getresponse()
            name = None
            for raw in r:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: ") and name not in (None, "position", "state", "gap"):
                    self.events.append((time.time(), json.loads(line[6:])))
        except Exception:
            pass

    def state(self):
        return self.get("/state")

    def stats(self):
        return self.get("/stats")

    def wait(self, what, seconds=30):
        end = time.time() + seconds
        while time.time() < end:
            try:
                if what():
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def item(self):
        return self.state().get("item")

    def since(self, t):
        return [e for (at, e) in self.events if at >= t]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def logtext(self):
        with open(self.log) as f:
            return f.read()


def describe(e):
    t = e["type"]
    if t == "stateChanged":
        return f"{e['from']}->{e['to']}"
    if t == "itemChanged":
        return f"item {e['item']}"
    if t == "buffering":
        return "buffering " + ("on" if e["buffering"] else "off")
    if t == "error":
        return f"error(item {e['item']}, skipped={str(e['skipped']).lower()}): {e['message']}"
    if t == "warning":
        return f"warning: {e['message']}"
    if t == "serviceState":
        return "service " + ("up" if e["up"] else "down " + ",".join(e["reasons"]))
    return t


def report(name, serve, t, recovered, extra):
    seq = [describe(e) for e in serve.since(t) if e["type"] not in ("prepared", "durationChanged", "play")]
    print(f"== {name}")
    print("  events:   " + ("\n            ".join(seq) if seq else "(none)"))
    for k, v in extra:
        print(f"  {k + ':':9} {v}")
    print(f"  recovered: {'yes' if recovered is not None else 'NO'}" + (f", in {recovered:.2f} s" if recovered is not None else ""))
    if recovered is None:
        failures.append(name)


def three_copies(tag):
    paths = []
    for n in "abc":
        p = os.path.join(work, f"{tag}-{n}.mp4")
        shutil.copy(os.path.join(fixtures, "counter.mp4"), p)
        paths.append(p)
    return paths


def wanted(name):
    return not only or name in only


# 1. SIGKILL, then a restart as systemd's Restart=always would do it (RestartSec left out).
if wanted("sigkill"):
    items = three_copies("kill")
    state_dir = os.path.join(work, "state")
    args = ["--repeat", "all", "--state-dir", state_dir] + items
    s = Serve("sigkill-1", args)
    saved = os.path.join(state_dir, "position.json")
    def saved_index():
        try:
            with open(saved) as f:
                return json.load(f)["index"]
        except (OSError, ValueError):
            return None
    s.wait(lambda: s.item() == 1 and saved_index() == 1 and s.state()["position"] >= 1.0)
    position = s.state()["position"]
    t = time.time()
    s.proc.kill()
    s.proc.wait()
    r = Serve("sigkill-2", args)
    ok = r.wait(lambda: r.state().get("state") == "playing" and r.stats()["framesPresented"] > 0)
    recovered = time.time() - t if ok and r.item() == 1 else None
    line = next((l for l in r.logtext().splitlines() if "resumed at item" in l), "(no resume line)")
    report("sigkill: SIGKILL on item 1 of 3 (at %.2f s of it), plain restart" % position, r, r.t0, recovered,
           [("item", f"{r.item()} after the restart (was 1), from its first frame (the position inside an item is not kept)"),
            ("log", line.split("] ")[-1]),
            ("recovery", "from the kill to item 1 playing again in the new process")])
    r.stop()


# 2-4. The playing item's file removed, truncated, replaced (renamed over, as a content sync does).
def skip_gap(serve, t):
    """Seconds from the first error event after `t` to the itemChanged that followed it."""
    evs = [(at, e) for (at, e) in serve.events if at >= t]
    err = next((at for (at, e) in evs if e["type"] == "error"), None)
    if err is None:
        return None
    nxt = next((at for (at, e) in evs if at >= err and e["type"] == "itemChanged"), None)
    return None if nxt is None else nxt - err


def file_fault(name, label, act, done):
    items = three_copies(name)
    s = Serve(name, ["--repeat", "all"] + items)
    s.wait(lambda: s.item() == 1)
    before = s.stats()
    t = time.time()
    act(items[1])
    ok = s.wait(lambda: done(s), 25)
    after = s.stats()
    st = s.state()
    recovered = time.time() - t if ok and st["state"] == "playing" and s.proc.poll() is None else None
    gap = skip_gap(s, t)
    err = st.get("lastError")
    report(f"{name}: {label}", s, t, recovered,
           [("/state", f"state {st['state']}, item {st['item']}, lastError " +
             (f"item {err['item']}, skipped {str(err['skipped']).lower()}" if err else "null")),
            ("/stats", f"itemsFailed {after['itemsFailed']}, framesDropped {after['framesDropped'] - before['framesDropped']}"),
            ("skip", "no item skipped" if gap is None else f"the next item on screen {gap * 1000:.0f} ms after the error")])
    s.stop()


def replace(path):
    shutil.copy(os.path.join(fixtures, "bt709.mp4"), path + ".new")
    os.rename(path + ".new", path)


if wanted("deleted"):
    file_fault("deleted", "item 1's file removed while it plays (recovered: skipped at its next turn)",
               os.remove, lambda s: s.stats()["itemsFailed"] == 1 and s.item() == 2)
if wanted("truncated"):
    file_fault("truncated", "item 1's file cut to 30 kB while it plays",
               lambda p: os.truncate(p, 30000), lambda s: s.item() == 2)
if wanted("replaced"):
    seen = []
    file_fault("replaced", "item 1's file replaced by a 1 s clip while it plays (recovered: the new clip plays at its next turn)",
               replace, lambda s: (seen.append(s.item()) or True) and 2 in seen and s.item() == 1 and abs((s.state()["duration"] or 0) - 1.0) < 0.05)


# 5-8. An HTTP source that stalls or resets (tools/http-serve.py's faults), timeout 2 s.
class HTTPServer:
    def __init__(self, faults):
        self.port = free_port()
        self.log = os.path.join(work, f"http-{self.port}.log")
        self.proc = subprocess.Popen([sys.executable, "tools/http-serve.py", fixtures, str(self.port)] + faults,
                                     stdout=open(self.log, "w"), stderr=subprocess.STDOUT)
        end = time.time() + 10
        while time.time() < end:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)

    def url(self):
        return f"http://127.0.0.1:{self.port}/faststart.mp4"

    def faults(self):
        with open(self.log) as f:
            return [l.strip() for l in f if l.strip()]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def http_fault(name, label, faults, then_local):
    server = HTTPServer(faults)
    items = [server.url()] + ([os.path.join(fixtures, "counter.mp4")] if then_local else [])
    t = time.time()
    s = Serve(name, items, config={"timeout": 2})
    ok = s.wait(lambda: s.state()["state"] == "ended", 40)
    st, stats = s.state(), s.stats()
    evs = s.since(t)
    err = [at for (at, e) in s.events if e["type"] == "error"]
    nxt = [at for (at, e) in s.events if e["type"] == "itemChanged" and e["item"] == 1]
    frames = stats["framesPresented"]
    expected = 96 * len(items)
    if err and nxt:
        recovered = nxt[0] - err[0]
        note = f"item 0 given up after its fault; the next item on screen {recovered * 1000:.0f} ms after the error"
    else:
        # Every frame once: all 96 shown, none dropped, nothing failed. Recovery: how long the
        # source gave nothing (the stall warning says), 0 for a reset reconnected at once.
        whole = ok and frames == expected and stats["framesDropped"] == 0 and stats["itemsFailed"] == 0
        waited = [float(e["message"].split("stalled for ")[1].split(" s")[0]) for (_, e) in s.events
                  if e["type"] == "warning" and "stalled for" in e["message"]]
        recovered = (waited[0] if waited else 0.0) if whole else None
        note = "the item played to its end, every frame once" if whole else "frames were lost"
    if not ok:
        recovered = None
    report(f"{name}: {label}", s, t, recovered,
           [("server", "; ".join(server.faults()) or "(no fault made)"),
            ("/stats", f"framesPresented {frames} of {expected} (counter clip: 96 a pass), framesDropped {stats['framesDropped']}, itemsFailed {stats['itemsFailed']}"),
            ("outcome", note)])
    s.stop()
    server.stop()


if wanted("stall1"):
    http_fault("stall1", "HTTP source stops sending at byte 60000 for 5 s, once", ["--stall-at", "60000", "--stall-for", "5", "--times", "1"], False)
if wanted("reset1"):
    http_fault("reset1", "HTTP source reset (RST) at byte 60000, once", ["--reset-at", "60000", "--times", "1"], False)
if wanted("resets"):
    http_fault("resets", "HTTP source reset at byte 60000 on every connection, then a local item", ["--reset-at", "60000"], True)
if wanted("stalls"):
    http_fault("stalls", "HTTP source stops at byte 60000 on every connection, then a local item", ["--stall-at", "60000", "--stall-for", "60"], True)


# 9. A full disk under the state directory.
if wanted("diskfull"):
    mnt = os.path.join(work, "full")
    os.makedirs(mnt)
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt]).returncode != 0:
        print("== diskfull: skipped (mounting a tmpfs needs root)")
    else:
        try:
            fd = os.open(os.path.join(mnt, "filler"), os.O_WRONLY | os.O_CREAT)
            try:
                while True:
                    os.write(fd, b"\xab" * 4096)
            except OSError:
                pass
            try:
                while True:
                    os.write(fd, b"\xab")
            except OSError:
                pass
            os.close(fd)
            items = three_copies("full")
            t = time.time()
            s = Serve("diskfull", ["--repeat", "all", "--state-dir", mnt] + items)
            ok = s.wait(lambda: s.item() == 2, 20)
            warn = [l.split("] ")[-1] for l in s.logtext().splitlines() if "position was not saved" in l]
            st = s.state()
            recovered = 0.0 if ok and st["state"] == "playing" and s.proc.poll() is None else None
            report("diskfull: state directory on a full 64 kB tmpfs", s, t, recovered,
                   [("log", warn[0] if warn else "(no warning)"), ("warnings", f"{len(warn)} failed saves, playback on item {st['item']}"),
                    ("/health", str(s.get("/health")))])
            s.stop()
        finally:
            subprocess.run(["umount", "-l", mnt])

shutil.rmtree(work, ignore_errors=True)
if failures:
    print("faults: not recovered: " + ", ".join(failures))
    sys.exit(1)
print("faults: every fault recovered from")
PY
