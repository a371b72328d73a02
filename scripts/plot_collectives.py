#!/usr/bin/python3
"""busbw against message size for each collective, one panel per pod, from the CSV that
scripts/bench_collective.sh writes.

usage: plot_collectives.py SWEEP.csv OUT.png
Run with Debian's /usr/bin/python3 (python3-matplotlib)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    with open(argv[1], newline="") as f:
        rows = list(csv.DictReader(f))
    pods = sorted({r["pod"] for r in rows})
    fig, axes = plt.subplots(1, len(pods), figsize=(6 * len(pods), 4.5), squeeze=False)
    for ax, pod in zip(axes[0], pods):
        series = sorted({(r["op"], r["algo"]) for r in rows if r["pod"] == pod})
        for op, algo in series:
            pts = [r for r in rows if r["pod"] == pod and r["op"] == op and r["algo"] == algo]
            pts.sort(key=lambda r: int(r["bytes"]))
            label = op if op != "allreduce" else f"allreduce ({algo})"
            ax.plot([int(r["bytes"]) for r in pts], [float(r["busbw_GBps"]) for r in pts], marker="o", label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("bytes per chip")
        ax.set_ylabel("busbw (GB/s, nccl-tests convention)")
        ax.set_title(f"{pod} pod, 16x16 chips, 940 MHz")
        ax.grid(True, which="both", linewidth=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)


if __name__ == "__main__":
    main(sys.argv)
