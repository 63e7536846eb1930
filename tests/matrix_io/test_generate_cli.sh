#!/usr/bin/env bash
# mtx-generate: every workload writes readable files (checked with mtx-dump); usage errors exit 2.
#   test_generate_cli.sh MTX_GENERATE MTX_DUMP
set -euo pipefail
generate=$1 dump=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$generate" --help | grep -q "usage: mtx-generate WORKLOAD" || fail "--help"
for args in "planted-dense --m 5 --k 7 --p 6 --planted 2 --integer" \
            "sparse --m 9 --k 8 --p 7 --a-per-row 2 --b-per-col 3" \
            "low-rank-sparse --m 6 --k 5 --p 4 --rank 2" \
            "covariance --samples 10 --features 6 --pairs 2"; do
  # shellcheck disable=SC2086
  "$generate" $args --seed 3 --out-a "$work/A.mtx" --out-b "$work/B.mtx" >"$work/out.txt" || fail "$args"
  grep -q "wrote $work/A.mtx and $work/B.mtx" "$work/out.txt" || fail "$args: summary"
  "$dump" "$work/A.mtx" >/dev/null || fail "$args: A.mtx unreadable"
  "$dump" "$work/B.mtx" >/dev/null || fail "$args: B.mtx unreadable"
  grep -q "^% command: mtx-generate ${args%% *}" "$work/A.mtx" || fail "$args: command comment"
done
"$dump" "$work/A.mtx" | head -1 | grep -q "header array real general 6 10" || fail "covariance A is X^T"
"$generate" planted-dense --m 5 --k 7 --p 6 --planted 2 --seed 9 --out-a "$work/A2.mtx" --out-b "$work/B2.mtx" >/dev/null
"$generate" planted-dense --m 5 --k 7 --p 6 --planted 2 --seed 9 --out-a "$work/A3.mtx" --out-b "$work/B3.mtx" >/dev/null
cmp -s <(tail -n +4 "$work/A2.mtx") <(tail -n +4 "$work/A3.mtx") || fail "same seed, different matrices"

expect_usage_error() {
  local status=0
  "$generate" "$@" >/dev/null 2>"$work/err.txt" || status=$?
  [ "$status" = 2 ] || fail "expected exit 2 for: $*"
  grep -q "mtx-generate: " "$work/err.txt" || fail "no message for: $*"
}
expect_usage_error
expect_usage_error dense-gaussian
expect_usage_error planted-dense --rank 3
expect_usage_error planted-dense --m
expect_usage_error planted-dense --m ten
expect_usage_error covariance --integer
# Parameters the generator refuses: exit 1 with the reason.
status=0
"$generate" planted-dense --k 3 --planted 4 --out-a "$work/x.mtx" --out-b "$work/y.mtx" 2>"$work/err.txt" || status=$?
[ "$status" = 1 ] && grep -q "planted must lie in 0..k" "$work/err.txt" || fail "invalid parameters"
[ ! -e "$work/x.mtx" ] || fail "file written despite the error"
echo "mtx-generate: all checks passed"
