#!/usr/bin/env python3
"""Serves a directory of HLS playlists and segments over loopback HTTP, with throttling and a live mode.

hls_server.py DIR PORT [--live SECONDS_PER_SEGMENT --window N]
Serves on 127.0.0.1:PORT until killed.

Control paths (GET):
  /_control/throttle?prefix=P&rate=B  files whose path starts with P are sent at B bytes a second
                                      (rate=0 lifts it; the longest matching prefix wins)
  /_control/freeze                    live mode: the media playlists stop changing
  /_control/log                       the paths served so far, one a line, in order
  /_control/sent                      for each answer so far, in order: its path and the bytes of
                                      its body written to the client (fewer when it went away)
  /_control/lie?prefix=P&delta=D&times=N  the next N answers (default 1) for paths starting with P
                                      announce D bytes more (D > 0: the body then stops short and
                                      the connection closes) or fewer (D < 0: the whole file is sent)
                                      than they send
  /_control/cut?prefix=P&at=B&times=N the next N answers for P stop after B bytes of the body and
                                      close the connection (an interrupted transfer)
  /_control/bearer?prefix=P&token=T   paths starting with P are answered only to Authorization:
                                      Bearer T (a licence server): 401 without one, 403 otherwise
  /_control/trickle?prefix=P&rate=B&after=N  answers for paths starting with P send their first N
                                      bytes (default 0) as they would otherwise, then the rest at B
                                      bytes a second: a network that slows mid-transfer (rate=0
                                      lifts it; the longest matching prefix wins)
Files are served with byte ranges (Range: bytes=A- or A-B answers 206 with Content-Range) and to
HEAD requests.

Live mode turns each VOD media playlist (one with #EXTINF lines) into a sliding window: at time t
after the start, segments up to floor(t / SECONDS_PER_SEGMENT) + N - 1 are listed, the last N of
them, with the matching #EXT-X-MEDIA-SEQUENCE and no #EXT-X-ENDLIST until the last segment is listed.
"""
import argparse, http.server, os, re, sys, threading, time, urllib.parse

a = argparse.ArgumentParser()
a.add_argument("dir")
a.add_argument("port", type=int)
a.add_argument("--live", type=float, help="seconds between new segments (live mode)")
a.add_argument("--window", type=int, default=3)
o = a.parse_args()

lock = threading.Lock()
throttles = {}
lies = {}   # prefix -> [delta, times]
cuts = {}   # prefix -> [at, times]
bearers = {}  # prefix -> token
trickles = {}  # prefix -> (rate, after)
sent = []  # [path, bytes written]
served = []
frozen_at = None
start = time.monotonic()


def live_playlist(text):
    lines = text.splitlines()
    head = [l for l in lines if l.startswith("#EXT") and not l.startswith(("#EXTINF", "#EXT-X-ENDLIST", "#EXT-X-PLAYLIST-TYPE", "#EXT-X-MEDIA-SEQUENCE"))]
    segs = []
    for i, l in enumerate(lines):
        if l.startswith("#EXTINF"):
            segs.append((l, lines[i + 1]))
    with lock:
        now = frozen_at if frozen_at is not None else time.monotonic()
    newest = min(len(segs) - 1, int((now - start) / o.live) + o.window - 1)
    first = max(0, newest - o.window + 1)
    out = head + ["#EXT-X-MEDIA-SEQUENCE:%d" % first]
    for inf, uri in segs[first:newest + 1]:
        out += [inf, uri]
    if newest == len(segs) - 1:
        out.append("#EXT-X-ENDLIST")
    return ("\n".join(out) + "\n").encode()


