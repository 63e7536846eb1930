"""Plots of a pagh-mm study: study_plot.py RESULTS.csv OUTDIR.

Embedded in pagh-mm (which writes it to a temporary file and runs it with python3) so that the
binary works anywhere; it needs only Debian's python3-matplotlib (and the numpy it brings).
Each PNG is written to a temporary name and renamed into place: never a partial file (a device or
FIFO named like a plot is written directly).
Exit status 3 when matplotlib is missing (pagh-mm then reports the plots as skipped).
"""
import csv
import math
import os
import statistics
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("python3-matplotlib is not installed (Debian: apt-get install python3-matplotlib)")
    sys.exit(3)

DPI = 80  # small files: these plots go into the repository


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def save(fig, outdir, name):
    # The project's output rule (pagh/output_file.hpp): a symbolic link's target is replaced (the
    # link stays); a device or FIFO is written directly; anything else atomically (temporary + rename).
    target = os.path.realpath(os.path.join(outdir, name))
    if os.path.exists(target) and not os.path.isfile(target) and not os.path.isdir(target):
        with open(target, "wb") as f:
            fig.savefig(f, dpi=DPI, format="png")
        plt.close(fig)
        return
    temporary = os.path.join(os.path.dirname(target), "." + name + ".tmp-%d.png" % os.getpid())
    fig.savefig(temporary, dpi=DPI)
    plt.close(fig)
    os.replace(temporary, target)


def grid_of(workloads):
    n = len(workloads)
    cols = 2 if n > 1 else 1
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.3 * rows), squeeze=False)
    for extra in axes.flat[n:]:
        extra.set_visible(False)
    return fig, list(axes.flat)


def median_by(rows, key, value):
    groups = {}
    for r in rows:
        v = value(r)
        if v is not None:
            groups.setdefault(key(r), []).append(v)
    return {k: statistics.median(v) for k, v in groups.items()}


def pad_d_plot(rows, outdir, metric, name, ylabel, log_y, with_bound):
    sweep = [r for r in rows if r["sweep"] == "pad_d"]
    workloads = list(dict.fromkeys(r["workload"] for r in sweep))
    if not workloads:
        return
    values = median_by(sweep, lambda r: (r["workload"], float(r["pad"]), int(r["sketches"])), lambda r: float(r[metric]))
    bound = median_by(sweep, lambda r: (r["workload"], float(r["pad"])), lambda r: float(r["single_estimate_bound"]))
    fig, axes = grid_of(workloads)
    for ax, w in zip(axes, workloads):
        pads = sorted({k[1] for k in values if k[0] == w})
        for d in sorted({k[2] for k in values if k[0] == w}):
            ax.plot(pads, [values[(w, p, d)] for p in pads], marker="o", ms=3, label="d = %d" % d)
        if with_bound:
            ax.plot(pads, [bound[(w, p)] for p in pads], "k--", lw=1, label="sqrt(mp/b)")
        ax.set_xscale("log", base=2)
        if log_y:
            ax.set_yscale("log")
        else:
            ax.set_ylim(-0.05, 1.05)
        ax.set_title(w, fontsize=10)
        ax.set_xlabel("pad (b = pad * max(m, p), to a power of two)", fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle("%s (fp32, folklore; median over seeds)" % ylabel, fontsize=10)
    fig.tight_layout()
    save(fig, outdir, name)


def precision_plot(rows, outdir):
    sweep = [r for r in rows if r["sweep"] == "precision" and r["deviation_from_fp64"] != ""]
    workloads = list(dict.fromkeys(r["workload"] for r in sweep))
    if not workloads:
        return

    def column(r):
        return "alman-rao" if r["algorithm"] == "alman-rao" else r["stabilization"]

    values = median_by(sweep, lambda r: (r["workload"], r["precision"], column(r)), lambda r: float(r["deviation_from_fp64"]))
    precisions = list(dict.fromkeys(r["precision"] for r in sweep))
    columns = ["none", "kahan", "neumaier", "alman-rao"]
    # An exact zero (the fp64 reference itself; workloads whose sketch never transforms) has no
    # place on a log axis: it is marked "0" at the floor instead of drawn as a bar.
    floor = 1e-18
    fig, axes = grid_of(workloads)
    width = 0.8 / len(columns)
    for ax, w in zip(axes, workloads):
        for c_index, c in enumerate(columns):
            xs = [i + (c_index - (len(columns) - 1) / 2) * width for i in range(len(precisions))]
            ys = [values.get((w, p, c), float("nan")) for p in precisions]
            ax.bar(xs, [y if y > 0 else float("nan") for y in ys], width, bottom=floor, label=c,
                   color="C%d" % c_index)
            for x, y in zip(xs, ys):
                if y == 0:
                    ax.text(x, floor * 3, "0", ha="center", va="bottom", fontsize=6, color="C%d" % c_index)
        ax.set_xticks(range(len(precisions)))
        ax.set_xticklabels(precisions, fontsize=8)
        ax.set_yscale("log")
        ax.set_ylim(floor, 1)
        ax.set_title(w, fontsize=10)
        ax.set_ylabel("||C^ - C^_fp64||_F / ||C^_fp64||_F", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.grid(True, axis="y", which="major", alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle("Arithmetic error against the fp64 sketch (pad 8, d 3; median over seeds; 0 = identical)",
                 fontsize=10)
    fig.tight_layout()
    save(fig, outdir, "precision.png")


def main():
    if len(sys.argv) != 3:
        print("usage: study_plot.py RESULTS.csv OUTDIR")
        sys.exit(2)
    rows = read_rows(sys.argv[1])
    outdir = sys.argv[2]
    pad_d_plot(rows, outdir, "relative_frobenius_error", "error_vs_pad.png", "relative Frobenius error", True, True)
    pad_d_plot(rows, outdir, "top_k_recall", "recall_vs_pad.png", "top-k recall", False, False)
    precision_plot(rows, outdir)


if __name__ == "__main__":
    main()
