#!/usr/bin/env bash
# The whole test suite: installs what is missing (scripts/setup.sh), configures the
# `release` preset (CUDA for sm_80 and sm_90 when nvcc is present, so CUDA code always
# compiles), builds, and runs ctest. GPU tests skip with a message where no GPU is.
# Ends with ctest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
preset=${FLASHTICK_PRESET:-release}
jobs=${FLASHTICK_JOBS:-$(nproc)}
cmake --preset "$preset" -DFLASHTICK_BUILD_TESTS=ON >/dev/null
cmake --build --preset "$preset" -j "$jobs"
ctest --preset "$preset" -j "$jobs" "$@"