def take(faults, path):
    """The fault of the longest prefix of `path` that has answers left (counted), or None."""
    matches = [p for p in faults if path.startswith(p) and faults[p][1] > 0]
    if not matches:
        return None
    f = faults[max(matches, key=len)]
    f[1] -= 1
    return f[0]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        global frozen_at
        url = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(url.path)
        if path.startswith("/_control/"):
            q = dict(urllib.parse.parse_qsl(url.query))
            body = b"ok\n"
            with lock:
                if path == "/_control/throttle":
                    rate = float(q.get("rate", "0"))
                    if rate > 0:
                        throttles[q.get("prefix", "/")] = rate
                    else:
                        throttles.pop(q.get("prefix", "/"), None)
                elif path == "/_control/freeze":
                    frozen_at = time.monotonic()
                elif path == "/_control/lie":
                    lies[q.get("prefix", "/")] = [int(q.get("delta", "0")), int(q.get("times", "1"))]
                elif path == "/_control/cut":
                    cuts[q.get("prefix", "/")] = [int(q.get("at", "0")), int(q.get("times", "1"))]
                elif path == "/_control/trickle":
                    rate = float(q.get("rate", "0"))
                    if rate > 0:
                        trickles[q.get("prefix", "/")] = (rate, int(q.get("after", "0")))
                    else:
                        trickles.pop(q.get("prefix", "/"), None)
                elif path == "/_control/bearer":
                    bearers[q.get("prefix", "/")] = q.get("token", "")
                elif path == "/_control/log":
                    body = ("\n".join(served) + "\n").encode()
                elif path == "/_control/sent":
                    body = "".join("%s %d\n" % (p, n) for p, n in sent).encode()
            return self.reply(200, body, "text/plain")
        full = os.path.realpath(os.path.join(o.dir, path.lstrip("/")))
        if not full.startswith(os.path.realpath(o.dir)) or not os.path.isfile(full):
            return self.reply(404, b"not found\n", "text/plain")
        with lock:
            served.append(path)
            guarded = [p for p in bearers if path.startswith(p)]
            needed = bearers[max(guarded, key=len)] if guarded else None
        given = self.headers.get("Authorization")
        if needed is not None and given is None:
            return self.reply(401, b"a bearer token is required\n", "text/plain")
        if needed is not None and given != "Bearer " + needed:
            return self.reply(403, b"this token is not accepted\n", "text/plain")
        with lock:
            matches = [p for p in throttles if path.startswith(p)]
            rate = throttles[max(matches, key=len)] if matches else None
            lie = take(lies, path)
            slowing = [p for p in trickles if path.startswith(p)]
            trickle = trickles[max(slowing, key=len)] if slowing else None
            cut = take(cuts, path)
        data = open(full, "rb").read()
        kind = "video/mp2t"
        if full.endswith(".m3u8"):
            kind = "application/vnd.apple.mpegurl"
            if o.live and b"#EXTINF" in data:
                data = live_playlist(data.decode())
        code, extra = 200, {}
        m = re.match(r"bytes=(\d+)-(\d*)$", self.headers.get("Range", ""))
        if m:
            first = int(m.group(1))
            last = int(m.group(2)) if m.group(2) else len(data) - 1
            if first >= len(data):
                return self.reply(416, b"", kind, extra={"Content-Range": "bytes */%d" % len(data)})
            extra["Content-Range"] = "bytes %d-%d/%d" % (first, last, len(data))
            code, data = 206, data[first:last + 1]
        announced = len(data)
        if lie is not None:
            announced = max(0, len(data) + lie)
            if lie > 0:
                cut = len(data)
        self.reply(code, data, kind, rate, announced, cut, extra, trickle=trickle)

    def do_HEAD(self):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        full = os.path.realpath(os.path.join(o.dir, path.lstrip("/")))
        if not full.startswith(os.path.realpath(o.dir)) or not os.path.isfile(full):
            return self.reply(404, b"", "text/plain", head=True)
        self.reply(200, b"", "video/mp2t", announced=os.path.getsize(full), head=True)

    def reply(self, code, body, kind, rate=None, announced=None, cut=None, extra={}, head=False, trickle=None):
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body) if announced is None else announced))
        for k, v in extra.items():
            self.send_header(k, v)
        if cut is not None or (announced is not None and announced != len(body) and not head):
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if head:
            return
        if cut is not None:
            body = body[:cut]
        self.tally = [urllib.parse.unquote(urllib.parse.urlsplit(self.path).path), 0]
        if not self.tally[0].startswith("/_control/"):
            with lock:
                sent.append(self.tally)
        if trickle is not None:
            slow_rate, after = trickle
            self.send(body[:after], rate)
            self.send(body[after:], slow_rate)
            return
        self.send(body, rate)

    def send(self, body, rate):
        if not rate:
            self.wfile.write(body)
            self.tally[1] += len(body)
            return
        chunk = max(1, int(rate / 20))
        for i in range(0, len(body), chunk):
            t = time.monotonic()
            self.wfile.write(body[i:i + chunk])
            self.wfile.flush()
            self.tally[1] += len(body[i:i + chunk])
            time.sleep(max(0.0, len(body[i:i + chunk]) / rate - (time.monotonic() - t)))


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that closes its connection mid-transfer is normal (a player that moves on).
        if not isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError)):
            super().handle_error(request, client_address)


server = Server(("127.0.0.1", o.port), Handler)
server.serve_forever()
