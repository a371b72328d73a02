#!/usr/bin/python3
"""Pictures of a trace written by `tpusim ... --profile FILE.json` (docs/profiling.md).

usage: plot_profile.py heatmap TRACE.json OUT.png [TITLE]
       plot_profile.py timeline TRACE.json OUT.png CHIP [START_US END_US] [TITLE]

heatmap: each profiled chip's outgoing links over the torus, one panel per direction (+X -X
+Y -Y), coloured by utilisation (flits / cycles over the whole profile; otherData's
link_utilisation). timeline: chip CHIP's tracks (its queues with each command, its units'
busy intervals, the semaphores raised) as bars over time, optionally between START_US and
END_US. Run with Debian's /usr/bin/python3 (python3-matplotlib)."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

DIRS = ["+X", "-X", "+Y", "-Y"]


def load(path):
    with open(path) as f:
        return json.load(f)


def heatmap(trace, out, title):
    other = trace.get("otherData", {})
    w, h = (int(v) for v in other.get("pod", "1x1").split("x"))
    util = other.get("link_utilisation", {})
    if not util:
        sys.exit("plot_profile: the trace has no link_utilisation (written by an older tpusim?)")
    fig, axes = plt.subplots(2, 2, figsize=(8.5, 7.5) if w > 1 or h > 1 else (6, 5), squeeze=False)
    grids = [[[float("nan")] * w for _ in range(h)] for _ in DIRS]
    for key, vals in util.items():
        x, y = (int(v) for v in key.split(","))
        for d in range(4):
            grids[d][y][x] = vals[d]
    top = max([v for vals in util.values() for v in vals] + [1e-9])
    im = None
    for d, ax in enumerate(axes.flat):
        im = ax.imshow(grids[d], cmap="viridis", vmin=0, vmax=max(top, 0.01), origin="upper")
        ax.set_title("%s links (chip's outgoing)" % DIRS[d])
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.set_xticks(range(w))
        ax.set_yticks(range(h))
        if w * h <= 64:
            for y in range(h):
                for x in range(w):
                    v = grids[d][y][x]
                    if v == v:
                        ax.text(x, y, "%.0f" % (100 * v), ha="center", va="center", fontsize=7,
                                color="white" if v < 0.6 * top else "black")
    fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.8, label="link utilisation (flits / cycle)")
    fig.suptitle(title or "link utilisation over the torus (%dx%d, %% in cells)" % (w, h))
    fig.savefig(out, dpi=110)


def track_order(name):
    for i, key in enumerate(["compute queue", "DMA queue", "DMA engine", "vector unit", "MXU", "remote-DMA", "semaphore"]):
        if key in name:
            return i
    return 99


def timeline(trace, out, chip, start, end, title):
    pid = chip + 1
    threads, pname = {}, "chip %d" % chip
    slices = {}
    for e in trace["traceEvents"]:
        if e.get("pid") != pid:
            continue
        if e["ph"] == "M" and e["name"] == "thread_name":
            threads[e["tid"]] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "process_name":
            pname = e["args"]["name"]
        elif e["ph"] == "X":
            t0, t1 = e["ts"], e["ts"] + e["dur"]
            if end is not None and (t1 < start or t0 > end):
                continue
            slices.setdefault(e["tid"], []).append((t0, e["dur"], e.get("cat", ""), e["name"]))
    # the semaphores on one row: which semaphore is in the Perfetto trace
    sem = [t for t in slices if "semaphore" in threads.get(t, "")]
    if sem:
        slices[-1] = [s for t in sem for s in slices.pop(t)]
        threads[-1] = "semaphores raised"
    tids = sorted((t for t in slices), key=lambda t: (track_order(threads.get(t, "")), t))
    if not tids:
        sys.exit("plot_profile: chip %d has no slices in the trace" % chip)
    colours = {"command": "#4c72b0", "wait": "#dd8452", "DMA": "#55a868", "VEC": "#c44e52", "MXU": "#8172b3",
               "RDMA": "#937860", "semaphore": "#da8bc3"}
    fig, ax = plt.subplots(figsize=(11, 0.42 * len(tids) + 1.6))
    for row, tid in enumerate(tids):
        by_cat = {}
        for t0, dur, cat, _ in slices[tid]:
            by_cat.setdefault(cat, []).append((t0, max(dur, 1e-4)))
        for cat, bars in by_cat.items():
            ax.broken_barh(bars, (row - 0.4, 0.8), facecolors=colours.get(cat, "#999999"), linewidth=0)
    ax.set_yticks(range(len(tids)))
    ax.set_yticklabels([threads.get(t, str(t)) for t in tids], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("time (us)")
    if end is not None:
        ax.set_xlim(start, end)
    used = sorted({c for tid in tids for _, _, c, _ in slices[tid]})
    fig.legend(handles=[Patch(color=colours.get(c, "#999999"), label={"command": "command", "wait": "SEM_WAIT (blocked)"}
                              .get(c, c + (" raised" if c == "semaphore" else " busy"))) for c in used],
               loc="lower center", ncol=len(used), fontsize=8, frameon=False)
    ax.set_title(title or "%s: queues, units and semaphores" % pname)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(out, dpi=110)


def main(argv):
    if len(argv) < 4 or argv[1] not in ("heatmap", "timeline"):
        sys.exit(__doc__)
    trace = load(argv[2])
    if argv[1] == "heatmap":
        heatmap(trace, argv[3], argv[4] if len(argv) > 4 else None)
        return
    if len(argv) < 5:
        sys.exit(__doc__)
    chip = int(argv[4])
    start = end = None
    rest = argv[5:]
    if len(rest) >= 2:
        try:
            start, end = float(rest[0]), float(rest[1])
            rest = rest[2:]
        except ValueError:
            pass
    timeline(trace, argv[3], chip, start, end, rest[0] if rest else None)


main(sys.argv)
