#!/usr/bin/python3
"""Plots a latency-versus-load CSV written by `tpusim net --sweep` (or several, for bench).

usage: plot_sweep.py OUT.png TITLE CSV[=LABEL] ...   (several curves)
       plot_sweep.py CSV OUT.png TITLE               (one curve, as tpusim net calls it)
Run with Debian's /usr/bin/python3 (python3-matplotlib)."""
import csv
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: E402
except ImportError as e:
    sys.exit("%s: cannot import matplotlib (%s): install python3-matplotlib (make deps)" % (sys.argv[0], e))


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return ([float(r["accepted"]) for r in rows], [float(r["avg_latency"]) for r in rows])


def main(argv):
    if len(argv) == 4 and argv[1].endswith(".csv"):
        curves, out, title = [(argv[1], None)], argv[2], argv[3]
    elif len(argv) >= 4:
        out, title = argv[1], argv[2]
        curves = [tuple(a.split("=", 1)) if "=" in a else (a, None) for a in argv[3:]]
    else:
        sys.exit(__doc__)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for path, label in curves:
        x, y = load(path)
        ax.plot(x, y, marker="o", label=label or path)
    ax.set_xlabel("accepted load (flits/node/cycle)")
    ax.set_ylabel("average latency (cycles)")
    ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    if len(curves) > 1:
        ax.legend(fontsize=8)
    fig.tight_layout()
    try:
        fig.savefig(out, dpi=110)
    except OSError as e:
        sys.exit("%s: cannot write the plot: %s" % (sys.argv[0], e.strerror or e))


if __name__ == "__main__":
    main(sys.argv)
