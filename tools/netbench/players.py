"""The players the network benchmark runs, each on a URL of the throttling server, each giving the
same record: the frames it showed (wall time since the request, media time, the height of the
picture when known), its own counters, and notes.

Times: `request` is CLOCK_MONOTONIC (time.monotonic_ns) when the benchmark asked the player to
play (spawned it, or POSTed /load to `serve`); every frame's wall time is seconds after it."""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_process(argv, deadline, stderr_lines=None, stdout_lines=None):
    """Runs argv, killing it after `deadline` seconds; stdout and stderr are read line by line,
    each line stamped with CLOCK_MONOTONIC ns on arrival. Returns (request ns, status, timed out,
    stdout lines, stderr lines)."""
    request = time.monotonic_ns()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, errors="replace", start_new_session=True)
    lines = {"out": [], "err": []}

    def pump(stream, key):
        for line in stream:
            lines[key].append((time.monotonic_ns(), line.rstrip("\n")))

    threads = [threading.Thread(target=pump, args=(p.stdout, "out"), daemon=True),
               threading.Thread(target=pump, args=(p.stderr, "err"), daemon=True)]
    for t in threads:
        t.start()
    timed_out = False
    try:
        p.wait(timeout=deadline)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    for t in threads:
        t.join(timeout=5)
    return request, p.returncode, timed_out, lines["out"], lines["err"]


def record(player, frames, counters, status, timed_out, notes=None, extra=None):
    r = {"player": player, "frames": frames, "counters": counters, "exitStatus": status, "timedOut": timed_out,
         "notes": notes or []}
    r.update(extra or {})
    return r


def present_log(path, request):
    """Scanout's --present-log: `media_s monotonic_ns target_ns` a line."""
    frames = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2:
                    frames.append([(int(parts[1]) - request) / 1e9, float(parts[0]), None])
    return frames


SUMMARY = re.compile(r"summary: (\d+) frames presented, (\d+) dropped, (\d+) decoded")


def scanout_play(scanout, url, deadline, workdir):
    log = os.path.join(workdir, "present.log")
    request, status, timed_out, out, err = run_process(
        [scanout, "play", url, "--output", "headless", "--present-log", log, "-q"], deadline)
    counters, ended = {}, None
    for arrived, line in out:
        m = SUMMARY.search(line)
        if m:
            counters = {"shown": int(m.group(1)), "dropped": int(m.group(2)), "decoded": int(m.group(3))}
            ended = (arrived - request) / 1e9  # printed when playback has ended (the pipe is read at exit)
    notes = [line for _, line in err if "warning" in line or "error" in line or "stall" in line][:5]
    return record("scanout-play", present_log(log, request), counters, status, timed_out, notes,
                  {"summary": [line for _, line in out], "endSeconds": ended})


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_json(port, method, path, body=None, timeout=5):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, body=json.dumps(body) if body is not None else None,
                  headers={"Content-Type": "application/json"} if body is not None else {})
        r = c.getresponse()
        return r.status, json.loads(r.read() or b"null")
    finally:
        c.close()


class EventStream:
    """`serve`'s /events, read on a thread: each event with the CLOCK_MONOTONIC ns it arrived at."""

    def __init__(self, port):
        self.events = []
        self.arrived = threading.Condition()
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=None)
        self.conn.request("GET", "/events", headers={"Accept": "text/event-stream"})
        self.response = self.conn.getresponse()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        try:
            for raw in self.response:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if line.startswith("data:"):
                    try:
                        event = json.loads(line[5:].strip())
                    except ValueError:
                        continue
                    with self.arrived:
                        self.events.append((time.monotonic_ns(), event))
                        self.arrived.notify_all()
        except Exception:  # noqa: BLE001 - the stream ends however close() cuts it
            pass

    def wait_for(self, types, deadline):
        end = time.monotonic() + deadline
        with self.arrived:
            while time.monotonic() < end:
                if any(e.get("type") in types for _, e in self.events):
                    return True
                self.arrived.wait(timeout=min(0.2, max(0.0, end - time.monotonic())))
        return False

    def close(self):
        try:
            self.conn.sock and self.conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.conn.close()


