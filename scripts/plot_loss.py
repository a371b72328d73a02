#!/usr/bin/env python3
"""Plots a training run's loss curve (tpusim train --plot, make bench).

usage: scripts/plot_loss.py LOSS.csv OUT.png [TITLE]   (CSV columns: step,loss,cycles)
"""
import csv
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: E402
except ImportError as e:
    sys.exit("%s: cannot import matplotlib (%s): install python3-matplotlib (make deps)" % (sys.argv[0], e))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    steps, loss = [], []
    with open(sys.argv[1]) as f:
        for row in csv.DictReader(f):
            steps.append(int(row["step"]))
            loss.append(float(row["loss"]))
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    ax.plot(steps, loss, color="tab:blue")
    ax.set_xlabel("step")
    ax.set_ylabel("training loss (cross-entropy)")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    if len(sys.argv) > 3:
        ax.set_title(sys.argv[3], fontsize=9)
    fig.tight_layout()
    try:
        fig.savefig(sys.argv[2])
    except OSError as e:
        sys.exit("%s: cannot write the plot: %s" % (sys.argv[0], e.strerror or e))


if __name__ == "__main__":
    main()
