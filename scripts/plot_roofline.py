#!/usr/bin/python3
"""Roofline-style plot of the HBM bandwidth sweep written by scripts/bench_chip.sh.

usage: plot_roofline.py SWEEP.csv OUT.png PEAK_MACS_PER_CYCLE TITLE
Attained MACs/cycle against HBM bytes/cycle, with the two bounds: the MXU's peak, and
what the bandwidth allows at the run's arithmetic intensity (MACs per HBM byte).
Run with Debian's /usr/bin/python3 (python3-matplotlib)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    path, out, peak, title = argv[1], argv[2], float(argv[3]), argv[4]
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    bw = [float(r["hbm_bytes_per_cycle"]) for r in rows]
    attained = [float(r["macs"]) / float(r["cycles"]) for r in rows]
    intensity = float(rows[-1]["macs"]) / float(rows[-1]["hbm_bytes"])  # MACs per byte moved
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(bw, attained, marker="o", label="simulated GEMM")
    ax.plot(bw, [min(peak, b * intensity) for b in bw], linestyle="--", label="roofline: min(peak, bandwidth x intensity)")
    ax.axhline(peak, color="gray", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("HBM bandwidth (bytes/cycle)")
    ax.set_ylabel("MACs per cycle")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv)
