#!/usr/bin/env python3
"""Memory soak of the qmetric element: a long synthetic stream at a small
size, resident memory (VmRSS) of this process sampled every --every frames,
and with --backend cuda the GPU memory this process holds (nvidia-smi).

The pipeline is a live probe's: per-frame messages on (counted on the bus, as
an application does), every pooled value including the percentiles, no log.

  GST_PLUGIN_PATH=build/gst/qmetric nice tools/soak.py --frames 1000000
  GST_PLUGIN_PATH=build/gst/qmetric tools/soak.py --frames 1000000 --backend cuda

Prints one CSV line per sample (frames, seconds, VmRSS KiB[, GPU MiB]), then
the figures after warm-up and at the end.  Exits 1 when the growth after
warm-up is over --max-growth-kib (or --max-growth-gpu-mib), 2 on a pipeline
error or when the frame count is not the one asked for.
"""
import argparse
import os
import subprocess
import sys
import time

import gi
gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402


def vmrss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def gpu_mib():
    """GPU memory held by this process (MiB), or -1 when nvidia-smi cannot say."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory",
             "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return -1
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0] == str(os.getpid()):
            return int(parts[1])
    return -1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=1000000)
    ap.add_argument("--size", default="64x64")
    ap.add_argument("--metrics", default="psnr,vmaf")
    ap.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--every", type=int, default=50000,
                    help="frames between samples")
    ap.add_argument("--warmup", type=int, default=100000,
                    help="frames after which memory must stay flat")
    ap.add_argument("--max-growth-kib", type=int, default=1024)
    ap.add_argument("--max-growth-gpu-mib", type=int, default=2)
    a = ap.parse_args()
    w, h = (int(x) for x in a.size.split("x"))

    Gst.init(None)
    caps = f"video/x-raw,format=I420,width={w},height={h},framerate=1000/1"
    desc = (
        f"videotestsrc num-buffers={a.frames} pattern=ball ! {caps} ! tee name=t "
        "t. ! queue ! q.ref_sink "
        "t. ! queue ! videobalance contrast=0.9 brightness=0.02 ! q.dist_sink "
        f"qmetric name=q metrics={a.metrics} backend={a.backend} "
        "pool=min+max+mean+harmonic-mean+p1+p5 ! fakesink sync=false")
    pipe = Gst.parse_launch(desc)
    loop = GLib.MainLoop()
    st = {"frames": 0, "t0": time.monotonic(), "samples": [], "error": None,
          "summary": None}
    gpu = a.backend == "cuda"

    def sample():
        row = [st["frames"], time.monotonic() - st["t0"], vmrss_kib()]
        if gpu:
            row.append(gpu_mib())
        st["samples"].append(row)
        print(",".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in row),
              flush=True)

    def on_message(bus, msg):
        t = msg.type
        if t == Gst.MessageType.ELEMENT:
            s = msg.get_structure()
            if s.get_name() == "qmetric":
                st["frames"] += 1
                if st["frames"] % a.every == 0:
                    sample()
            elif s.get_name() == "qmetric-summary":
                pooled = s.get_value("vmaf") or s.get_value("psnr_y")
                st["summary"] = (f"frames={s.get_value('frames')} "
                                 f"{pooled.to_string() if pooled else ''}")
        elif t == Gst.MessageType.ERROR:
            err, dbg = msg.parse_error()
            st["error"] = f"{err.message} ({dbg})"
            loop.quit()
        elif t == Gst.MessageType.EOS:
            loop.quit()
        return True

    bus = pipe.get_bus()
    bus.add_signal_watch()
    bus.connect("message", on_message)
    print("frames,seconds,vmrss_kib" + (",gpu_mib" if gpu else ""), flush=True)
    pipe.set_state(Gst.State.PLAYING)
    loop.run()
    sample()
    pipe.set_state(Gst.State.NULL)
    bus.remove_signal_watch()

    if st["error"]:
        print(f"pipeline error: {st['error']}", file=sys.stderr)
        return 2
    warm = [r for r in st["samples"] if r[0] >= a.warmup]
    if not warm:
        print("no sample after warm-up: raise --frames or lower --warmup",
              file=sys.stderr)
        return 2
    first, last = warm[0], warm[-1]
    peak = max(r[2] for r in warm)
    print(f"summary: {st['summary']}")
    print(f"frames {st['frames']} in {last[1]:.0f} s "
          f"({st['frames'] / last[1]:.0f} fps), {a.size} {a.metrics} {a.backend}")
    print(f"VmRSS after warm-up ({first[0]} frames) {first[2]} KiB, "
          f"at the end ({last[0]} frames) {last[2]} KiB, peak after warm-up "
          f"{peak} KiB, growth {last[2] - first[2]} KiB")
    rc = 0
    if st["frames"] != a.frames:
        print(f"FAIL: {st['frames']} frames scored, {a.frames} sent")
        rc = 2
    if peak - first[2] > a.max_growth_kib:
        print(f"FAIL: resident memory grew by {peak - first[2]} KiB "
              f"(limit {a.max_growth_kib})")
        rc = rc or 1
    if gpu:
        g = [r[3] for r in warm]
        print(f"GPU memory after warm-up {g[0]} MiB, at the end {g[-1]} MiB, "
              f"peak {max(g)} MiB")
        if g[0] < 0:
            print("FAIL: nvidia-smi did not report this process")
            rc = rc or 1
        elif max(g) - g[0] > a.max_growth_gpu_mib:
            print(f"FAIL: GPU memory grew by {max(g) - g[0]} MiB")
            rc = rc or 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
