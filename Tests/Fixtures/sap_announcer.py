#!/usr/bin/env python3
"""Announces MPEG-TS channels over SAP (RFC 2974) with SDP (RFC 4566) descriptions.

sap_announcer.py --channel NAME=ADDRESS:PORT[:GROUP] ... [--address 224.2.127.254] [--port 9875]
                 [--interval 0.5] [--control DIR] [--rtp]
Every interval, one announcement per channel on air, from origin 127.0.0.1, message id hash
derived from the name. With --control DIR, it watches DIR: a file `delete-NAME` makes it send
a SAP delete for NAME (three times, as announcements are sent unreliably) and stop announcing
it; a file `silence-NAME` makes it stop announcing NAME without a delete (the listener's
timeout withdraws it). Ends when the process that started it does. Prints one line per message kind and channel the first time.
"""
import argparse, os, socket, struct, time, zlib

a = argparse.ArgumentParser()
a.add_argument("--channel", action="append", required=True)
a.add_argument("--address", default="224.2.127.254"); a.add_argument("--port", type=int, default=9875)
a.add_argument("--interval", type=float, default=0.5)
a.add_argument("--control")
a.add_argument("--rtp", action="store_true")
o = a.parse_args()

ORIGIN = "127.0.0.1"

def sdp(name, address, port, group):
    lines = ["v=0", f"o=- {zlib.crc32(name.encode())} 1 IN IP4 {ORIGIN}", f"s={name}", f"i=test channel {name}",
             f"c=IN IP4 {address}/1", "t=0 0", "a=tool:sap_announcer.py", "a=type:broadcast"]
    if group:
        lines.append(f"a=x-plgroup:{group}")
    lines.append(f"m=video {port} {'RTP/AVP' if o.rtp else 'udp'} 33")
    return ("\r\n".join(lines) + "\r\n").encode()

def message(name, body, delete):
    first = 0x20 | (0x04 if delete else 0)        # V=1, IPv4, announce/delete, not encrypted or compressed
    hash_ = zlib.crc32(name.encode()) & 0xFFFF
    return struct.pack("!BBH", first, 0, hash_) + socket.inet_aton(ORIGIN) + b"application/sdp\0" + body

channels = {}
for spec in o.channel:
    name, dest = spec.split("=", 1)
    parts = dest.split(":")
    channels[name] = sdp(name, parts[0], int(parts[1]), parts[2] if len(parts) > 2 else None)

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
on_air = set(channels)
said = set()
def say(line):
    if line not in said:
        said.add(line)
        print(line, flush=True)

parent = os.getppid()
while os.getppid() == parent:
    if o.control:
        for name in list(on_air):
            if os.path.exists(os.path.join(o.control, "delete-" + name)):
                on_air.discard(name)
                for _ in range(3):
                    s.sendto(message(name, channels[name], True), (o.address, o.port))
                say(f"deleted {name}")
            elif os.path.exists(os.path.join(o.control, "silence-" + name)):
                on_air.discard(name)
                say(f"silenced {name}")
    for name in sorted(on_air):
        s.sendto(message(name, channels[name], False), (o.address, o.port))
        say(f"announced {name}")
    time.sleep(o.interval)
