#!/usr/bin/env bash
# Mutation check of the CPU test suite: plants one single-line bug (a sed patch) at a time in a
# scratch copy of the committed tree, builds the tests that should notice it, runs them, and prints
# whether the bug was killed (some test failed) or survived. Not run by CI (each mutant rebuilds a
# library and a test binary: about a minute each on 2 cores).
#
#   scripts/mutants.sh                 every mutant
#   scripts/mutants.sh F1 S3 M1        only these
#   scripts/mutants.sh --check         only verify that every patch applies to exactly one line
#   scripts/mutants.sh --list          print the list
#
# The scratch copy is a detached git worktree of HEAD under $PAGH_MUTANTS_DIR (default: a new
# directory in /tmp), built with -DPAGH_WITH_CUDA=OFF; the working tree is never touched, and the
# worktree is removed at the end. Exit status: 0 when every mutant run was killed or is listed as
# an expected survivor, 1 otherwise.
set -euo pipefail

top=$(git rev-parse --show-toplevel)
cd "$top"

# m ID OWNER FILE SED-SCRIPT TARGETS CTEST-REGEX [EXPECTED-SURVIVOR-REASON]
# OWNER names the test module expected to kill the mutant.
ids=() owners=() files=() scripts=() targets=() regexes=() survivors=()
m() {
  ids+=("$1") owners+=("$2") files+=("$3") scripts+=("$4") targets+=("$5") regexes+=("$6") survivors+=("${7:-}")
}

# --- fwht: the 16-bit arithmetic, carries, conversions, reference formulas, CPU schedule ---------
fr=fwht_reference_test fc=fwht_cpu_test
m F1 fwht/sixteen_bit fwht/src/common/arithmetic.hpp 's#kCarryShift = 23 - FormatBits<F>::kMantissa - 8;#kCarryShift = 23 - FormatBits<F>::kMantissa - 7;#' $fr '^SixteenBitDefinition\.'
m F2 fwht/sixteen_bit fwht/src/common/arithmetic.hpp 's#scale_in<Rounded<f16>>(double f) { return Rounded<f16>::of(static_cast<float>(f)); }#scale_in<Rounded<f16>>(double f) { return Rounded<f16>{static_cast<float>(f)}; }#' $fr '^SixteenBitDefinition\.'
m F3 fwht/reference fwht/src/common/arithmetic.hpp 's#kCarryShift = 52 - 23 - 8;#kCarryShift = 52 - 23 - 7;#' $fr '^Reference\.WideCarry'
m F4 fwht/sixteen_bit fwht/src/common/arithmetic.hpp 's#std::clamp<Signed>((d + (Signed{1} << (kShift - 1))) >> kShift#std::clamp<Signed>(d >> kShift#' $fr '^(SixteenBitDefinition|Reference)\.'
m F5 fwht/reference fwht/src/common/arithmetic.hpp 's#return 1.0 / std::sqrt(static_cast<double>(n));#return 1.0 / std::sqrt(static_cast<double>(2 * n));#' $fr '^Reference\.'
m F6 fwht/reference fwht/include/fwht/half.hpp 's#rebased + 0x0fffu + ((rebased >> 13) & 1u);#rebased + 0x1000u;#' $fr '^Half\.'
m F7 fwht/reference fwht/include/fwht/half.hpp 's#(x + 0x7fffu + ((x >> 16) & 1u)) >> 16#(x + 0x8000u) >> 16#' $fr '^Half\.'
m F8 fwht/cpu fwht/src/reference/reference.cpp 's#  eA = ((a2 - a) - b) + (ea + eb);#  eA = ((a2 - a) - b) - (ea + eb);#' $fc '^CpuKernels\.Kahan'
m F9 fwht/reference fwht/src/reference/reference.cpp 's#w\[j + h\] = a - b;#w[j + h] = b - a;#' $fr '^Reference\.Wide'
m F10 fwht/schedule fwht/src/cpu/cpu_plan.cpp 's#(seen < 0 || position < seen)#(seen < 0 || position > seen)#' $fc '^CpuSchedule\.'
m F11 fwht/schedule fwht/src/cpu/cpu_plan.cpp 's#max_tile_stages_ = alman_rao_ ? 6 : kMaxTileStages;#max_tile_stages_ = alman_rao_ ? 7 : kMaxTileStages;#' $fc '^CpuSchedule\.'
m F12 fwht/cpu fwht/src/cpu/cpu_plan.cpp 's#constexpr index kRowBytes = 256; #constexpr index kRowBytes = 128; #' $fc '^Cpu' \
  'equivalent: a tile row of 128 bytes changes the blocking, not the operations (the bits stay the same by design)'
