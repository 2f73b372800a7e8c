"""A throttling HTTP server on 127.0.0.1 whose link follows a timed profile: the rate at each
moment is a function of the time since the first request the server answered (not of any file),
shared by every connection, as one access link would be.

A profile is a default rate and a list of spans (start s, end s, rate B/s); rate None is no limit,
0 a hard stall (not a byte, headers included). Files are served with byte ranges (206), keep-alive
(HTTP/1.1) and HEAD. Every response is logged: path, when it started and ended (s since the first
request), bytes sent, and whether it was sent whole."""
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

INF = float("inf")


class Profile:
    def __init__(self, name, spans, default=None, description=""):
        self.name, self.spans, self.default, self.description = name, sorted(spans), default, description

    def rate_at(self, t):
        """The rate at t and when it next changes."""
        for start, end, rate in self.spans:
            if start <= t < end:
                return rate, end
        later = [s for s, _, _ in self.spans if s > t]
        return self.default, (min(later) if later else INF)

    def finish(self, t, n):
        """When n bytes that start at t are through the link."""
        while True:
            rate, change = self.rate_at(t)
            if rate is None:
                return t
            if rate > 0 and n <= rate * (change - t):
                return t + n / rate
            if change == INF:
                return INF
            n -= rate * (change - t)
            t = change

    def to_json(self):
        return {"name": self.name, "description": self.description, "defaultRate": self.default,
                "spans": [{"start": s, "end": e, "rate": r} for s, e, r in self.spans]}


def sawtooth(high, low, half, until):
    spans, t, up = [], 0.0, True
    while t < until:
        spans.append((t, t + half, high if up else low))
        t, up = t + half, not up
    return spans


# The named profiles. Rates in bytes a second; times in seconds since the first request.
PROFILES = {
    "stall": Profile("stall", [(4, 7, 0)], 600_000,
                     "600 kB/s, nothing at all from 4 s to 7 s"),
    "trickle": Profile("trickle", [(4, 14, 120_000)], 600_000,
                       "600 kB/s, then 120 kB/s (0.96 Mb/s) from 4 s to 14 s: below the MP4's and the top variant's bitrate"),
    "sawtooth": Profile("sawtooth", sawtooth(800_000, 150_000, 2, 120), None,
                        "2 s at 800 kB/s, 2 s at 150 kB/s, again and again (3.8 Mb/s on average)"),
    "startup-stall": Profile("startup-stall", [(0, 3, 0)], 1_000_000,
                             "nothing at all for the first 3 s, then 1 MB/s"),
    "clean": Profile("clean", [], None, "no limit (a control)"),
    # For the self-check test: short, on a tiny clip.
    "quick-stall": Profile("quick-stall", [(1, 2.5, 0)], 200_000,
                           "200 kB/s, nothing at all from 1 s to 2.5 s"),
}


class Link:
    """The shared link: each chunk of every response takes its turn through the profile's rate."""

    def __init__(self, profile):
        self.profile = profile
        self.lock = threading.Lock()
        self.t0 = None
        self.free_at = 0.0
        self.log = []

    def now(self):
        with self.lock:
            if self.t0 is None:
                self.t0 = time.monotonic()
            return time.monotonic() - self.t0

    def elapsed(self):
        """now() for a caller that holds the lock."""
        return time.monotonic() - self.t0 if self.t0 is not None else 0.0

    def wait(self, n):
        """Blocks until n more bytes may go; False when the profile never lets them."""
        now = self.now()
        with self.lock:
            start = max(now, self.free_at)
            done = self.profile.finish(start, n)
            self.free_at = done
        if done == INF:
            return False
        delay = done - self.now()
        if delay > 0:
            time.sleep(delay)
        return True


CHUNK = 8192


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "netbench"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.answer(body=False)

    def do_GET(self):
        self.answer(body=True)

    def answer(self, body):
        link = self.server.link
        path = self.path.split("?")[0]
        started = link.now()
        file = os.path.normpath(os.path.join(self.server.root, path.lstrip("/")))
        if not file.startswith(self.server.root + os.sep) or not os.path.isfile(file):
            link.wait(200)
            self.send_error(404)
            return
        size = os.path.getsize(file)
        first, last = 0, size - 1
        m = re.match(r"bytes=(\d*)-(\d*)$", self.headers.get("Range", ""))
        if m and (m.group(1) or m.group(2)):
            if m.group(1):
                first = int(m.group(1))
                last = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
            else:
                first = max(0, size - int(m.group(2)))
            if first >= size:
                link.wait(200)
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        if not link.wait(300):  # the status line and headers take their turn too
            return
        self.send_response(206 if m and (m.group(1) or m.group(2)) else 200)
        kind = {".m3u8": "application/vnd.apple.mpegurl", ".ts": "video/mp2t", ".mp4": "video/mp4"}
        self.send_header("Content-Type", kind.get(os.path.splitext(file)[1], "application/octet-stream"))
        self.send_header("Accept-Ranges", "bytes")
        if m and (m.group(1) or m.group(2)):
            self.send_header("Content-Range", f"bytes {first}-{last}/{size}")
        self.send_header("Content-Length", str(last - first + 1))
        self.end_headers()
        sent, whole = 0, True
        if body:
            whole = False
            try:
                with open(file, "rb") as f:
                    f.seek(first)
                    left = last - first + 1
                    while left > 0:
                        chunk = f.read(min(CHUNK, left))
                        if not chunk or not link.wait(len(chunk)):
                            break
                        self.wfile.write(chunk)
                        sent += len(chunk)
                        left -= len(chunk)
                    whole = left == 0
            except OSError:  # the client went away
                self.close_connection = True
        with link.lock:
            link.log.append({"path": path, "start": round(started, 3), "end": round(link.elapsed(), 3),
                             "range": [first, last], "bytes": sent, "whole": whole})


class ThrottledServer(ThreadingHTTPServer):
    """Serves ROOT on 127.0.0.1 (a port of the system's choice) through a Link."""
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, root, profile):
        self.root = os.path.realpath(root)
        self.link = Link(profile)
        super().__init__(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    def handle_error(self, request, client_address):
        pass  # a client that went away mid-answer

    @property
    def port(self):
        return self.server_address[1]

    def url(self, name):
        return f"http://127.0.0.1:{self.port}/{name}"

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.shutdown()
        self.server_close()
