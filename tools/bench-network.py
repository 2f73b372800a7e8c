#!/usr/bin/env python3
"""The network benchmark: Scanout (`play` and `serve`), mpv and GStreamer play the same media from
a throttling server on 127.0.0.1 whose link follows a named profile (a hard stall, a trickle below
the bitrate, a sawtooth, a stall at start-up), one run per player, profile and medium, in one run.

Figures per run: frames shown, dropped and decoded (as each player counts them), frames missing
(of the clip's, not shown), total freeze time (the sum, over consecutive frames shown, of each
gap longer than 2 frame intervals less one interval), start-up time (from the request to the first
frame shown), the mean bitrate shown (the bitrate of the variant each shown frame came from,
averaged over the frames, so weighted by time) and variant switches (changes of that variant
between consecutive frames shown).

Usage: tools/bench-network.py [--scanout BINARY] [--profiles stall,trickle,...] [--media mp4,hls]
                              [--players scanout-play,scanout-serve,mpv,gstreamer] [--tiny] [--out DIR]
Prints one table; writes DIR/bench-network.json (default DIR: out/bench-network); `--report JSON`
prints the table of a saved run again. The media are made
with ffmpeg into DIR/media (DIR/media-tiny with --tiny) the first time. Peers that are not installed
are skipped, with a line saying so (tools/setup-bench.sh installs them)."""
import argparse
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from netbench import media, players  # noqa: E402
from netbench.throttle import PROFILES, ThrottledServer  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_PROFILES = ["stall", "trickle", "sawtooth", "startup-stall"]
ALL_PLAYERS = ["scanout-play", "scanout-serve", "mpv", "gstreamer"]


def default_scanout():
    for build in ("release", "debug"):
        p = os.path.join(ROOT, ".build", build, "scanout")
        if os.access(p, os.X_OK):
            return p
    return None


def arguments():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--scanout", default=default_scanout(), help="the scanout binary (default: .build/release, else .build/debug)")
    a.add_argument("--profiles", default=",".join(DEFAULT_PROFILES), help=f"comma-separated, of: {', '.join(PROFILES)}")
    a.add_argument("--media", default="mp4,hls", help="mp4, hls or both")
    a.add_argument("--players", default=",".join(ALL_PLAYERS), help=f"comma-separated, of: {', '.join(ALL_PLAYERS)}")
    a.add_argument("--tiny", action="store_true", help="a tiny clip set (4 s, 320x240): the self-check")
    a.add_argument("--out", default=os.path.join(ROOT, "out", "bench-network"), help="where the JSON and the media go")
    a.add_argument("--keep-frames", action="store_true", help="keep every frame's times in the JSON")
    a.add_argument("--report", metavar="JSON", help="print the table of a JSON written with --keep-frames (figures computed again); run nothing")
    o = a.parse_args()
    o.profiles = [p for p in o.profiles.split(",") if p]
    o.media = [m for m in o.media.split(",") if m]
    o.players = [p for p in o.players.split(",") if p]
    for p in o.profiles:
        if p not in PROFILES:
            a.error(f"--profiles: unknown profile {p!r} (known: {', '.join(PROFILES)})")
    for m in o.media:
        if m not in ("mp4", "hls"):
            a.error(f"--media: unknown medium {m!r} (mp4 or hls)")
    for p in o.players:
        if p not in ALL_PLAYERS:
            a.error(f"--players: unknown player {p!r} (known: {', '.join(ALL_PLAYERS)})")
    return o


def available_players(o):
    """The players asked for that can run, and a line for each that cannot."""
    ready, skipped, gst_python = [], [], None
    for p in o.players:
        if p.startswith("scanout"):
            if o.scanout and os.access(o.scanout, os.X_OK):
                ready.append(p)
            else:
                skipped.append(f"{p}: no scanout binary (build one: swift build -c release --product scanout)")
        elif p == "mpv":
            if shutil.which("mpv"):
                ready.append(p)
            else:
                skipped.append("mpv: not installed, skipped (tools/setup-bench.sh installs it)")
        elif p == "gstreamer":
            gst_python = players.python_with_gst()
            if gst_python:
                ready.append(p)
            else:
                skipped.append("gstreamer: playbin with Python bindings not installed, skipped (tools/setup-bench.sh installs it)")
    return ready, skipped, gst_python