m F13 fwht/errors fwht/src/common/arithmetic.hpp 's#case Normalization::inverse: return 1.0 / static_cast<double>(n);#case Normalization::inverse: return 1.0 / static_cast<double>(n + 1);#' $fr '^(Reference|SixteenBitDefinition)\.'

# --- sketch: error bars, median, estimator, verify(), hashing, thread independence ---------------
st=sketch_test
m S1 sketch/error_bars sketch/src/estimate/compressed_product.cpp 's#frobenius_ = static_cast<double>(std::sqrt(sum / tables_.repetitions));#frobenius_ = static_cast<double>(std::sqrt(sum));#' $st '^ErrorBars\.'
m S2 sketch/error_bars sketch/src/estimate/entry_ranking.hpp 's#Entry e{i, j, 0.0, 0.5 \* (\*hi - \*lo)};#Entry e{i, j, 0.0, (*hi - *lo)};#' $st '^ErrorBars\.'
m S3 sketch/error_bars sketch/src/estimate/compressed_product.cpp 's#return frobenius_ / std::sqrt(static_cast<double>(buckets()));#return frobenius_ / static_cast<double>(buckets());#' $st '^ErrorBars\.'
m S4 sketch/error_bars sketch/src/estimate/compressed_product.cpp 's#return n % 2 ? v\[n / 2\] : 0.5 \* (v\[n / 2 - 1\] + v\[n / 2\]);#return v[n / 2];#' $st '^(ErrorBars|Sketch)\.'
m S5 sketch/recovery sketch/src/estimate/entry_ranking.hpp 's#if (all.size() > k) all.resize(k);#if (false) all.resize(k);#' $st '^Recovery'
m S6 sketch/recovery sketch/include/sketch/entry.hpp 's#  if (x.row != y.row) return x.row < y.row;#  if (x.row != y.row) return x.row > y.row;#' $st '^Recovery'
m S7 sketch/recovery sketch/src/estimate/heavy_buckets.cpp 's#if (std::fabs(entry.value) >= tau) sink.take(entry);#if (std::fabs(entry.value) > tau) sink.take(entry);#' $st '^Recovery'
m S8 sketch/recovery sketch/src/estimate/compressed_product.cpp 's#if (std::fabs(e.value) >= threshold) {#if (std::fabs(e.value) > threshold) {#' $st '^Recovery'
m S9 sketch/verify sketch/src/exact/verify.cpp 's#? err / m.frobenius_exact :#? err / m.frobenius_estimate :#' $st '^VerifyMetrics\.'
m S10 sketch/verify sketch/src/exact/verify.cpp '0,/sigma = m.frobenius_exact/s#const double sigma = m.frobenius_exact / #const double sigma = m.frobenius_estimate / #' $st '^VerifyMetrics\.'  # the dense verify()
m S11 sketch/verify sketch/src/exact/verify.cpp 's#(estimate - exact).cwiseAbs().maxCoeff()#(estimate - exact).maxCoeff()#' $st '^VerifyMetrics\.'
m S12 sketch/verify sketch/src/exact/verify.cpp 's#hits += std::fabs(truth) >= kth \* (1 - 1e-9);#hits += std::fabs(truth) > kth * (1 + 1e-9);#' $st '^(VerifyMetrics|ExactAnswers)\.'
m S13 sketch/verify sketch/src/exact/verify.cpp 's#covered += truth >= a.interval.low \&\& truth <= a.interval.high;#covered += truth >= a.interval.low;#' $st '^(VerifyMetrics|ExactAnswers)\.'
m S14 sketch/sketch sketch/src/compress/line_scatter.hpp 's#words\[static_cast<std::size_t>(i)\] = bucket\[i\] | (sign\[i\] < 0 ? std::uint32_t{1} << 31 : 0u);#words[static_cast<std::size_t>(i)] = bucket[i];#' $st '^(Sketch|EngineReference)'
m S15 sketch/sketch sketch/src/compress/cpu_engine.hpp 's#{.normalization = fwht::Normalization::inverse, .stabilization = params_.stabilization,#{.normalization = fwht::Normalization::orthonormal, .stabilization = params_.stabilization,#' $st '^Sketch'
m S16 sketch/threads sketch/src/compress/cpu_engine.hpp 's#return std::min<index>(K, params.partitions > 0 ? params.partitions : kPartitions);#return std::min<index>(K, params.partitions > 0 ? params.partitions : params.threads > 0 ? 5 * params.threads : kPartitions);#' $st '^SketchThreads\.'
m S17 sketch/sketch sketch/src/hashing/hashing.cpp 's#return static_cast<std::int8_t>((u >> 31) ? -1 : 1);#return static_cast<std::int8_t>(((u >> 30) \& 1u) ? -1 : 1);#' $st '^Sketch\.HashTables'
m S18 sketch/recovery sketch/src/estimate/float_medians.hpp 's#static float bound(double v) { return static_cast<float>(v); }#static float bound(double v) { return static_cast<float>(v) * 1.0000001f; }#' $st '^Recovery\.'
m S19 sketch/recovery sketch/src/estimate/compressed_product.cpp 's#if (std::fabs(median_of(single)) < best.floor()) return;#if (std::fabs(median_of(single)) <= best.floor()) return;#' $st '^Recovery\.'
m S20 sketch/refine sketch/src/exact/refine.cpp 's#const double wanted = std::max(static_cast<double>(covered) + std::ceil(answer.expected_missed),#const double wanted = std::max(0.0,#' $st '^Refine\.' 'settling_candidates (the cutoff the bound needs) is at least the entries expected missed wherever the noise model holds; covered + expected missed guards a model that under-counts the estimates above that cutoff, which no test workload shows'
m S21 sketch/threads sketch/src/estimate/noise_model.cpp 's#const std::int64_t pieces = std::clamp<std::int64_t>(n >> 15, 1, 64);#const std::int64_t pieces = omp_get_max_threads();#' $st '^SketchThreads\.'
m S22 sketch/exact sketch/src/exact/exact_entries.cpp 's#for (int x = 0; x < 4; ++x) sum\[x\] += row\[x\]\[k\] \* column\[x\]\[k\];#for (int x = 0; x < 4; ++x) sum[x] += row[x][k] * column[(x + 1) % 4][k];#' $st '^(ExactEntries|Refine)\.'
m S23 sketch/refine sketch/src/exact/refine.cpp 's#if (e->value != 0) return std::fabs(e->value);#if (e->value != 0 \&\& e->row != e->col) return std::fabs(e->value);#' $st '^Refine\.'
m S24 sketch/refine sketch/src/exact/refine.cpp 's#std::ceil(settling_candidates(noise, energy, entries, done, v, o.missed_rate)));#0.0);#' $st '^Refine\.'
m S25 sketch/sketch sketch/src/compress/cpu_lines.hpp 's#        for (int r = 0; r < parts; ++r) {#        for (int r = parts - 1; r >= 0; --r) {#' $st '^SketchEngineReference\.'
m S26 sketch/recovery sketch/src/estimate/heavy_buckets.cpp 's#last = std::min(n, first + kBlock);#last = std::min(n, first + kBlock - 1);#' $st '^Recovery\.'

