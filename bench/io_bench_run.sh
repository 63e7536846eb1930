#!/usr/bin/env bash
# The measurements of bench/RESULTS.md, "Reading inputs": generates the input files (not committed),
# times pagh's reader beside fast_matrix_market (bench/io_bench.cpp, same files, same run), then
# whole pagh-mm runs of the covariance screen on them, and the same runs on 2 x 2 inputs (what a
# run costs whatever its inputs: process start, backend start, teardown).
#   bench/io_bench_run.sh BUILD_DIR WORK_DIR [PYTHON] [REPEATS] [FILES]
# PYTHON should have fast_matrix_market (pip install fast_matrix_market); without it io_bench
# times scipy.io.mmread and says so. FILES: "all" (default) or "small" (no 1 GB file). The -v
# output of the last run of each backend and method is left in WORK_DIR/stderr_BACKEND_METHOD.txt.
set -euo pipefail
build=$1 work=$2 python=${3:-python3} repeats=${4:-3} files=${5:-all}
pagh_mm=$build/app/pagh-mm
io_bench=$build/matrix_io/io_bench
mkdir -p "$work"
# The covariance screen of issue 27: A = X^T (4000 x 5000) and B = X (5000 x 4000), dense, 393 MB each.
[ -f "$work/A.mtx" ] || "$pagh_mm" generate covariance --samples 5000 --features 4000 \
  --out-a "$work/A.mtx" --out-b "$work/B.mtx" -q
# Sparse 10^6 x 10^6 with 8 * 10^6 entries (267 MB), and a dense file of about 1 GB.
[ -f "$work/sparse.mtx" ] || "$io_bench" generate sparse "$work/sparse.mtx" 1000000 8000000
inputs=("$work/A.mtx" "$work/sparse.mtx")
if [ "$files" = all ]; then
  [ -f "$work/dense_1g.mtx" ] || "$io_bench" generate dense "$work/dense_1g.mtx" 10000 5000
  inputs+=("$work/dense_1g.mtx")
fi
"$io_bench" --repeats "$repeats" --python "$python" "${inputs[@]}"
echo
[ -f "$work/tiny_a.mtx" ] || printf '%%%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n' >"$work/tiny_a.mtx"
cp "$work/tiny_a.mtx" "$work/tiny_b.mtx"
TIMEFORMAT='%R'
# --method auto may answer with the exact product where its cost model finds that cheaper; --method
# sketch times the compressed product itself. --backend auto weighs the CPU against the GPU's start
# and exit (app/backend.hpp, weigh_backends); cpu and cuda time each backend as such (cuda fails
# with status 69 on a machine without a GPU: those runs then print the error).
for backend in auto cpu cuda; do
  for method in auto sketch; do
    for run in 1 2 3; do
      wall=$( { time "$pagh_mm" -v --backend "$backend" --method "$method" "$work/A.mtx" "$work/B.mtx" >"$work/report.txt" 2>"$work/stderr_${backend}_$method.txt" || true; } 2>&1 )
      echo "pagh-mm -v --backend $backend --method $method A.mtx B.mtx, run $run: $wall s wall; $(grep '^time' "$work/report.txt" || tail -1 "$work/stderr_${backend}_$method.txt")"
    done
    grep -E "backend|method|sketch|selection" "$work/stderr_${backend}_$method.txt" || true
    for run in 1 2; do
      wall=$( { time "$pagh_mm" --backend "$backend" --method "$method" "$work/tiny_a.mtx" "$work/tiny_b.mtx" >"$work/report.txt" 2>&1 || true; } 2>&1 )
      echo "pagh-mm --backend $backend --method $method on 2 x 2 inputs, run $run: $wall s wall; $(grep "^time" "$work/report.txt" || tail -1 "$work/report.txt")"
    done
  done
done
for run in 1 2 3; do
  wall=$( { time "$pagh_mm" --help >/dev/null; } 2>&1 )
  echo "pagh-mm --help, run $run: $wall s wall"
done
