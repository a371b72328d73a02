#!/usr/bin/env python3
"""Plots training scaling (scripts/bench_train.sh) against the number of chips, for DP, MP and
DP x MP: weak-scaling efficiency and strong-scaling speed-up, both from the model's FLOP rate
(tflops) against one chip's (for DP weak scaling the efficiency is also 1x1 step / step).

usage: scripts/plot_scaling.py train_scaling.csv OUT.png
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NAMES = {"dp": "DP", "mp": "MP", "dpmp": "DP x MP"}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1])))
    fig, (weak, strong) = plt.subplots(1, 2, figsize=(9, 3.6), dpi=100)
    for mode in NAMES:
        for scaling, ax in (("weak", weak), ("strong", strong)):
            pts = sorted((int(r["chips"]), float(r["tflops"])) for r in rows
                         if r["mode"] == mode and r["scaling"] == scaling)
            if not pts:
                continue
            base = pts[0][1]
            chips = [c for c, _ in pts]
            if scaling == "weak":
                ax.plot(chips, [100.0 * t / base / c for c, t in pts], marker="o", label=NAMES[mode])
            else:
                ax.plot(chips, [t / base for _, t in pts], marker="o", label=NAMES[mode])
    weak.set_title("weak scaling (batch or model shard per chip fixed)", fontsize=9)
    weak.set_ylabel("efficiency: FLOP rate per chip (%)")
    strong.set_title("strong scaling (global batch and model fixed)", fontsize=9)
    strong.set_ylabel("speed-up")
    strong.plot([1, 64], [1, 64], color="gray", linestyle=":", label="linear")
    for ax in (weak, strong):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("chips")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    strong.set_yscale("log", base=2)
    fig.tight_layout()
    fig.savefig(sys.argv[2])


if __name__ == "__main__":
    main()