# --- matrix_io: number parsing, symmetry ---------------------------------------------------------
mt=matrix_io_tests
m M1 matrix_io/float_rounding matrix_io/src/number_tokens.hpp 's#^  Scalar value{};#  double value{};#' $mt '^matrix_io\.MatrixIoFloatRounding\.'
m M2 matrix_io/read matrix_io/src/number_tokens.hpp "s#if (q < end && \*q == '+' && q + 1 < end#if (false \&\& q < end \&\& *q == '+' \&\& q + 1 < end#" $mt '^matrix_io\.'
m M3 matrix_io/read matrix_io/src/number_tokens.hpp 's#if (overflow || magnitude > limit) return TokenStatus::out_of_range;#if (magnitude > limit) return TokenStatus::out_of_range;#' $mt '^matrix_io\.'
m M4 matrix_io/read matrix_io/src/entry_sinks.hpp 's#symmetry_ == Symmetry::skew_symmetric ? -value : value;#symmetry_ == Symmetry::skew_symmetric ? value : value;#' $mt '^matrix_io\.'
m M5 matrix_io/read matrix_io/src/sparse_assembly.hpp 's#const bool negate_mirror = header.symmetry == Symmetry::skew_symmetric;#const bool negate_mirror = false;#' $mt '^matrix_io\.'

# --- app: exit statuses -----------------------------------------------------------------------------
ap="pagh_mm_cli_test pagh-mm"
m A1 app/exit_status app/cli_error.cpp 's#return failure_of(ExitCode::software, command.empty() ? "out of memory#return failure_of(ExitCode::data, command.empty() ? "out of memory#' "$ap" '^app\.CliLimited\.'
m A2 app/errors app/main.cpp 's#    return pagh_mm::to_int(pagh_mm::ExitCode::io_error);#    return status;#' "$ap" '^app\.Cli\.WriteError'
m A3 app/exit_status app/output_files.cpp 's#? ExitCode::cannot_create : ExitCode::io_error;#? ExitCode::cannot_create : ExitCode::cannot_create;#' "$ap" '^app\.CliLimited\.'
m A4 app/errors app/exit_codes.hpp 's#  io_error = 74, #  io_error = 75, #' "$ap" '^app\.Cli(Limited)?\.'

