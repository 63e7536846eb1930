#!/usr/bin/env bash
# Builds the Matrix Market fuzz target with clang++-14 (libFuzzer + ASan + UBSan) and runs it.
#   run_fuzz.sh REPO_ROOT WORK_DIR SECONDS
# Exit status: 0 no finding, 77 skipped (no clang++-14 / libFuzzer runtime), otherwise a finding or a
# build failure. New inputs go to WORK_DIR/corpus; crashes to WORK_DIR/crash-*.
set -euo pipefail
root=$1 work=$2 seconds=$3

if ! command -v clang++-14 >/dev/null 2>&1; then
  echo "SKIP: clang++-14 not found (Debian: apt-get install clang-14 libclang-rt-14-dev)"
  exit 77
fi
mkdir -p "$work/corpus"
probe="$work/probe.cpp"
printf '#include <cstdint>\n#include <cstddef>\nextern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n' >"$probe"
if ! clang++-14 -fsanitize=fuzzer "$probe" -o "$work/probe" >/dev/null 2>&1; then
  echo "SKIP: clang++-14 cannot link libFuzzer (Debian: apt-get install libclang-rt-14-dev)"
  exit 77
fi

eigen_include=/usr/include/eigen3
sources=("$root"/matrix_io/src/*.cpp)
clang++-14 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -DPAGH_VERSION='"fuzz"' -I"$root/matrix_io/include" -I"$root/matrix_io/src" -I"$root/fwht/include" -I"$root/core/include" \
  -I"$eigen_include" "$root/tests/matrix_io/fuzz_matrix_market.cpp" "${sources[@]}" -lz -o "$work/fuzz_matrix_market"

cd "$work"
# The first corpus directory receives new inputs; the committed seeds are only read.
exec ./fuzz_matrix_market -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -dict="$root/tests/matrix_io/matrix_market.dict" corpus "$root/tests/matrix_io/corpus"