def variant_of_segments(server_log):
    """For a player that does not say which variant each frame came from: for each segment number,
    the variant of its copy that played, read from the order of the server's answers. A copy of
    a segment older than one already asked for is a probe (a new demuxer context reads every
    variant's first segments), not playback; of several copies of one segment, the one from the
    variant that then served the next segment played, else the last one sent whole."""
    fetched, frontier = {}, -1
    for entry in sorted(server_log, key=lambda e: e["start"]):
        m = re.search(r"/v(\d+)/seg(\d+)\.ts$", entry["path"])
        if not m:
            continue
        variant, k = int(m.group(1)), int(m.group(2))
        if k < frontier:
            continue
        frontier = k
        if entry["whole"]:
            fetched.setdefault(k, []).append(variant)
    chosen = {}
    for k, variants in fetched.items():
        following = fetched.get(k + 1, [])
        chosen[k] = following[0] if following and following[0] in variants else variants[-1]
    return chosen


def figures(run, info, kind, server_log):
    """The run's figures from its frames and counters."""
    clip = info[kind]
    fps = clip["fps"]
    interval = 1.0 / fps
    frames = run["frames"]
    if kind == "mp4":
        rate_of = lambda f: clip["bitrate"]  # noqa: E731
        variant_of = lambda f: 0  # noqa: E731
    else:
        by_height = {v["height"]: v for v in clip["variants"]}
        by_id = {v["id"]: v for v in clip["variants"]}
        if frames and all(f[2] is None for f in frames):
            # No picture size from this player: the variant whose segment was sent whole last.
            segs = variant_of_segments(server_log)
            for f in frames:  # Scanout's media times start at 0 at the stream's first frame
                k = int(math.floor(f[1] / clip["segment"] + 1e-6))
                f[2] = by_id.get(segs.get(k), {}).get("height")
            run["variantFrom"] = "the server's log (the last copy of each segment sent whole)"
        variant_of = lambda f: by_height.get(f[2], {}).get("id")  # noqa: E731
        rate_of = lambda f: by_height.get(f[2], {}).get("bitrate")  # noqa: E731
    gaps = [b[0] - a[0] for a, b in zip(frames, frames[1:])]
    # The picture also stands still from the last frame shown until playback ends (a player that
    # skipped the rest of the clip ends soon after it showed its last frame, not at once).
    end = run.get("endSeconds")
    tail = end - frames[-1][0] if frames and end is not None else 0.0
    # (A player ends a frame or two after its last frame: it shows it for its duration, then says
    # so; the tail counts beyond 3 intervals.)
    frozen = [g for g in gaps if g > 2 * interval] + ([tail] if tail > 3 * interval else [])
    freeze = float(sum(g - interval for g in frozen))
    rates = [r for r in map(rate_of, frames) if r is not None]
    variants = [v for v in map(variant_of, frames) if v is not None]
    switches = sum(1 for a, b in zip(variants, variants[1:]) if a != b)
    c = run["counters"]
    if run["player"] == "mpv" and c.get("end") == "eof" and c.get("decoded") is None:
        # mpv reached the end: it decoded every frame but those its decoder skipped.
        c["decoded"] = clip["frames"] - c.get("decoderDropped", 0)
    return {
        "clipFrames": clip["frames"],
        "shown": c.get("shown") if c.get("shown") is not None else len(frames),
        "framesLogged": len(frames),
        "dropped": c.get("dropped"),
        "decoded": c.get("decoded"),
        "missing": clip["frames"] - (c.get("shown") if c.get("shown") is not None else len(frames)),
        "freezeSeconds": round(freeze, 3),
        "longestFreezeSeconds": round(max(frozen, default=0.0), 3),
        "tailSeconds": round(tail, 3),
        "endSeconds": round(end, 3) if end is not None else None,
        "startupSeconds": round(frames[0][0], 3) if frames else None,
        "lastFrameSeconds": round(frames[-1][0], 3) if frames else None,
        "meanBitrateShown": round(sum(rates) / len(rates)) if rates else None,
        "switches": switches,
    }