# ---------------------------------------------------------------------------------------------------
count=${#ids[@]}
if [[ ${1:-} == --list ]]; then
  for ((i = 0; i < count; ++i)); do printf '%-4s %-26s %-40s %s\n' "${ids[i]}" "${owners[i]}" "${files[i]}" "${scripts[i]}"; done
  exit 0
fi
check_only=0
[[ ${1:-} == --check ]] && { check_only=1; shift; }
wanted=("$@")

scratch=${PAGH_MUTANTS_DIR:-$(mktemp -d /tmp/pagh-mutants.XXXXXX)}
src=$scratch/src build=$scratch/build
cleanup() { git -C "$top" worktree remove --force "$src" >/dev/null 2>&1 || true; }
trap cleanup EXIT
git -C "$top" worktree add --detach "$src" HEAD >/dev/null

# Applies mutant i to the scratch copy; fails (and restores) unless exactly one line changed.
apply() {
  local f=$src/${files[$1]}
  cp "$f" "$scratch/original"
  sed -i -e "${scripts[$1]}" "$f"
  local changed
  changed=$(diff "$scratch/original" "$f" | grep -c '^<' || true)
  if [[ $changed != 1 ]]; then
    cp "$scratch/original" "$f"
    echo "patch changes $changed lines (needs exactly 1)"
    return 1
  fi
}
restore() { cp "$scratch/original" "$src/${files[$1]}"; }

selected() {
  [[ ${#wanted[@]} == 0 ]] && return 0
  local w
  for w in "${wanted[@]}"; do [[ $w == "$1" ]] && return 0; done
  return 1
}

if ((check_only)); then
  bad=0
  for ((i = 0; i < count; ++i)); do
    selected "${ids[i]}" || continue
    if msg=$(apply "$i"); then restore "$i"; echo "${ids[i]} applies"; else echo "${ids[i]} DOES NOT APPLY: $msg"; bad=1; fi
  done
  exit $bad
fi

cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPAGH_WITH_CUDA=OFF -DPAGH_BUILD_BENCH=OFF >"$scratch/configure.log"
# The unmutated tree must pass the tests that will judge the mutants.
echo "baseline build (log: $scratch/baseline.log)"
all_targets=$(for ((i = 0; i < count; ++i)); do selected "${ids[i]}" && echo "${targets[i]}" || true; done | tr ' ' '\n' | sort -u | tr '\n' ' ')
cmake --build "$build" --target $all_targets -j2 >"$scratch/baseline.log" 2>&1
# ... and pass the selected mutants' tests (else a "kill" would mean nothing).
union=$(for ((i = 0; i < count; ++i)); do selected "${ids[i]}" && printf '%s|' "(${regexes[i]})" || true; done)
if ! ctest --test-dir "$build" -R "${union%|}" -j2 --timeout 600 >>"$scratch/baseline.log" 2>&1; then
  echo "the unmutated tree fails its tests: see $scratch/baseline.log"
  exit 1
fi

printf '%-4s %-26s %-10s %s\n' id owner result detail
status=0
for ((i = 0; i < count; ++i)); do
  selected "${ids[i]}" || continue
  log=$scratch/${ids[i]}.log
  if ! msg=$(apply "$i"); then
    printf '%-4s %-26s %-10s %s\n' "${ids[i]}" "${owners[i]}" BAD "$msg"
    status=1
    continue
  fi
  if ! cmake --build "$build" --target ${targets[i]} -j2 >"$log" 2>&1; then
    result=BUILD-FAIL detail="does not compile (not a useful mutant): $log"
    status=1
  elif ctest --test-dir "$build" -R "${regexes[i]}" -j2 --timeout 600 >>"$log" 2>&1; then
    if [[ -n ${survivors[i]} ]]; then result=survived detail="expected: ${survivors[i]}"
    else result=SURVIVED detail="no test failed (${regexes[i]}): $log"; status=1; fi
  else
    result=killed detail=$(grep -m1 -oE '[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$log" || echo "$log")
  fi
  restore "$i"
  printf '%-4s %-26s %-10s %s\n' "${ids[i]}" "${owners[i]}" "$result" "$detail"
done
# Rebuild nothing: the worktree and its build are removed with the scratch copy unless kept.
[[ -n ${PAGH_MUTANTS_DIR:-} ]] || rm -rf "$scratch"
exit $status
