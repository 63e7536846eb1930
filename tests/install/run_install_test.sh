#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then configures, builds and runs a separate
# project (consumer/) that finds pagh with find_package and uses pagh::sketch (and
# pagh::sketch_cuda when the build has it).
set -euo pipefail
build_dir=$1
source_dir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/top_entries"
if [[ -x "$work/build/top_entries_cuda" ]]; then "$work/build/top_entries_cuda"; fi
