#!/usr/bin/env bash
# Builds the sketch-loader fuzz target with clang++-14 (libFuzzer + ASan + UBSan) and runs it.
#   run_fuzz_sketch.sh REPO_ROOT WORK_DIR SECONDS CURAND_LIBRARY
# The loader and everything it calls (header validation, bounded reads, the hash tables, the
# product's queries) are compiled here with the sanitizers; the fwht library is not needed by the
# loader. OpenMP pragmas are left out (serial), its runtime calls resolve against libgomp.
# Exit status: 0 no finding, 77 skipped (no clang++-14 / libFuzzer runtime), otherwise a finding or
# a build failure. New inputs go to WORK_DIR/corpus; crashes to WORK_DIR/crash-*.
set -euo pipefail
root=$1 work=$2 seconds=$3 curand=$4

if ! command -v clang++-14 >/dev/null 2>&1; then
  echo "SKIP: clang++-14 not found (Debian: apt-get install clang-14 libclang-rt-14-dev)"
  exit 77
fi
mkdir -p "$work/corpus" "$work/seeds"
probe="$work/probe.cpp"
printf '#include <cstdint>\n#include <cstddef>\nextern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n' >"$probe"
if ! clang++-14 -fsanitize=fuzzer "$probe" -o "$work/probe" >/dev/null 2>&1; then
  echo "SKIP: clang++-14 cannot link libFuzzer (Debian: apt-get install libclang-rt-14-dev)"
  exit 77
fi

# Seeds: valid files (the layout of sketch/src/sketch_file/sketch_file.cpp, FNV-1a checksum included), so that
# mutations start from headers the loader accepts. Python 3 is already a test dependency.
python3 - "$work/seeds" <<'PY'
import struct, sys
def fnv(data):
    h = 1469598103934665603
    for b in data: h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h
def write(name, rows, cols, inner, buckets, d, precision, stabilization, algorithm, compute, hybrid, pad, seed):
    head = b"PAGHSKCH" + struct.pack("<II", 1, 0x01020304) + struct.pack("<qqqq", rows, cols, inner, buckets)
    head += struct.pack("<iiiiii", d, precision, stabilization, algorithm, compute, hybrid) + struct.pack("<dQ", pad, seed)
    body = head + b"".join(struct.pack("<d", (i % 13 - 6) * 0.5) for i in range(d * buckets))
    open(sys.argv[1] + "/" + name, "wb").write(body + struct.pack("<Q", fnv(body)))
write("f32_d3", 5, 7, 3, 16, 3, 1, 0, 0, 1, 0, 8.0, 1)
write("f64_d1_b1", 1, 1, 1, 1, 1, 0, 2, 0, 1, 2, 1.0, 7)
write("bf16_alman_rao", 9, 4, 2, 8, 2, 3, 0, 1, 0, 1, 0.5, 123456789)
write("empty_product", 0, 3, 0, 2, 1, 1, 4, 0, 1, 0, 8.0, 0)
# The crafted headers of tests/sketch/crafted_sketch.hpp, every field alone at the issue's hostile
# values (checksum recomputed), so that the sanitizers see each of them from the first run on.
base = dict(rows=5, cols=7, inner=3, buckets=16, d=3, precision=1, stabilization=0, algorithm=0, compute=1, hybrid=0,
            pad=8.0, seed=1)
i32 = lambda v: (v + 2**31) % 2**32 - 2**31
u64 = lambda v: v % 2**64
def write_fields(name, f):
    d, b = f["d"], f["buckets"]
    values = d * b if 1 <= d <= 1024 and 1 <= b <= 2**32 and d * b <= 4096 else 48
    head = b"PAGHSKCH" + struct.pack("<II", 1, 0x01020304)
    head += struct.pack("<qqqq", f["rows"], f["cols"], f["inner"], f["buckets"])
    head += struct.pack("<iiiiii", *(i32(f[k]) for k in ("d", "precision", "stabilization", "algorithm", "compute", "hybrid")))
    head += struct.pack("<dQ", f["pad"], u64(f["seed"]))
    body = head + b"".join(struct.pack("<d", (i % 13 - 6) * 0.5) for i in range(values))
    open(sys.argv[1] + "/" + name, "wb").write(body + struct.pack("<Q", fnv(body)))
for field in base:
    tried = [float("nan"), float("inf"), 0.0, -1.0] if field == "pad" else [0, -1, 2**31, 2**62, 2**63 - 1]
    for n, v in enumerate(tried):
        f = dict(base)
        f[field] = v
        write_fields("crafted_%s_%d" % (field, n), f)
PY

# The CPU library's sources that load() reaches (compression, verification, exact answers and the
# method choice are not), and none of the CUDA sources that sit beside them.
sources=()
for f in hashing/hashing.cpp estimate/compressed_product.cpp estimate/float_medians.cpp estimate/heavy_buckets.cpp estimate/recovery_plan.cpp \
         estimate/noise_model.cpp estimate/significance.cpp \
         sketch_file/sketch_file.cpp sketch_file/sketch_file_header.cpp sketch_file/bounded_file.cpp; do
  sources+=("$root/sketch/src/$f")
done
cuda_include=$(dirname "$(dirname "$curand")")/include
clang++-14 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Wno-unknown-pragmas \
  -I"$root/sketch/include" -I"$root/sketch/src" -I"$root/fwht/include" -I"$root/core/include" -I/usr/include/eigen3 -I"$cuda_include" \
  "$root/tests/sketch/fuzz_sketch_file.cpp" "${sources[@]}" "$root/fwht/src/options.cpp" \
  "$curand" -Wl,-rpath,"$(dirname "$curand")" -lgomp -o "$work/fuzz_sketch_file"

cd "$work"
# The first corpus directory receives new inputs; the seeds are only read.
exec ./fuzz_sketch_file -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
  corpus seeds
