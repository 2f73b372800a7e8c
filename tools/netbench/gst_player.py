"""Plays URI with GStreamer's playbin, the way its documentation says an application handles
buffering: the pipeline is paused while a BUFFERING message says less than 100 %, and set playing
again at 100 % (live sources excepted). Video and audio go to fakesink with sync=true, so frames
are shown in real time; the video sink's handoff stamps each frame shown.

Writes to stdout, one line each:
  frame MONOTONIC_NS PTS_S HEIGHT    a frame the video sink rendered (CLOCK_MONOTONIC)
  buffering MONOTONIC_NS PERCENT     a buffering message that changed the pipeline's state
  element NAME                       a demuxer, decoder or source element playbin made
  end eos|error MESSAGE|timeout
  stats rendered=N dropped=N decoder-dropped=N
Usage: python3 gst_player.py URI DEADLINE_SECONDS"""
import sys
import time

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402

Gst.init(None)
uri, deadline = sys.argv[1], float(sys.argv[2])
out = sys.stdout


def say(line):
    out.write(line + "\n")
    out.flush()


pipeline = Gst.ElementFactory.make("playbin", None)
pipeline.set_property("uri", uri)
vsink = Gst.ElementFactory.make("fakesink", "vsink")
vsink.set_property("sync", True)
vsink.set_property("signal-handoffs", True)
asink = Gst.ElementFactory.make("fakesink", "asink")
asink.set_property("sync", True)
pipeline.set_property("video-sink", vsink)
pipeline.set_property("audio-sink", asink)


def handoff(sink, buffer, pad):
    caps = pad.get_current_caps()
    height = caps.get_structure(0).get_value("height") if caps else 0
    pts = buffer.pts / Gst.SECOND if buffer.pts != Gst.CLOCK_TIME_NONE else -1
    say(f"frame {time.monotonic_ns()} {pts:.6f} {height}")


vsink.connect("handoff", handoff)


def element_added(bin, sub, element):
    name = element.get_factory().get_name() if element.get_factory() else element.get_name()
    if any(k in name for k in ("demux", "dec", "src", "queue2", "multiqueue")):
        say(f"element {name}")


pipeline.connect("deep-element-added", element_added)

loop = GLib.MainLoop()
state = {"live": False, "buffering": False, "decoder_dropped": {}}


def on_message(bus, msg):
    t = msg.type
    if t == Gst.MessageType.EOS:
        say("end eos")
        loop.quit()
    elif t == Gst.MessageType.ERROR:
        err, _ = msg.parse_error()
        say(f"end error {err.message}")
        loop.quit()
    elif t == Gst.MessageType.BUFFERING:
        # As the documentation's buffering example: not for live sources; pause below 100 %,
        # play at 100 %.
        if state["live"]:
            return
        percent = msg.parse_buffering()
        if percent < 100 and not state["buffering"]:
            state["buffering"] = True
            pipeline.set_state(Gst.State.PAUSED)
            say(f"buffering {time.monotonic_ns()} {percent}")
        elif percent >= 100 and state["buffering"]:
            state["buffering"] = False
            pipeline.set_state(Gst.State.PLAYING)
            say(f"buffering {time.monotonic_ns()} {percent}")
    elif t == Gst.MessageType.QOS:
        src = msg.src.get_name() if msg.src else "?"
        if src != "vsink":
            _, _, dropped = msg.parse_qos_stats()
            state["decoder_dropped"][src] = max(dropped, state["decoder_dropped"].get(src, 0))
    elif t == Gst.MessageType.CLOCK_LOST:
        pipeline.set_state(Gst.State.PAUSED)
        pipeline.set_state(Gst.State.PLAYING)


def timeout():
    say("end timeout")
    loop.quit()
    return False


bus = pipeline.get_bus()
bus.add_signal_watch()
bus.connect("message", on_message)
if pipeline.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.NO_PREROLL:
    state["live"] = True
GLib.timeout_add(int(deadline * 1000), timeout)
loop.run()
stats = vsink.get_property("stats")
rendered = stats.get_value("rendered") if stats else -1
dropped = stats.get_value("dropped") if stats else -1
pipeline.set_state(Gst.State.NULL)
say(f"stats rendered={rendered} dropped={dropped} decoder-dropped={sum(state['decoder_dropped'].values())}")
