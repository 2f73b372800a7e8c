#!/usr/bin/env python3
"""Proof of play across a broker outage and a SIGKILL: every record delivered.

Starts a mosquitto broker on loopback, a receiver (`mosquitto_sub`, QoS 1) and one
`scanout serve` playing a 3.2 s clip over and over with a state directory and `mqtt`. Then:
the broker is stopped for `--outage` seconds; halfway through, the service is killed (SIGKILL)
and started again; the broker comes back; once the service's queue is empty (`/stats` mqtt.queued),
it is stopped. Every play in the store (less those still queued, the one its goodbye closed) must
have reached the receiver; duplicates are counted (a resend after a crash) and dropped by id.

    python3 tools/fleet-soak.py --scanout .build/release/scanout --outage 600
"""
import argparse, json, os, shutil, socket, sqlite3, subprocess, sys, tempfile, time

# Generated before the tests (tools/make-fixtures.sh .fixtures, which tools/test.sh runs).
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".fixtures", "counter.mp4")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(sock, path):
    """GET path over the service's Unix socket; the JSON body, or None."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(3)
            s.connect(sock)
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        return json.loads(data.partition(b"\r\n\r\n")[2])
    except (OSError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--scanout", default=".build/release/scanout")
    ap.add_argument("--outage", type=float, default=600, help="seconds the broker is away")
    ap.add_argument("--before", type=float, default=30, help="seconds played before the outage")
    o = ap.parse_args()
    if not os.path.exists(FIXTURE):
        sys.exit(f"fleet-soak: {FIXTURE} is missing (tools/test.sh generates the fixtures)")
    work = tempfile.mkdtemp(prefix="fleet-soak-")
    # mosquitto started as root runs as the user mosquitto: its sessions are saved here.
    os.chmod(work, 0o777)
    port = free_port()
    with open(f"{work}/mosquitto.conf", "w") as f:
        # Sessions persist across the outage, as a production broker's do (the receiver's among them).
        f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location {work}/\n"
                "max_queued_messages 1000000\n")

    def broker():
        p = subprocess.Popen(["mosquitto", "-c", f"{work}/mosquitto.conf"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        return p

    sock = f"{work}/scanout.sock"
    config = {"output": "headless", "outputSize": "64x64", "port": 0, "unixSocket": sock, "playlist": [os.path.abspath(FIXTURE)],
              "repeat": "all", "stateDir": f"{work}/state", "logLevel": "notice",
              "mqtt": {"url": f"mqtt://127.0.0.1:{port}", "clientId": "soak", "statsInterval": 60}}
    with open(f"{work}/scanout.json", "w") as f:
        json.dump(config, f)

    def serve(n):
        return subprocess.Popen([o.scanout, "serve", "--config", f"{work}/scanout.json"], stdout=subprocess.DEVNULL,
                                stderr=open(f"{work}/serve{n}.stderr", "w"))

    b = broker()
    received = open(f"{work}/received.txt", "w")
    sub = subprocess.Popen(["mosquitto_sub", "-p", str(port), "-t", "scanout/soak/proof-of-play", "-q", "1", "-i", "soak-receiver", "-c"],
                           stdout=received, stderr=subprocess.DEVNULL)
    s = serve(0)
    try:
        time.sleep(o.before)
        print(f"broker stopped at {o.before:.0f} s for {o.outage:.0f} s", flush=True)
        b.terminate(); b.wait()
        time.sleep(o.outage / 2)
        queued = (get(sock, "/stats") or {}).get("mqtt", {}).get("queued")
        print(f"SIGKILL of the service with {queued} records queued", flush=True)
        s.kill(); s.wait()
        s = serve(1)
        time.sleep(o.outage / 2)
        queued = (get(sock, "/stats") or {}).get("mqtt", {}).get("queued")
        print(f"broker back with {queued} records queued", flush=True)
        b = broker()
        t0 = time.monotonic()
        while time.monotonic() - t0 < 120:
            m = (get(sock, "/stats") or {}).get("mqtt", {})
            if m.get("connected") and m.get("queued") == 0:
                break
            time.sleep(0.2)
        print(f"queue empty {time.monotonic() - t0:.1f} s after the broker came back", flush=True)
        time.sleep(2)
        s.terminate(); s.wait(10)
        time.sleep(2)
    finally:
        for p in (s, sub, b):
            if p.poll() is None:
                p.kill()
        received.close()
    db = sqlite3.connect(f"{work}/state/offline.db")
    plays = {r[0] for r in db.execute("SELECT id FROM play")}
    waiting = {json.loads(bytes(r[0]))["id"] for r in db.execute("SELECT payload FROM outbox")}
    expected = plays - waiting
    ids = [json.loads(line)["id"] for line in open(f"{work}/received.txt") if line.strip()]
    missing = expected - set(ids)
    print(f"plays recorded {len(plays)}, still queued {len(waiting)}, expected {len(expected)}; received {len(ids)} messages, "
          f"{len(set(ids))} distinct, {len(ids) - len(set(ids))} duplicates; missing {len(missing)}")
    ok = not missing and not (set(ids) - plays)
    print("soak:", "passed" if ok else f"FAILED (missing {sorted(missing)[:5]})")
    if ok:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print("kept", work)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
