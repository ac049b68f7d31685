#!/usr/bin/env python3
"""qmetric-monitor in Python: alert when a quality score stays low.

    examples/python/qmetric_monitor.py [--feature vmaf] [--below 80] [--frames 10]
        [--num-buffers 300] [--drop-at 150] [--verbose] [--pipeline DESC]

The same program as examples/app/qmetric-monitor.c, with PyGObject
(Debian: apt-get install python3-gi gir1.2-gstreamer-1.0).  Scores arrive
two ways:
 - in the streaming thread, in a pad probe on qmetric's src pad.  The C
   application reads GstQmetricMeta there; that struct has no introspection
   data, so Python reads the same per-frame scores from the tag event
   ("qmetric-<feature>") that qmetric sends with every scored frame;
 - in the main thread, as "qmetric" element messages on the bus.
The alert is decided in the probe and posted to the bus as an application
message, so that the streaming thread never waits on output.
"""
import argparse
import os
import sys

# Use the plugin of this source tree's build when there is one.
_here = os.path.dirname(os.path.abspath(__file__))
_build = os.path.join(_here, "..", "..", "build", "gst", "qmetric")
if os.path.isdir(_build):
    os.environ["GST_PLUGIN_PATH"] = os.pathsep.join(
        p for p in (os.path.normpath(_build), os.environ.get("GST_PLUGIN_PATH")) if p)

import gi  # noqa: E402

gi.require_version("Gst", "1.0")
from gi.repository import GLib, GObject, Gst  # noqa: E402


def metric_of(feature):
    """The metric that produces a feature, for the default pipeline."""
    for prefix, metric in (("psnr_hvs", "psnr_hvs"), ("psnr", "psnr"),
                           ("ciede2000", "ciede"), ("vmaf", "vmaf")):
        if feature.startswith(prefix):
            return metric
    return feature


def uint64(v):
    """A GValue holding a guint64, as the C application posts (a Python int
    would become a gint)."""
    value = GObject.Value(GObject.TYPE_UINT64)
    value.set_uint64(v)
    return value


