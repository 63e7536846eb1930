#!/usr/bin/env bash
# The measurements of bench/RESULTS.md, "Reading inputs": generates the input files (not committed),
# times pagh's reader beside fast_matrix_market (bench/io_bench.cpp, same files, same run), then
# whole pagh-mm runs of the covariance screen on them.
#   bench/io_bench_run.sh BUILD_DIR WORK_DIR [PYTHON] [REPEATS]
# PYTHON should have fast_matrix_market (pip install fast_matrix_market); without it io_bench
# times scipy.io.mmread and says so.
set -euo pipefail
build=$1 work=$2 python=${3:-python3} repeats=${4:-3}
pagh_mm=$build/app/pagh-mm
io_bench=$build/matrix_io/io_bench
mkdir -p "$work"
# The covariance screen of issue 27: A = X^T (4000 x 5000) and B = X (5000 x 4000), dense, 393 MB each.
[ -f "$work/A.mtx" ] || "$pagh_mm" generate covariance --samples 5000 --features 4000 \
  --out-a "$work/A.mtx" --out-b "$work/B.mtx" -q
# Sparse 10^6 x 10^6 with 8 * 10^6 entries (267 MB), and a dense file of about 1 GB.
[ -f "$work/sparse.mtx" ] || "$io_bench" generate sparse "$work/sparse.mtx" 1000000 8000000
[ -f "$work/dense_1g.mtx" ] || "$io_bench" generate dense "$work/dense_1g.mtx" 10000 5000
"$io_bench" --repeats "$repeats" --python "$python" "$work/A.mtx" "$work/sparse.mtx" "$work/dense_1g.mtx"
echo
TIMEFORMAT='%R'
# --method auto may answer with the exact product where its cost model finds that cheaper; --method
# sketch times the compressed product itself.
for method in auto sketch; do
  for run in 1 2; do
    wall=$( { time "$pagh_mm" -v --method "$method" "$work/A.mtx" "$work/B.mtx" >"$work/report.txt" 2>"$work/stderr.txt"; } 2>&1 )
    echo "pagh-mm -v --method $method A.mtx B.mtx, run $run: $wall s wall; $(grep '^time' "$work/report.txt")"
  done
  grep -E "backend|method|sketch" "$work/stderr.txt" || true
done
