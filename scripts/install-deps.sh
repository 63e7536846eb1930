#!/usr/bin/env bash
# Installs the Debian 12 packages pagh needs (README.md, "Set up"). Works as root (CI, containers)
# and as a user with sudo: sudo is used only when not root.
#
#   scripts/install-deps.sh [--tests] [--plots]
#
#   (always)  build-essential cmake ninja-build libeigen3-dev libboost-program-options-dev
#             libgtest-dev nlohmann-json3-dev zlib1g-dev: the build (zlib: gzip-compressed
#             Matrix Market input), pagh-mm and the test suite
#   --tests   clang-14 libclang-rt-14-dev: the libFuzzer test of the Matrix Market reader;
#             python3-scipy: the reader's conformance test against scipy.io.mmread (and python3
#             for the test that parses pagh-mm's CSV); without them those tests skip;
#             libopenmpi-dev openmpi-bin: the distributed product (mpirun -np N pagh-mm) and its
#             tests, built only when MPI is found
#   --plots   python3-matplotlib (~60 packages): the plots of pagh-mm study and
#             bench/plot_accuracy.py; without it the study writes CSV and markdown only
#
# The CUDA toolkit is not a Debian package here: install it at /usr/local/cuda (README.md).
set -euo pipefail

packages=(build-essential cmake ninja-build libeigen3-dev libboost-program-options-dev libgtest-dev nlohmann-json3-dev
  zlib1g-dev)
for option in "$@"; do
  case "$option" in
    --tests) packages+=(clang-14 libclang-rt-14-dev python3 python3-scipy libopenmpi-dev openmpi-bin) ;;
    --plots) packages+=(python3-matplotlib) ;;
    -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$option' (expected --tests, --plots)" >&2; exit 64 ;;
  esac
done

as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "install-deps.sh: needs root or sudo to run apt-get" >&2
    exit 1
  fi
}

export DEBIAN_FRONTEND=noninteractive
as_root apt-get update
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "${packages[@]}"
