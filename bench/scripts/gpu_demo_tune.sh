#!/usr/bin/env bash
# Device call: builds flashtick_sweep (no gRPC) and runs bench/sweep/tune/demo_grid.py
# on the host's CPU cores. Usage: OUT=dir bench/scripts/gpu_demo_tune.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
[ -f scripts/device_env.sh ] && source scripts/device_env.sh
out=${OUT:?set OUT}
build=build/gpu-kernels
cmake --preset gpu-kernels -B $build -DFLASHTICK_BUILD_TESTS=OFF -DFLASHTICK_BUILD_BENCH=ON \
  > $out/cmake.log 2>&1 || { tail -30 $out/cmake.log; exit 1; }
ninja -C $build -j16 flashtick_sweep > $out/build.log 2>&1 ||
  { grep -E "error|FAILED" $out/build.log | head -30; exit 1; }
python3 bench/sweep/tune/demo_grid.py --sweep $build/bench/sweep/flashtick_sweep \
  --out /tmp/demo_grid --jobs ${JOBS:-16} --timeout ${GRID_TIMEOUT:-420} | tee $out/grid.txt
tar czf $out/grid_logs.tgz -C /tmp demo_grid
