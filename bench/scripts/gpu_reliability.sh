#!/usr/bin/env bash
# GPU reliability checks (docs/reliability.md), in one device call (about 4-5 minutes on a fresh
# H200 machine; each stage has its own time limit):
#   1. build (gpu-kernels preset: no gRPC) the CUDA test binaries only;
#   2. gpu_oom_test: a Trainer and a forward too large for the GPU get
#      RESOURCE_EXHAUSTED, leak nothing, and the next small request works;
#   3. compute-sanitizer memcheck (with leak check) over cuda_ops_test, cuda_model_test
#      and the bf16 CUDA parity cases; racecheck and synccheck over the parity cases
#      (the shared-memory Flash kernels), with a time limit per run so it fits.
# Results: $OUT/gpu_reliability.txt (summary: one line per run with its exit code and
# the sanitizer's ERROR SUMMARY) and $OUT/gpu_reliability_logs.tgz (every log).
# Usage, from the repository root:  OUT=dir bench/scripts/gpu_reliability.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/device_env.sh
out=${OUT:?}
r=$(mktemp -d /tmp/gpu_rel.XXXXXX)
sum="$out/gpu_reliability.txt"
: > "$sum"
say() { echo "$*" | tee -a "$sum"; }
stage() { say "== $1 ($(date +%T))"; }
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
b=build/gpu-kernels

stage build
cmake --preset gpu-kernels -DFLASHTICK_BUILD_TESTS=ON -DFLASHTICK_BUILD_BENCH=OFF \
  > "$r/cmake.log" 2>&1
timeout 240 ninja -C $b -k 0 -j16 parity_test cuda_ops_test cuda_model_test gpu_oom_test \
  > "$r/build.log" 2>&1
say "build exit $?"
grep -E "error:" "$r/build.log" | head -5 | tee -a "$sum"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >> "$sum" 2>&1
"$cs" --version 2>&1 | tail -1 | tee -a "$sum"

stage gpu_oom
timeout 120 $b/tests/reliability/gpu_oom_test > "$r/gpu_oom.log" 2>&1
say "gpu_oom_test exit $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]|FAILED \]|Failure|Expected|Which is" "$r/gpu_oom.log" \
  | head -20 | tee -a "$sum"

# run <name> <limit s> <tool args...> -- <binary and args>
run() {
  local name=$1 limit=$2; shift 2
  local tool=() ; while [ "$1" != "--" ]; do tool+=("$1"); shift; done; shift
  timeout "$limit" "$cs" "${tool[@]}" --error-exitcode 42 --print-limit 50 "$@" \
    > "$r/$name.log" 2>&1
  local rc=$?
  local errs; errs=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$r/$name.log" | tail -2 | tr '\n' ' ')
  local tests; tests=$(grep -E "^\[  PASSED  \]|^\[  FAILED  \]" "$r/$name.log" | head -2 | tr '\n' ' ')
  case $rc in
    0) verdict=clean ;; 42) verdict=ERRORS ;; 124) verdict="TIME LIMIT (partial)" ;; *) verdict="exit $rc" ;;
  esac
  say "$name: $verdict; $errs $tests"
}

stage memcheck
# The out-of-memory test provokes cudaErrorMemoryAllocation on purpose, which memcheck
# reports as an API error (4 on the H200); it is checked by gpu_oom_test instead.
run memcheck_cuda_ops 60 --tool memcheck --leak-check full -- $b/tests/cuda_ops/cuda_ops_test \
  --gtest_filter='-*OutOfMemory*'
run memcheck_cuda_model 60 --tool memcheck --leak-check full -- $b/tests/cuda_ops/cuda_model_test
run memcheck_parity_bf16 80 --tool memcheck -- $b/tests/parity/parity_test \
  --gtest_filter='Parity/CudaBf16.*'

stage racecheck
run racecheck_parity_bf16 60 --tool racecheck --racecheck-report hazard -- \
  $b/tests/parity/parity_test --gtest_filter='Parity/CudaBf16.*attention*:-*T_2048*:*T_4096*'

stage synccheck
run synccheck_parity_f16 40 --tool synccheck -- $b/tests/parity/parity_test \
  --gtest_filter='Parity/CudaF16.*attention*:-*T_2048*:*T_4096*'

# The first sanitizer reports of each run, for the summary.
for f in "$r"/memcheck_*.log "$r"/racecheck_*.log "$r"/synccheck_*.log; do
  [ -f "$f" ] || continue
  if grep -qE "^========= (Invalid|Error|Race|Barrier|Leaked|Uninitialized)" "$f"; then
    say "-- first reports in $(basename "$f"):"
    grep -E "^========= (Invalid|Error|Race|Barrier|Leaked|Uninitialized|    at )" "$f" | head -12 \
      | tee -a "$sum"
  fi
done
stage done
tar czf "$out/gpu_reliability_logs.tgz" -C "$r" .
