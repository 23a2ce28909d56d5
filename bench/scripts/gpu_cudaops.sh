#!/usr/bin/env bash
# flash_cuda's non-attention ops on the GPU machine: builds the CUDA
# backend tests and the parity harness, runs
#   cuda_ops_test   backend behaviour: memory/peak, OOM -> ResourceExhausted, copies,
#                   bitwise AdamW/Sophia-H/Cast vs the CPU, in-place, determinism
#   parity_test     every non-attention op case on cuda bf16/fp16/fp32 vs cpu fp64
#   cuda_model_test the transformer forward on the GPU (bf16, fp16) vs the CPU in fp64
#   cuda_ops_bench  each op at training-step shapes (B·T = 8 × 23,400, C = 768): ms, GB/s, TFLOP/s
# and, with CUDAOPS_SANITIZE=1, compute-sanitizer memcheck over the fp32 parity cases.
# Everything lands in $OUT:
#   cudaops_summary.txt      pass/fail counts and every FAIL line (read this first)
#   cudaops_backend.log      cuda_ops_test output;  cudaops_parity.log  one line per case
#   cudaops_model.log        cuda_model_test output (errors per dtype and shape)
#   cuda_ops-<gpu>-<date>.jsonl  benchmark lines (bf16 and fp32), cudaops_bench.log its stderr
#   cudaops_build.log, cudaops_cmake.log, cudaops_ptxas.txt (spills), cudaops_memcheck.log
# Usage (repository root):  OUT=/some/dir bench/scripts/gpu_cudaops.sh
# Env: FLASHTICK_DEPS_PREFIX (carried Abseil/gtest/json, appended to CMAKE_PREFIX_PATH),
#      CUDAOPS_ARCH (default 90), CUDAOPS_BUILD (build dir), CUDAOPS_SANITIZE=1.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tree_commit.sh"  # tree_commit
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:?set OUT to the results folder}
build=${CUDAOPS_BUILD:-$root/build/gpu-cudaops}
arch=${CUDAOPS_ARCH:-90}
mkdir -p "$out"
prefix=${CMAKE_PREFIX_PATH:-}
if [ -n "${FLASHTICK_DEPS_PREFIX:-}" ]; then prefix="${prefix:+$prefix;}$FLASHTICK_DEPS_PREFIX"; fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHTICK_WITH_CUDA=ON \
  -DFLASHTICK_WITH_SERVER=OFF -DCMAKE_CUDA_ARCHITECTURES="$arch" -DFLASHTICK_BUILD_BENCH=ON \
  -DCMAKE_PREFIX_PATH="$prefix" > "$out/cudaops_cmake.log" 2>&1 \
  || { tail -40 "$out/cudaops_cmake.log"; exit 1; }
ninja -C "$build" -j16 cuda_ops_test cuda_model_test parity_test cuda_ops_bench > "$out/cudaops_build.log" 2>&1 \
  || { grep -B2 -A12 -m5 "error" "$out/cudaops_build.log"; exit 1; }
grep -E "spill" "$out/cudaops_build.log" > "$out/cudaops_ptxas.txt" || true
nvidia-smi > "$out/cudaops_nvidia_smi.txt" 2>&1 || true

"$build/tests/cuda_ops/cuda_ops_test" --gtest_output="xml:$out/cudaops_backend.xml" \
  > "$out/cudaops_backend.log" 2>&1
backend_rc=$?
# Non-attention cases only (attention has its own scripts); the case label is in the name.
"$build/tests/parity/parity_test" --gtest_filter='Parity/Cuda*.*-*attention*' \
  --gtest_output="xml:$out/cudaops_parity.xml" > "$out/cudaops_parity.log" 2>&1
parity_rc=$?
"$build/tests/cuda_ops/cuda_model_test" > "$out/cudaops_model.log" 2>&1
model_rc=$?

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_' | tr -cd '[:alnum:]_-')
commit=$(tree_commit "$root")
jsonl="$out/cuda_ops-${gpu}-$(date +%F).jsonl"
for dt in bf16 fp32; do
  "$build/bench/cuda_ops/cuda_ops_bench" --dtype "$dt" --commit "$commit" >> "$jsonl" \
    2>> "$out/cudaops_bench.log" || echo "cuda_ops_bench $dt FAILED (see cudaops_bench.log)"
done

if [ "${CUDAOPS_SANITIZE:-0}" = 1 ]; then
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  timeout 540 "$sanitizer" --tool memcheck --error-exitcode 3 \
    "$build/tests/parity/parity_test" --gtest_filter='Parity/CudaF32.*-*attention*' \
    > "$out/cudaops_memcheck.log" 2>&1
  echo "memcheck exit: $?" >> "$out/cudaops_memcheck.log"
fi

{
  echo "commit $(tree_commit "$root")"
  echo "gpu $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "cuda_ops_test exit $backend_rc: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/cudaops_backend.log" | tr '\n' ' ')"
  echo "parity exit $parity_rc: OK $(grep -c ': OK ' "$out/cudaops_parity.log")," \
       "FAIL $(grep -c ': FAIL' "$out/cudaops_parity.log")," \
       "SKIP $(grep -c ': SKIP' "$out/cudaops_parity.log")"
  echo "cuda_model_test exit $model_rc:"
  grep -E '^model forward|^\[  (PASSED|FAILED|SKIPPED) ' "$out/cudaops_model.log"
  grep -E ': FAIL' "$out/cudaops_parity.log"
  grep -E '^\[  FAILED  \]|Failure|error:' "$out/cudaops_backend.log" | head -40
  echo "bench lines: $(wc -l < "$jsonl") in $jsonl"
  [ -f "$out/cudaops_memcheck.log" ] && grep -E "ERROR SUMMARY|memcheck exit" "$out/cudaops_memcheck.log"
} > "$out/cudaops_summary.txt"
cat "$out/cudaops_summary.txt"
[ "$backend_rc" = 0 ] && [ "$parity_rc" = 0 ] && [ "$model_rc" = 0 ]
