#!/usr/bin/env bash
# Nsight Compute profiles of the kernels that miss their speed targets:
# the Flash backward main kernel and the two backward-over-backward passes, one launch
# each at N = 16,384 (B=1, H=12, d=64, causal, bf16). Sections: speed of light,
# compute and memory workload, occupancy, launch statistics, warp state and scheduler
# statistics: what limits each kernel (issue slots, shared-memory bandwidth, stalls).
# Needs a build with bench_attention and bob_bench (gpu-kernels preset with
# -DFLASHTICK_BUILD_BENCH=ON, as gpu_all.sh makes it). Text reports land in $OUT.
# Usage (repository root):  OUT=dir PROFILE_BUILD=build/gpu-kernels bench/scripts/gpu_profile.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:?set OUT}
build=${PROFILE_BUILD:-build/gpu-kernels}
n=${PROFILE_N:-16384}
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
          --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats)
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)

"$ncu" "${sections[@]}" --kernel-name regex:flash_bwd_kernel --launch-count 1 \
  "$build/bench/attention/bench_attention" --n "$n" --d 64 --no-check --max-reps 1 \
  > "$out/ncu_flash_bwd_d64.txt" 2>&1
echo "ncu flash_bwd exit $?"
"$ncu" "${sections[@]}" --kernel-name regex:bob_pass --launch-count 2 \
  "$build/bench/bob/bob_bench" --n "$n" --no-check > "$out/ncu_bob_d64.txt" 2>&1
echo "ncu bob exit $?"
# The headline lines, for the summary.
grep -hE "^  [a-z_]+.*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible|One or More Eligible|Shared Memory Configuration Size" \
  "$out/ncu_flash_bwd_d64.txt" "$out/ncu_bob_d64.txt" | head -60
