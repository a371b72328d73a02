#!/usr/bin/python3
"""The per-layer MXU utilisation of a model run (`tpusim infer --json`, docs/models.md):
a bar per layer (step) of its utilisation over the chip's MACs a cycle, beside the bound its
shape allows (K and N padded to whole tiles), coloured by kernel.

usage: plot_layers.py RUN.json OUT.png [TITLE]   (Debian's /usr/bin/python3, python3-matplotlib)"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    with open(argv[1]) as f:
        run = json.load(f)
    layers = run["layers"]
    if not layers:
        sys.exit("plot_layers: the run has no layers")
    x = range(len(layers))
    util = [100 * l["utilization"] for l in layers]
    bound = [100 * l["bound"] for l in layers]
    colors = {"gemm": "tab:blue", "maxpool": "tab:orange", "avgpool": "tab:orange", "gap": "tab:green"}
    fig, ax = plt.subplots(figsize=(max(8, len(layers) * 0.18), 4.5))
    ax.bar(x, bound, color="lightgrey", label="shape bound")
    ax.bar(x, util, color=[colors.get(l["kernel"], "tab:grey") for l in layers], label="measured")
    ax.set_xlabel("layer (step of the schedule)")
    ax.set_ylabel("MXU utilisation (%)")
    ax.set_ylim(0, 100)
    title = argv[3] if len(argv) == 4 else "%s: %d images a chip, %.1f%% over the run" % (
        run["model_file"], run["images_per_chip"], 100 * run["utilization"])
    ax.set_title(title)
    ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)


if __name__ == "__main__":
    main(sys.argv)
