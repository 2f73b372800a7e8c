"""The benchmark's media, made with ffmpeg into a directory of the run's (never committed): an MP4
(H.264, constant bitrate, fast start) and a 3-variant HLS ladder (H.264, constant bitrate, the
same closed GOPs in every variant, so that each segment starts at the same frame everywhere).
Each is made only when missing; `media.json` beside them describes them."""
import json
import os
import subprocess

FULL = {
    "fps": 25,
    "mp4": {"seconds": 16, "size": "1280x720", "bitrate": 3_500_000},
    "hls": {"seconds": 20, "segment": 2,
            "variants": [("1280x720", 2_000_000), ("854x480", 700_000), ("426x240", 250_000)]},
}
# A tiny set for the self-check test: seconds, not minutes, to make and to play.
TINY = {
    "fps": 25,
    "mp4": {"seconds": 4, "size": "320x240", "bitrate": 600_000},
    "hls": {"seconds": 4, "segment": 1,
            "variants": [("320x240", 400_000), ("256x192", 200_000), ("160x120", 100_000)]},
}


def source(size, fps, seconds):
    # Moving test pattern with noise: every frame needs its share of the bitrate.
    return f"testsrc2=size={size}:rate={fps},noise=alls=12:allf=t,format=yuv420p,trim=duration={seconds}"


def x264(bitrate, index=""):
    b = str(bitrate)
    return [f"-b:v{index}", b, f"-minrate:v{index}", b, f"-maxrate:v{index}", b, f"-bufsize:v{index}", str(bitrate // 2)]


def run(args):
    r = subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y"] + args, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"bench-network: ffmpeg failed: {r.stderr.strip()}")


def make(directory, spec):
    """Makes the media in `directory` when missing; returns its description."""
    os.makedirs(directory, exist_ok=True)
    described = os.path.join(directory, "media.json")
    if os.path.exists(described):
        with open(described) as f:
            info = json.load(f)
        if info.get("spec") == json.loads(json.dumps(spec)):
            return info
    fps = spec["fps"]
    gop = fps * spec["hls"]["segment"]
    common = ["-c:v", "libx264", "-preset", "veryfast", "-threads", "2", "-g", str(gop), "-keyint_min", str(gop),
              "-bf", "2", "-x264-params", "open-gop=0:scenecut=0:nal-hrd=cbr", "-pix_fmt", "yuv420p"]
    m = spec["mp4"]
    mp4 = os.path.join(directory, "vod.mp4")
    run(["-f", "lavfi", "-i", source(m["size"], fps, m["seconds"])] + common + x264(m["bitrate"])
        + ["-movflags", "+faststart", mp4])
    h = spec["hls"]
    ladder = os.path.join(directory, "ladder")
    os.makedirs(ladder, exist_ok=True)
    inputs, maps, rates, streams = [], [], [], []
    for i, (size, rate) in enumerate(h["variants"]):
        inputs += ["-f", "lavfi", "-i", source(size, fps, h["seconds"])]
        maps += ["-map", f"{i}:v"]
        rates += x264(rate, f":{i}")
        streams.append(f"v:{i}")
    run(inputs + maps + common + rates + ["-f", "hls", "-hls_time", str(h["segment"]), "-hls_playlist_type", "vod",
                                          "-hls_segment_filename", os.path.join(ladder, "v%v/seg%d.ts"),
                                          "-master_pl_name", "master.m3u8", "-var_stream_map", " ".join(streams),
                                          os.path.join(ladder, "v%v/index.m3u8")])
    variants = []
    for i, (size, rate) in enumerate(h["variants"]):
        w, hgt = (int(x) for x in size.split("x"))
        seg_dir = os.path.join(ladder, f"v{i}")
        total = sum(os.path.getsize(os.path.join(seg_dir, n)) for n in os.listdir(seg_dir) if n.endswith(".ts"))
        variants.append({"id": i, "width": w, "height": hgt, "bitrate": rate,
                         "measuredBitrate": round(total * 8 / h["seconds"])})
    info = {
        "spec": spec,
        "mp4": {"path": "vod.mp4", "seconds": m["seconds"], "frames": m["seconds"] * fps, "fps": fps,
                "width": int(m["size"].split("x")[0]), "height": int(m["size"].split("x")[1]), "bitrate": m["bitrate"],
                "measuredBitrate": round(os.path.getsize(mp4) * 8 / m["seconds"])},
        "hls": {"path": "ladder/master.m3u8", "seconds": h["seconds"], "frames": h["seconds"] * fps, "fps": fps,
                "segment": h["segment"], "variants": variants},
    }
    with open(described, "w") as f:
        json.dump(info, f, indent=1)
    return info
