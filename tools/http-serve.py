#!/usr/bin/env python3
"""Serves a directory over HTTP on 127.0.0.1 with byte-range requests (206 Partial Content), as
real web servers do; Python's own http.server ignores Range, which makes seeking impossible.
Usage: tools/http-serve.py DIR PORT [FAULT...]
Faults, for the fault tests (the byte offset is in the file, whatever range a request asks for):
  --stall-at BYTES --stall-for SECONDS   stop sending at BYTES for SECONDS, then go on
  --reset-at BYTES                       reset the connection (TCP RST) at BYTES
  --times N                              the first N responses that reach BYTES get the fault
                                         (default: every one); later ones are served whole
  --rate BYTES_PER_SECOND                every response trickles at this rate (a link slower
                                         than the media's bitrate), in 4 KiB writes
Each fault is printed on stdout as it happens ("stall at 65536 for 3.0 s", "reset at 65536")."""
import os
import re
import socket
import struct
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

FAULT = {"stall_at": None, "stall_for": 0.0, "reset_at": None, "times": None, "rate": None}
faults_done = 0
faults_lock = threading.Lock()


def take_fault():
    """Whether this response gets the fault (counts it)."""
    global faults_done
    with faults_lock:
        if FAULT["times"] is not None and faults_done >= FAULT["times"]:
            return False
        faults_done += 1
        return True


class RangeHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send_head(self):
        self.start = 0
        self.remaining = None
        m = re.match(r"bytes=(\d*)-(\d*)$", self.headers.get("Range", ""))
        if not m:
            return super().send_head()
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404)
            return None
        size = os.path.getsize(path)
        start = int(m.group(1)) if m.group(1) else max(0, size - int(m.group(2) or 0))
        end = int(m.group(2)) if m.group(1) and m.group(2) else size - 1
        if start >= size:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.end_headers()
            return None
        end = min(end, size - 1)
        f = open(path, "rb")
        f.seek(start)
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        self.start = start
        self.remaining = end - start + 1
        return f

    def copyfile(self, source, outputfile):
        left = self.remaining
        if left is None:
            left = os.fstat(source.fileno()).st_size
        offset = self.start
        at = FAULT["stall_at"] if FAULT["stall_at"] is not None else FAULT["reset_at"]
        faulty = at is not None and offset <= at < offset + left and take_fault()
        started = time.monotonic()
        sent = 0
        while left > 0:
            n = min(65536 if FAULT["rate"] is None else 4096, left)
            if FAULT["rate"] is not None:
                # Paced from the response's start: the rate holds whatever the writes cost.
                due = started + sent / FAULT["rate"]
                if due > time.monotonic():
                    time.sleep(due - time.monotonic())
            if faulty and offset < at:
                n = min(n, at - offset)
            if faulty and offset == at:
                faulty = False
                if FAULT["reset_at"] is not None:
                    print(f"reset at {offset}", flush=True)
                    # SO_LINGER 0: close() sends RST, as a crashed server or a dropped NAT entry does.
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    self.close_connection = True
                    return
                print(f"stall at {offset} for {FAULT['stall_for']} s", flush=True)
                time.sleep(FAULT["stall_for"])
                continue
            chunk = source.read(n)
            if not chunk:
                break
            outputfile.write(chunk)
            sent += len(chunk)
            offset += len(chunk)
            left -= len(chunk)


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that went away, or the connection reset on purpose


if __name__ == "__main__":
    directory, port = sys.argv[1], int(sys.argv[2])
    args = sys.argv[3:]
    while args:
        name, value = args[0], args[1]
        args = args[2:]
        if name == "--stall-at":
            FAULT["stall_at"] = int(value)
        elif name == "--stall-for":
            FAULT["stall_for"] = float(value)
        elif name == "--reset-at":
            FAULT["reset_at"] = int(value)
        elif name == "--times":
            FAULT["times"] = int(value)
        elif name == "--rate":
            FAULT["rate"] = float(value)
        else:
            sys.exit(f"http-serve: unknown option {name}")
    handler = lambda *a, **k: RangeHandler(*a, directory=directory, **k)
    QuietServer(("127.0.0.1", port), handler).serve_forever()
