#!/usr/bin/env python3
"""Per-kernel accounting of the CUDA backend (docs/benchmarks.md).

  kernel-table.py regs [--arch 90] [--nvcc PATH]
      compile every cuda/*.cu with `-Xptxas -v` and list each kernel's
      registers, shared memory, stack frame and spills (no GPU needed).
  kernel-table.py ncu CSV [--copy-gbps G] [--title T]
      summarise `ncu --csv --print-units base --metrics ...` output (see
      scripts/gpu-kernels.sh): per kernel the launches, time per launch,
      DRAM and L2 bytes per launch, achieved bandwidth and its share of the
      measured device-to-device copy bandwidth, SM throughput.
Prints Markdown tables."""
import argparse, collections, csv, glob, io, os, re, shutil, subprocess, sys


def short(name):
    """Readable kernel name: no anonymous namespace, no parameter list."""
    name = re.sub(r"\(anonymous namespace\)::", "", name)
    depth = 0
    # drop the parameter list (the last top-level parenthesis group)
    cut = len(name)
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            cut = i
            break
    name = name[:cut]
    name = re.sub(r"^void ", "", name)
    name = name.replace("unsigned short", "u16").replace("unsigned char", "u8")
    return name


def demangle(names):
    tool = shutil.which("cu++filt") or "/usr/local/cuda/bin/cu++filt"
    if not os.path.exists(tool):
        tool = shutil.which("c++filt")
    if not tool:
        return names
    out = subprocess.run([tool], input="\n".join(names), capture_output=True,
                         text=True).stdout.splitlines()
    return out if len(out) == len(names) else names


def cmd_regs(a):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    nvcc = a.nvcc or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    rows = []
    for cu in sorted(glob.glob(os.path.join(root, "cuda", "*.cu"))):
        r = subprocess.run([nvcc, "-O3", "-std=c++17", "--fmad=false",
                            "-I" + os.path.join(root, "cpu"), "-I" + os.path.join(root, "cuda"),
                            "-arch=sm_" + a.arch, "-Xptxas", "-v", "-c", cu, "-o", os.devnull],
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit(r.stderr)
        cur = None
        for line in r.stderr.splitlines():
            m = re.search(r"Compiling entry function '([^']+)'", line)
            if m:
                cur = {"file": os.path.basename(cu), "mangled": m.group(1)}
                rows.append(cur)
                continue
            if cur is None:
                continue
            m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
            if m:
                cur["stack"], cur["spill_st"], cur["spill_ld"] = map(int, m.groups())
            m = re.search(r"Used (\d+) registers", line)
            if m:
                cur["regs"] = int(m.group(1))
                m2 = re.search(r"(\d+) bytes smem", line)
                cur["smem"] = int(m2.group(1)) if m2 else 0
    names = demangle([r["mangled"] for r in rows])
    print("| file | kernel | registers | shared memory (B) | stack (B) | spill stores / loads (B) |")
    print("|---|---|---|---|---|---|")
    for r, n in zip(rows, names):
        print("| %s | `%s` | %d | %d | %d | %d / %d |" % (
            r["file"], short(n), r.get("regs", 0), r.get("smem", 0), r.get("stack", 0),
            r.get("spill_st", 0), r.get("spill_ld", 0)))


def cmd_ncu(a):
    text = open(a.csv).read()
    # ncu prints its own lines (==PROF==) before the CSV
    lines = [l for l in text.splitlines() if l.startswith('"')]
    k = collections.OrderedDict()
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        name = short(row["Kernel Name"])
        d = k.setdefault(name, {"ids": set(), "m": collections.defaultdict(float)})
        d["ids"].add(row["ID"])
        try:
            v = float(row["Metric Value"].replace(",", ""))
        except ValueError:
            continue
        d["m"][row["Metric Name"]] += v
    total = sum(d["m"]["gpu__time_duration.sum"] for d in k.values()) or 1
    if a.title:
        print("**%s**\n" % a.title)
    print("| kernel | launches | share of kernel time | µs / launch | DRAM MB / launch | L2 MB / launch | DRAM GB/s | % of D2D copy | L2 GB/s | SM throughput % |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, d in sorted(k.items(), key=lambda kv: -kv[1]["m"]["gpu__time_duration.sum"]):
        n = len(d["ids"])
        m = d["m"]
        t = m["gpu__time_duration.sum"] / n  # ns
        dram = (m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]) / n
        l2 = m["lts__t_bytes.sum"] / n
        sm = m["sm__throughput.avg.pct_of_peak_sustained_elapsed"] / n
        gbps = dram / t if t else 0  # bytes/ns = GB/s
        print("| `%s` | %d | %.1f%% | %.1f | %.2f | %.2f | %.0f | %s | %.0f | %.0f |" % (
            name, n, 100 * m["gpu__time_duration.sum"] / total, t / 1e3, dram / 1e6,
            l2 / 1e6, gbps, "%.0f%%" % (100 * gbps / a.copy_gbps) if a.copy_gbps else "-",
            l2 / t if t else 0, sm))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("regs")
    r.add_argument("--arch", default="90")
    r.add_argument("--nvcc")
    n = sub.add_parser("ncu")
    n.add_argument("csv")
    n.add_argument("--copy-gbps", type=float, default=0)
    n.add_argument("--title")
    a = ap.parse_args()
    cmd_regs(a) if a.cmd == "regs" else cmd_ncu(a)


if __name__ == "__main__":
    main()