class Monitor:
    def __init__(self, args):
        self.args = args
        self.tag = "qmetric-" + args.feature
        # streaming thread
        self.index = 0          # frames seen by the probe
        self.run = 0
        self.run_start = 0
        self.run_min = 0.0
        self.alerting = False
        self.tags = 0
        self.encoder = None
        # main thread
        self.messages = 0
        self.total = 0.0
        self.n = 0
        self.alerts = 0
        self.exit_code = 0
        self.loop = GLib.MainLoop()

    def post(self, element, what, first, last, value):
        s = Gst.Structure.new_empty("qmetric-monitor")
        s.set_value("what", what)
        s.set_value("first", uint64(first))
        s.set_value("last", uint64(last))
        s.set_value("min", float(value))
        element.post_message(Gst.Message.new_application(element, s))

    def on_event(self, pad, info):
        """Streaming thread: qmetric's tag event of a scored frame."""
        event = info.get_event()
        if event.type != Gst.EventType.TAG:
            return Gst.PadProbeReturn.OK
        ok, value = event.parse_tag().get_double(self.tag)
        if not ok:
            return Gst.PadProbeReturn.OK
        q = pad.get_parent_element()
        i = self.index
        self.index += 1
        self.tags += 1
        a = self.args
        if self.encoder is not None and i == a.drop_at:
            # the demonstration: the link loses 90% of its bandwidth
            kbps = max(self.encoder.get_property("bitrate") // 10, 1)
            self.encoder.set_property("bitrate", kbps)
            self.post(q, "bitrate-drop", i, i, kbps)
        if value < a.below:
            if self.run == 0:
                self.run_start, self.run_min = i, value
            self.run += 1
            self.run_min = min(self.run_min, value)
            if self.run == a.frames and not self.alerting:
                self.alerting = True
                self.post(q, "alert", self.run_start, i, self.run_min)
        else:
            if self.alerting:
                self.post(q, "recovered", self.run_start, i, self.run_min)
            self.alerting = False
            self.run = 0
        return Gst.PadProbeReturn.OK

    def on_message(self, bus, msg):
        """Main thread: the bus."""
        a = self.args
        s = msg.get_structure()
        if msg.type == Gst.MessageType.ELEMENT and s.has_name("qmetric"):
            self.messages += 1
            ok, value = s.get_double(a.feature)
            if ok:
                self.total += value
                self.n += 1
                if a.verbose:
                    print("frame %5d  %s %.3f" % (s.get_value("index"), a.feature, value))
        elif msg.type == Gst.MessageType.ELEMENT and s.has_name("qmetric-summary"):
            pooled = s.get_value(a.feature)
            if pooled is not None:
                ok, mean = pooled.get_double("mean")
                if ok:
                    print("summary: %s mean %.3f (pooled by qmetric)" % (a.feature, mean))
        elif msg.type == Gst.MessageType.APPLICATION and s.has_name("qmetric-monitor"):
            what = s.get_string("what")
            first, last = s.get_value("first"), s.get_value("last")
            value = s.get_double("min")[1]
            if what == "alert":
                self.alerts += 1
                print("ALERT: %s below %g for %d frames (frames %d..%d, lowest %.3f)"
                      % (a.feature, a.below, a.frames, first, last, value))
            elif what == "recovered":
                print("recovered at frame %d (%s was below %g from frame %d, lowest %.3f)"
                      % (last, a.feature, a.below, first, value))
            elif what == "bitrate-drop":
                print("frame %d: encoder bitrate cut to %.0f kbit/s" % (first, value))
        elif msg.type == Gst.MessageType.ERROR:
            err, _ = msg.parse_error()
            print("error from %s: %s" % (msg.src.get_name(), err.message), file=sys.stderr)
            self.exit_code = 2
            self.loop.quit()
        elif msg.type == Gst.MessageType.EOS:
            self.loop.quit()



def main():
    p = argparse.ArgumentParser(description="Alert when video quality drops.")
    p.add_argument("--feature", default="vmaf", help="score to watch (default vmaf)")
    p.add_argument("--below", type=float, default=80, help="alert threshold (default 80)")
    p.add_argument("--frames", type=int, default=10,
                   help="alert after this many frames in a row below (default 10)")
    p.add_argument("--num-buffers", type=int, default=300,
                   help="frames of the default pipeline (default 300)")
    p.add_argument("--drop-at", type=int, default=150,
                   help="default pipeline: cut the bitrate at this frame (-1: never)")
    p.add_argument("--verbose", "-v", action="store_true", help="print every frame's score")
    p.add_argument("--pipeline", help="pipeline to run instead (with 'qmetric name=q')")
    args = p.parse_args()

    Gst.init(None)
    desc = args.pipeline or (
        "videotestsrc num-buffers=%d pattern=zone-plate kx2=20 ky2=20 kt=1 ! "
        "video/x-raw,format=I420,width=640,height=360,framerate=30/1 ! tee name=t "
        "t. ! queue max-size-buffers=0 max-size-bytes=0 max-size-time=0 ! q.ref_sink "
        "t. ! queue ! x264enc name=enc bitrate=2000 speed-preset=ultrafast tune=zerolatency ! "
        "avdec_h264 ! q.dist_sink "
        "qmetric name=q metrics=%s ! fakesink" % (args.num_buffers, metric_of(args.feature)))
    try:
        pipeline = Gst.parse_launch(desc)
    except GLib.Error as e:
        print("cannot build the pipeline: %s" % e.message, file=sys.stderr)
        return 2
    q = pipeline.get_by_name("q")
    if q is None:
        print("the pipeline has no element named 'q' (qmetric name=q)", file=sys.stderr)
        return 2

    m = Monitor(args)
    m.encoder = pipeline.get_by_name("enc")
    q.get_static_pad("src").add_probe(Gst.PadProbeType.EVENT_DOWNSTREAM, m.on_event)
    bus = pipeline.get_bus()
    bus.add_signal_watch()
    bus.connect("message", m.on_message)
    print("watching %s: alert when below %g for %d frames" % (args.feature, args.below,
                                                              args.frames))
    pipeline.set_state(Gst.State.PLAYING)
    try:
        m.loop.run()
    finally:
        pipeline.set_state(Gst.State.NULL)
        bus.remove_signal_watch()
    print("frames: %d messages, %d tags; %s mean %.3f; %d alert(s)"
          % (m.messages, m.tags, args.feature, m.total / m.n if m.n else 0.0, m.alerts))
    return m.exit_code


if __name__ == "__main__":
    sys.exit(main())
