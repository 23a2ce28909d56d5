#!/usr/bin/env bash
# Issue 5 on the GPU machine: the full-scale N-sweep of RESEARCH.md on planted-signal
# days (N = 512, 4,096, 32,768; lags 300 / 3,000 / 15,000; 23,400-step days) and its
# null twin, with the standalone sweep runner (bench/sweep/flashtick_sweep: the same
# engine flashtickd runs, without gRPC). Reports (JSON, Markdown, plots when the
# machine's python3 has matplotlib) land in $OUT/<preset>/; commit them under
# docs/sweeps/<preset>-h200/. Resumable: a second call with the same $SWEEP_DIR
# continues from the arms' checkpoints, so a 10-minute device call can run one
# preset (or part of one) at a time.
# Usage (repository root):
#   OUT=/some/dir bench/scripts/gpu_sweep.sh [planted] [planted_null]   (default: both)
# Env: SWEEP_BUILD (build dir, default build/gpu-kernels), SWEEP_DIR (work dirs, default
#      build/gpu-sweeps), SWEEP_TIMEOUT (seconds per preset, default 540).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
[ -f scripts/device_env.sh ] && source scripts/device_env.sh
out=${OUT:?set OUT to the results folder}
build=${SWEEP_BUILD:-$root/build/gpu-kernels}
work=${SWEEP_DIR:-$root/build/gpu-sweeps}
limit=${SWEEP_TIMEOUT:-540}
presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(planted planted_null)
summary=$out/sweep_summary.txt

if [ ! -x "$build/bench/sweep/flashtick_sweep" ]; then
  cmake --preset gpu-kernels -B "$build" -DFLASHTICK_BUILD_TESTS=OFF -DFLASHTICK_BUILD_BENCH=ON \
    > "$out/sweep_cmake.log" 2>&1 || { tail -30 "$out/sweep_cmake.log"; exit 1; }
  ninja -C "$build" -j16 flashtick_sweep > "$out/sweep_build.log" 2>&1 ||
    { grep -E "error|FAILED" "$out/sweep_build.log" | head -30; exit 1; }
fi
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$summary" 2>&1
for p in "${presets[@]}"; do
  mkdir -p "$work/$p" "$out/$p"
  echo "== $p (dir $work/$p, limit ${limit}s)" | tee -a "$summary"
  timeout "$limit" "$build/bench/sweep/flashtick_sweep" --preset "$p" --dir "$work/$p" \
    --device cuda --python python3 > "$out/$p/run.log" 2>&1
  rc=$?
  echo "exit $rc ($([ $rc -eq 124 ] && echo 'time limit: run again to resume' || echo done))" |
    tee -a "$summary"
  grep -E "^arm |^verdict|^precision|^report" "$out/$p/run.log" | tee -a "$summary"
  cp "$work/$p"/report.* "$work/$p"/*.png "$work/$p"/config.json "$out/$p/" 2>/dev/null
done
