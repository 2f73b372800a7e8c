#!/usr/bin/env python3
"""Sends an MPEG-TS file to a UDP (or RTP) address in real time, 7 packets a datagram.

ts_sender.py FILE HOST PORT --seconds S [--rtp] [--wait-for-join] [--drop-video N] [--pause-at S --pause-for S] [--loop]
--wait-for-join starts sending once a socket of this network namespace has joined the group HOST
(/proc/net/igmp), so that the receiver sees the stream from its first packet.
--drop-video N drops N packets of the video PID (the busiest one), each 100 video packets apart,
so that each drop is exactly one continuity-counter error. --loop sends the file again and again
until killed or until the process that started it ends (a channel that stays on air). Prints what it sent on exit.
"""
import argparse, collections, os, socket, struct, time

a = argparse.ArgumentParser()
a.add_argument("file"); a.add_argument("host"); a.add_argument("port", type=int)
a.add_argument("--rtp", action="store_true")
a.add_argument("--loop", action="store_true")
a.add_argument("--wait-for-join", action="store_true")
a.add_argument("--started", help="a file created when the first packet is about to go")
a.add_argument("--drop-video", type=int, default=0)
a.add_argument("--pause-at", type=float); a.add_argument("--pause-for", type=float, default=3)
a.add_argument("--seconds", type=float, required=True, help="the file's duration, for pacing")
o = a.parse_args()
parent = os.getppid()

data = open(o.file, "rb").read()
packets = [data[i:i + 188] for i in range(0, len(data) - 187, 188)]
pid = lambda p: ((p[1] & 0x1F) << 8) | p[2]
video = collections.Counter(pid(p) for p in packets).most_common(1)[0][0]
drops, n = set(), 0
for i, p in enumerate(packets):
    if pid(p) == video:
        n += 1
        if n % 100 == 0 and len(drops) < o.drop_video:
            drops.add(i)
sent = [p for i, p in enumerate(packets) if i not in drops]

if o.wait_for_join:
    group = "%08X" % struct.unpack("<I", socket.inet_aton(o.host))[0]
    while group not in open("/proc/net/igmp").read():
        if o.loop and os.getppid() != parent:
            raise SystemExit("the receiver that started it is gone")
        time.sleep(0.02)
    print(f"group {o.host} joined", flush=True)
if o.started:
    open(o.started, "w").close()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
interval = o.seconds / (len(packets) / 7)
start = time.monotonic()
paused = 0.0
seq = 0
sent_chunks = range(0, len(sent), 7)
def chunks():
    n = 0
    while True:
        for k in sent_chunks:
            yield n, k
            n += 1
        if not o.loop:
            return
for n, k in chunks():
    if o.loop and n % 100 == 0 and os.getppid() != parent:
        break  # the receiver that started it is gone
    due = start + paused + n * interval
    if o.pause_at is not None and paused == 0 and due - start >= o.pause_at:
        paused = o.pause_for
        due += paused
    delay = due - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    payload = b"".join(sent[k:k + 7])
    if o.rtp:
        payload = struct.pack("!BBHII", 0x80, 33, seq & 0xFFFF, int((due - start) * 90000) & 0xFFFFFFFF, 0x5CA40) + payload
        seq += 1
    s.sendto(payload, (o.host, o.port))
print(f"sent {len(sent)} packets, dropped {len(drops)} of video PID {video}", flush=True)
