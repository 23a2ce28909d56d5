#!/usr/bin/env bash
# Issue 5 on the GPU machine: the full-scale N-sweep of RESEARCH.md on planted-signal
# days (N = 512, 4,096, 32,768; lags 300 / 3,000 / 15,000; 23,400-step days; the
# go-marker generator, train/sweep/go_cue.h) and its null twin, with the standalone
# sweep runner (bench/sweep/flashtick_sweep: the same engine flashtickd runs, without
# gRPC). Reports (JSON, Markdown, plots when the machine's python3 has matplotlib)
# land in $OUT/<preset>/; commit them under docs/sweeps/<preset>-h200/. Resumable: a
# second call with the same $SWEEP_DIR (the machine still warm) continues from the
# arms' checkpoints and skips finished arms.
# Cost (train/sweep/sweep_presets.cc has the reasoning): ~860 optimizer steps of
# 65,536 tokens per arm; from the H200 step times in bench/results/h200-2026-11-29-
# da79869 (2.4 / 5.4 / 65.5 ms at N = 512 / 4,096 / 23,400 for a 48-head-layer
# width-768 model) this 4-head-layer width-128 model takes ≲ 10 ms a step at N = 512
# and 4,096 and ≈ 20 ms at 32,768: ≈ 9 + 9 + 17 s of training per preset, plus 20
# test days of evaluation and the precision check (2 windows of N = 32,768 on the
# float64 CPU reference, ~1 min on 16 cores). Upper bound (the big model's whole
# step time per token): ~3.4 min for the N = 32,768 arm. Expected: first call builds
# flashtick_sweep (a few minutes on 16 cores) and runs `planted`; `planted_null`
# in the same call if time is left, else in a second call; a third only if a
# preset hit its limit.
# Status: the CPU twin (planted_small, docs/sweeps/planted_small.md) has not shown the
# N=512 twin arm learning its offsets at this training budget, so this sweep would most
# likely FAIL for want of training; tune on the twin first (the doc says what to try).
# Usage (repository root):
#   OUT=/some/dir bench/scripts/gpu_sweep.sh [planted] [planted_null]   (default: both)
# Env: SWEEP_BUILD (build dir, default build/gpu-kernels), SWEEP_DIR (work dirs, default
#      build/gpu-sweeps), SWEEP_TIMEOUT (seconds per preset, default 540),
#      SWEEP_BUDGET (seconds for the whole script, build included, default 570, so a
#      10-minute device call still writes its summary; a preset that would start with
#      under 60 s left is skipped with a note to run again).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
[ -f scripts/device_env.sh ] && source scripts/device_env.sh
out=${OUT:?set OUT to the results folder}
build=${SWEEP_BUILD:-$root/build/gpu-kernels}
work=${SWEEP_DIR:-$root/build/gpu-sweeps}
limit=${SWEEP_TIMEOUT:-540}
budget=${SWEEP_BUDGET:-570}
started=$(date +%s)
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
  left=$((budget - ($(date +%s) - started)))
  if [ "$left" -lt 60 ]; then
    echo "== $p skipped: ${left}s of the ${budget}s budget left; run again to continue" |
      tee -a "$summary"
    continue
  fi
  this=$((left < limit ? left : limit))
  echo "== $p (dir $work/$p, limit ${this}s)" | tee -a "$summary"
  echo "-- call at $(date -u +%FT%TZ), limit ${this}s" >> "$out/$p/run.log"  # appended: resumes
  timeout "$this" "$build/bench/sweep/flashtick_sweep" --preset "$p" --dir "$work/$p" \
    --device cuda --python python3 >> "$out/$p/run.log" 2>&1
  rc=$?
  echo "exit $rc ($([ $rc -eq 124 ] && echo 'time limit: run again to resume' || echo done))" |
    tee -a "$summary"
  [ $rc -eq 124 ] && grep -E "^\[" "$out/$p/run.log" | tail -n 2 | tee -a "$summary"
  grep -E "^arm |^verdict|^precision|^report" "$out/$p/run.log" | tee -a "$summary"
  cp "$work/$p"/report.* "$work/$p"/*.png "$work/$p"/config.json "$out/$p/" 2>/dev/null
done