def run_one(o, info, media_dir, kind, profile, player, gst_python):
    server = ThrottledServer(media_dir, PROFILES[profile]).start()
    url = server.url(info[kind]["path"])
    stalls = sum(e - s for s, e, r in PROFILES[profile].spans if r == 0)
    deadline = info[kind]["seconds"] + stalls + (40 if not o.tiny else 20)
    work = tempfile.mkdtemp(prefix="bench-network-")
    try:
        if player == "scanout-play":
            run = players.scanout_play(o.scanout, url, deadline, work)
        elif player == "scanout-serve":
            run = players.scanout_serve(o.scanout, url, deadline, work)
        elif player == "mpv":
            run = players.mpv(url, deadline, work, info[kind]["fps"])
        else:
            run = players.gstreamer(url, deadline, work, gst_python)
    except Exception as e:  # one run that cannot be made is reported; the others go on
        run = players.record(player, [], {}, None, False, [f"the run failed: {e}"])
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    log = server.link.log
    run.update({"media": kind, "profile": profile, "url": url,
                "server": {"requests": len(log), "bytes": sum(e["bytes"] for e in log),
                           "cut": sum(1 for e in log if not e["whole"])}})
    run["figures"] = figures(run, info, kind, log)
    run["serverLog"] = log
    if not o.keep_frames:
        run["frames"] = len(run["frames"])
    return run


COLUMNS = [("medium", 6), ("profile", 13), ("player", 13), ("shown", 6), ("dropped", 7), ("decoded", 7), ("missing", 7),
           ("freeze s", 8), ("start s", 7), ("kb/s shown", 10), ("switches", 8), ("end", 0)]


def row(run):
    f = run["figures"]
    fmt = lambda v, d=2: "-" if v is None else (f"{v:.{d}f}" if isinstance(v, float) else str(v))  # noqa: E731
    end = "timeout" if run["timedOut"] else (run["counters"].get("end") or f"exit {run['exitStatus']}")
    cells = [run["media"], run["profile"], run["player"], fmt(f["shown"]), fmt(f["dropped"]), fmt(f["decoded"]),
             fmt(f["missing"]), fmt(f["freezeSeconds"]), fmt(f["startupSeconds"]),
             fmt(None if f["meanBitrateShown"] is None else round(f["meanBitrateShown"] / 1000)), fmt(f["switches"]), end]
    return "  ".join(c.ljust(w) if w else c for c, (_, w) in zip(cells, COLUMNS))


def scanout_version(binary):
    try:
        r = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
        return r.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def report(path):
    with open(path) as f:
        saved = json.load(f)
    print("  ".join(n.ljust(w) if w else n for n, w in COLUMNS))
    for run in saved["runs"]:
        if isinstance(run["frames"], list):
            run["figures"] = figures(run, saved["media"], run["media"], run["serverLog"])
        print(row(run))


def main():
    o = arguments()
    if o.report:
        report(o.report)
        return
    started = time.time()
    load_before = os.getloadavg()
    media_dir = os.path.join(o.out, "media-tiny" if o.tiny else "media")
    info = media.make(media_dir, media.TINY if o.tiny else media.FULL)
    ready, skipped, gst_python = available_players(o)
    for line in skipped:
        print(f"bench-network: {line}", file=sys.stderr)
    runs = []
    print("  ".join(n.ljust(w) if w else n for n, w in COLUMNS), flush=True)
    for kind in o.media:
        for profile in o.profiles:
            for player in ready:
                run = run_one(o, info, media_dir, kind, profile, player, gst_python)
                runs.append(run)
                print(row(run), flush=True)
    load = os.getloadavg()
    result = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "seconds": round(time.time() - started, 1),
        "machine": {"host": platform.node(), "cpus": os.cpu_count(), "loadAverageAtStart": [round(x, 2) for x in load_before],
                    "loadAverageAtEnd": [round(x, 2) for x in load]},
        "scanout": {"binary": o.scanout, "version": scanout_version(o.scanout) if o.scanout else None},
        "skipped": skipped,
        "media": info,
        "profiles": [PROFILES[p].to_json() for p in o.profiles],
        "definitions": {
            "freezeSeconds": "sum over consecutive frames shown of (gap - 1 frame interval) for each gap > 2 frame intervals, and the same from the last frame shown to the end of playback when that is > 3 frame intervals",
            "startupSeconds": "from the request (process start; POST /load for serve) to the first frame shown",
            "meanBitrateShown": "bitrate of the variant (nominal) of each frame shown, averaged over the frames",
            "missing": "frames of the clip that were not shown",
        },
        "runs": runs,
    }
    os.makedirs(o.out, exist_ok=True)
    path = os.path.join(o.out, "bench-network-tiny.json" if o.tiny else "bench-network.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    print(f"bench-network: {len(runs)} runs in {result['seconds']} s, load average {load[0]:.2f}; JSON: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
