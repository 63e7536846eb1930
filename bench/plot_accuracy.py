#!/usr/bin/python3
"""Plots of an fwht_accuracy CSV: mean relative error against log2 n, one panel per format, one
line per variant (the median over the input x experiment cells), and the reduction versus
folklore. Needs Debian's python3-matplotlib.

usage: plot_accuracy.py RESULTS.csv OUTPUT_PREFIX
writes OUTPUT_PREFIX_error.png and OUTPUT_PREFIX_reduction.png
"""
import csv
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(path, prefix):
    cells = defaultdict(list)  # (format, variant, log2n) -> MRE of each cell
    by_cell = defaultdict(dict)  # (format, log2n, input, experiment, trial) -> {variant: MRE}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["missing"] == "1":
                continue
            key = (row["format"], int(row["log2n"]), row["input"], row["experiment"], row["trial"])
            mre = float(row["mean_relative_error"])
            by_cell[key][row["variant"]] = mre
            cells[(row["format"], row["variant"], int(row["log2n"]))].append(mre)
    formats = sorted({k[0] for k in cells}, key=["f64", "f32", "f16", "bf16"].index)
    variants = ["folklore", "kahan", "neumaier", "wide_onchip", "wide_carry", "alman_rao"]
    # One color per variant in every panel (f64 has no wide variants, so the cycle would shift).
    color = {v: f"C{i}" for i, v in enumerate(variants)}

    fig, axes = plt.subplots(1, len(formats), figsize=(4 * len(formats), 3.4), squeeze=False)
    for ax, fmt in zip(axes[0], formats):
        for v in variants:
            xs = sorted({k[2] for k in cells if k[0] == fmt and k[1] == v})
            if not xs:
                continue  # wide_onchip / wide_carry have no f64 cells
            ys = [statistics.median(cells[(fmt, v, x)]) for x in xs]
            ax.semilogy(xs, ys, marker="o", ms=3, label=v, color=color[v])
        ax.set_title(fmt)
        ax.set_xlabel("log2 n")
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("median mean relative error")
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(prefix + "_error.png", dpi=80)

    fig, axes = plt.subplots(1, len(formats), figsize=(4 * len(formats), 3.4), squeeze=False)
    for ax, fmt in zip(axes[0], formats):
        for v in variants[1:]:
            red = defaultdict(list)
            for (f_, n, *_), by_variant in by_cell.items():
                if f_ == fmt and "folklore" in by_variant and v in by_variant and by_variant["folklore"] > 0:
                    red[n].append(100 * (1 - by_variant[v] / by_variant["folklore"]))
            xs = sorted(red)
            if not xs:
                continue
            ax.plot(xs, [statistics.median(red[x]) for x in xs], marker="o", ms=3, label=v, color=color[v])
        for y, style in ((30, ":"), (75, "--"), (-50, "-.")):
            ax.axhline(y, color="gray", lw=0.8, ls=style)
        # A few f16 Alman-Rao medians fall to -500% where most cells overflow: clip the axis there.
        ax.set_ylim(max(ax.get_ylim()[0], -110), 105)
        ax.set_title(fmt + " (gray: thesis 30 / 75 / -50 %)", fontsize=9)
        ax.set_xlabel("log2 n")
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("median reduction vs folklore (%)")
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(prefix + "_reduction.png", dpi=80)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
