#!/usr/bin/env bash
# One device call's worth of GPU checking (run on the GPU machine from the repo root):
# unpack carried deps, build kernels/model/trainer/research/tests/bench without gRPC (gpu-kernels
# preset, sm_90), run every ctest labelled gpu, and leave logs under $OUT.
# Usage: OUT=dir scripts/gpu_check.sh [ctest -R regex]
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
out=${OUT:?}
cmake --preset gpu-kernels -DFLASHTICK_BUILD_TESTS=ON -DFLASHTICK_BUILD_BENCH=ON \
  > "$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
ninja -C build/gpu-kernels -k 0 -j16 > "$out/build.log" 2>&1
echo "build exit $? ($(grep -c 'error' "$out/build.log") error lines)"
grep -E "error|FAILED:" "$out/build.log" | head -20
regex=${1:-.}
ctest --test-dir build/gpu-kernels -L gpu -R "$regex" --output-on-failure -j 4 --timeout 300 \
  > "$out/ctest_gpu.log" 2>&1
echo "ctest exit $?"
grep -E "tests passed|Failed|\*\*\*|Not Run|Passed|SKIP" "$out/ctest_gpu.log" | tail -40
