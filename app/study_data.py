"""Workloads of pagh-mm study --preset real: study_data.py OUTDIR [NAME ...].

Embedded in pagh-mm (written to a temporary file and run with python3, like study_plot.py). Builds
the operands A and B of each named workload (all when none is named) from data that Debian
packages ship, nothing of which is kept in the repository:
  scikit-learn's bundled sets (python3-sklearn): digits, breast cancer;
  R Matrix's example matrices (r-cran-matrix): SuiteSparse lund_a, pores_1 as .mtx; KNex and the
  US-county and 1-degree world-grid neighbour graphs as .rda, read with Rscript (base R only).
Writes OUTDIR/NAME.a.mtx and OUTDIR/NAME.b.mtx (each atomically: a temporary name renamed into
place) and OUTDIR/manifest.tsv, one line per workload: name, "ok" or "skipped", the two files (or
the reason it was skipped), and what the workload is.
Exit status 2 for an unknown name; 3 when numpy or scipy is missing (then no workload can be built).
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
    MISSING = None
except ImportError:
    MISSING = ("python3-numpy and python3-scipy are needed to build the real-data workloads "
               "(Debian: apt-get install python3-scipy)")

R_MATRIX_DIRS = ["/usr/lib/R/library/Matrix/external", "/usr/lib/R/site-library/Matrix/external",
                 "/usr/local/lib/R/site-library/Matrix/external"]


class Skip(Exception):
    """A workload whose data or reader is not installed here."""


def sklearn_data(loader):
    try:
        import sklearn.datasets
    except ImportError:
        raise Skip("scikit-learn is not installed (Debian: python3-sklearn)")
    return np.asarray(getattr(sklearn.datasets, loader)().data, dtype=np.float64)


def r_matrix_file(name):
    for d in R_MATRIX_DIRS:
        path = os.path.join(d, name)
        if os.path.exists(path):
            return path
    raise Skip("%s of R's Matrix package is not installed (Debian: r-cran-matrix)" % name)


def suitesparse(name):
    return sp.csc_matrix(scipy.io.mmread(r_matrix_file(name)))


def rda_slots(name):
    """The sparse matrix an R Matrix *_slots.rda holds (a list of Dim, i, p, x: column-compressed)."""
    path = r_matrix_file(name)
    script = ("e <- new.env(); load(commandArgs(TRUE)[1], envir = e); L <- get(ls(e)[1], e); "
              "cat(L$Dim, '\\n'); cat(L$p, '\\n'); cat(L$i, '\\n'); cat(sprintf('%.17g', L$x), '\\n')")
    try:
        out = subprocess.run(["Rscript", "-e", script, path], capture_output=True, text=True, timeout=120)
    except (FileNotFoundError, PermissionError):
        raise Skip("Rscript is not installed (Debian: r-base-core), needed to read %s" % name)
    if out.returncode != 0:
        raise Skip("Rscript could not read %s: %s" % (name, (out.stderr.strip().splitlines() or ["?"])[-1]))
    lines = out.stdout.splitlines()
    dims, indptr, indices, data = ([float(t) for t in line.split()] for line in lines[:4])
    return sp.csc_matrix((np.array(data), np.array(indices, dtype=np.int64), np.array(indptr, dtype=np.int64)),
                         shape=(int(dims[0]), int(dims[1])))


def adjacency(name):
    """0/1 neighbour graph, symmetric, no loops: the pattern of the stored (triangle of the) weights."""
    w = rda_slots(name)
    a = ((w + w.T) != 0).astype(np.float64)
    return sp.csc_matrix(sp.triu(a, 1) + sp.tril(a, -1))


def gram(x):
    return x.T, x


def cooccurrence(x):
    return x, x.T


def square(a):
    return a, a


# name: (what it is, builder returning (A, B))
WORKLOADS = {
    "digits-gram": ("scikit-learn digits (1797 images x 64 pixels, 0-16): X^T X, the pixels' Gram matrix",
                    lambda: gram(sklearn_data("load_digits"))),
    "digits-cooccurrence": ("scikit-learn digits: X X^T, the images' inner products",
                            lambda: cooccurrence(sklearn_data("load_digits"))),
    "breast-cancer-gram": ("scikit-learn breast cancer (569 samples x 30 raw features): X^T X",
                           lambda: gram(sklearn_data("load_breast_cancer"))),
    "breast-cancer-cooccurrence": ("scikit-learn breast cancer: X X^T, the samples' inner products",
                                   lambda: cooccurrence(sklearn_data("load_breast_cancer"))),
    "lund_a-square": ("SuiteSparse lund_a (147 x 147, symmetric, structural): A^2",
                      lambda: square(suitesparse("lund_a.mtx"))),
    "pores_1-square": ("SuiteSparse pores_1 (30 x 30, unsymmetric, oil reservoir): A^2",
                       lambda: square(suitesparse("pores_1.mtx"))),
    "pores_1-gram": ("SuiteSparse pores_1: A^T A", lambda: gram(suitesparse("pores_1.mtx"))),
    "knex-gram": ("R Matrix KNex (1850 x 712 least-squares design): A^T A", lambda: gram(rda_slots("KNex_slots.rda"))),
    "us-counties-neighbours": ("US counties' adjacency (3111 counties, 0/1): A^2, common neighbours",
                               lambda: square(adjacency("USCounties_slots.rda"))),
    "world-grid-neighbours": ("1-degree world land grid's adjacency (15260 cells, 0/1): A^2, common neighbours",
                              lambda: square(adjacency("wrld_1deg_slots.rda"))),
}


def write_atomically(directory, name, matrix):
    descriptor, temporary = tempfile.mkstemp(prefix="." + name, suffix=".mtx", dir=directory)
    os.close(descriptor)
    os.chmod(temporary, 0o644)
    try:
        if sp.issparse(matrix):
            matrix = sp.coo_matrix(matrix)
        scipy.io.mmwrite(temporary, matrix, precision=17)
        os.replace(temporary, os.path.join(directory, name))
    except BaseException:
        os.remove(temporary)
        raise


def main():
    if len(sys.argv) < 2:
        print("usage: study_data.py OUTDIR [NAME ...]")
        return 2
    outdir, names = sys.argv[1], sys.argv[2:] or list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        print("unknown workload '%s' (expected %s)" % (unknown[0], ", ".join(WORKLOADS)))
        return 2
    if MISSING:
        print(MISSING)
        return 3
    lines = []
    for name in names:
        description, build = WORKLOADS[name]
        try:
            a, b = build()
        except Skip as why:
            lines.append("\t".join([name, "skipped", str(why), "", description]))
            continue
        write_atomically(outdir, name + ".a.mtx", a)
        write_atomically(outdir, name + ".b.mtx", b)
        lines.append("\t".join([name, "ok", name + ".a.mtx", name + ".b.mtx", description]))
    with open(os.path.join(outdir, ".manifest.tmp"), "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(os.path.join(outdir, ".manifest.tmp"), os.path.join(outdir, "manifest.tsv"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