def start_serve(scanout, workdir):
    """`scanout serve` headless on a free loopback port, once it answers /version: (process, port)."""
    state = os.path.join(workdir, "state")
    os.makedirs(state, exist_ok=True)
    port = free_port()
    with open(os.path.join(workdir, "serve.stderr"), "w") as err:
        p = subprocess.Popen([scanout, "serve", "--output", "headless", "--host", "127.0.0.1", "--port", str(port), "--no-socket",
                              "--state-dir", state, "--present-log", os.path.join(workdir, "present.log")],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    up = time.monotonic() + 20
    while time.monotonic() < up and p.poll() is None:
        try:
            if http_json(port, "GET", "/version", timeout=1)[0] == 200:
                return p, port
        except OSError:
            pass
        time.sleep(0.05)
    stop(p)
    raise RuntimeError(f"scanout serve did not answer /version in 20 s (exit {p.returncode})")


def stop(p):
    """SIGTERM, then SIGKILL after 10 s; the exit status."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            return p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
    return p.wait()


def scanout_serve(scanout, url, deadline, workdir):
    log = os.path.join(workdir, "present.log")
    p, port = start_serve(scanout, workdir)
    notes, stats, events, timed_out, status = [], {}, [], False, None
    try:
        stream = EventStream(port)
        time.sleep(0.2)  # the stream is open before the item is loaded
        request = time.monotonic_ns()
        code, answer = http_json(port, "POST", "/load", {"source": url})
        if code != 200:
            notes.append(f"POST /load answered {code}: {answer}")
        timed_out = not stream.wait_for({"ended", "error"}, deadline)
        stats = http_json(port, "GET", "/stats")[1]
        stream.close()
        events = [{"t": round((ns - request) / 1e9, 3), **e} for ns, e in stream.events if ns >= request]
        frames = present_log(log, request)
    finally:
        status = stop(p)
    # The variant of each frame: the last switch at or before its media time.
    switches = sorted(((e.get("seconds") or 0.0), e["to"]["height"]) for e in events if e.get("type") == "variantSwitch")
    if switches:
        for f in frames:
            before = [h for s, h in switches if s <= f[1] + 1e-3]
            f[2] = before[-1] if before else switches[0][1]
    counters = {"shown": stats.get("framesPresented"), "dropped": stats.get("framesDropped"), "decoded": stats.get("framesDecoded")}
    ended = next((e["t"] for e in events if e.get("type") == "ended"), None)
    first = next((e for e in events if e.get("type") == "firstFrame"), None)
    buffering = [e for e in events if e.get("type") == "buffering"]
    warnings = [e.get("message") for e in events if e.get("type") in ("warning", "error")]
    notes += [w for w in warnings if w][:5]
    return record("scanout-serve", frames, counters, status, timed_out, notes,
                  {"endSeconds": ended, "stats": stats, "firstFrameSinceRequest": first.get("sinceRequest") if first else None,
                   "bufferingEvents": [{"t": e["t"], "buffering": e.get("buffering"), "reason": e.get("reason")} for e in buffering],
                   "events": [e for e in events if e.get("type") != "position"]})


def mpv(url, deadline, workdir, fps):
    script = os.path.join(HERE, "mpv-frames.lua")
    request, status, timed_out, out, err = run_process(
        ["mpv", "--no-config", "--really-quiet", "--vo=null", "--ao=null", "--script=" + script, url], deadline)
    raw, counters, cache, ended = [], {}, [], None
    for arrived, line in err:
        parts = line.split()
        if line.startswith("netbench-frame ") and len(parts) == 4:
            raw.append((arrived, float(parts[1]), float(parts[2]), int(parts[3])))
        elif line.startswith("netbench-cache ") and len(parts) == 3:
            cache.append((arrived, float(parts[1]), parts[2]))
        elif line.startswith("netbench-end "):
            ended = (arrived - request) / 1e9
            kv = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
            dropped = int(kv.get("dropped", 0)) + int(kv.get("decoder-dropped", 0))
            counters = {"dropped": dropped, "voDropped": int(kv.get("dropped", 0)),
                        "decoderDropped": int(kv.get("decoder-dropped", 0)), "delayed": int(kv.get("delayed", 0)),
                        "end": kv.get("reason")}
    # mpv's clock has its own origin: it is placed on CLOCK_MONOTONIC by the line that arrived
    # soonest after mpv stamped it (the pipe adds a delay, never takes one away).
    stamped = [(a, t) for a, t, *_ in raw] + [(a, t) for a, t, _ in cache]
    offset = min((a / 1e9 - t for a, t in stamped), default=0.0)
    frames = [[round(t + offset - request / 1e9, 6), pos, h] for _, t, pos, h in raw]
    # A property observer can miss a change when two come close together; the frames mpv showed are
    # the span of frames it reached (its media time) less those it says it dropped.
    if frames:
        span = round(frames[-1][1] * fps) - round(frames[0][1] * fps) + 1
        counters["shown"] = max(len(frames), span - counters.get("dropped", 0))
    else:
        counters["shown"] = 0
    counters["decoded"] = None  # mpv does not count them; see figures() in bench-network.py
    waits = [round(t + offset - request / 1e9, 3) for _, t, v in cache if v == "yes"]
    notes = [line for _, line in err if not line.startswith("netbench-")][:5]
    return record("mpv", frames, counters, status, timed_out, notes, {"cachePauses": waits, "endSeconds": ended})


def python_with_gst():
    """An interpreter that can import GStreamer's bindings (Debian's python3-gst-1.0 is for
    /usr/bin/python3, which another python3 on PATH may hide), or None."""
    for exe in ("python3", "/usr/bin/python3"):
        try:
            r = subprocess.run([exe, "-c", "import gi; gi.require_version('Gst', '1.0'); from gi.repository import Gst"],
                               capture_output=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0:
            return exe
    return None


def gstreamer(url, deadline, workdir, python):
    request, status, timed_out, out, err = run_process(
        [python, os.path.join(HERE, "gst_player.py"), url, str(deadline - 5)], deadline)
    frames, counters, buffering, elements, end, ended = [], {}, [], [], None, None
    for arrived, line in out:
        parts = line.split()
        if parts[:1] == ["frame"] and len(parts) == 4:
            frames.append([(int(parts[1]) - request) / 1e9, float(parts[2]), int(parts[3])])
        elif parts[:1] == ["buffering"] and len(parts) == 3:
            buffering.append({"t": round((int(parts[1]) - request) / 1e9, 3), "percent": int(parts[2])})
        elif parts[:1] == ["element"]:
            elements.append(parts[1])
        elif parts[:1] == ["end"]:
            end = " ".join(parts[1:])
            ended = (arrived - request) / 1e9
        elif parts[:1] == ["stats"]:
            kv = dict(p.split("=", 1) for p in parts[1:])
            sink, dec = int(kv["dropped"]), int(kv["decoder-dropped"])
            counters = {"dropped": sink + dec, "sinkDropped": sink, "decoderDropped": dec,
                        "sinkRendered": int(kv["rendered"])}
    # The sink's own "rendered" restarts when the caps change (a variant switch): the handoffs count.
    counters["shown"] = len(frames)
    counters["decoded"] = len(frames) + counters.get("sinkDropped", 0)
    counters["end"] = end
    notes = [line for _, line in err][:5]
    demuxers = [e for e in elements if "demux" in e]
    return record("gstreamer", frames, counters, status, timed_out, notes,
                  {"bufferingMessages": buffering, "elements": sorted(set(demuxers)), "endSeconds": ended})
