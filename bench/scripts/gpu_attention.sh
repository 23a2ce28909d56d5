#!/usr/bin/env bash
# On the GPU machine: builds our Flash attention kernels, runs the attention
# parity and JAX oracle tests on the GPU, then bench_attention beside PyTorch's SDPA
# flash and cuDNN backends, and prints the ratio table. Everything lands in $OUT:
#   attention_summary.txt        read first: test counts, every FAIL line, ratio table
#   attention_parity_gpu.log     one line per case:  attention_bwd(...) [flash_cuda bf16]: OK nmse=...
#   attention_oracle.log         CPU and CUDA vs JAX float64
#   attention-<gpu>-<date>.jsonl our lines + PyTorch's (commit this under bench/results/)
#   attention_ratios.txt         ours / sdpa flash and ours / cudnn per (d, op, N)
#   attention_build.log, attention_ptxas.txt (spills), attention_cmake.log,
#   attention_sanitizer.log      (ATTN_SANITIZE=1: compute-sanitizer memcheck + racecheck)
# Usage (repository root):  OUT=/some/dir bench/scripts/gpu_attention.sh [build] [test] [bench]
#   (no stage: all three; the build dir persists between calls on a warm machine, so a
#   10-minute device call can run one stage at a time).
# Env: FLASHTICK_DEPS_PREFIX (carried Abseil/gtest/json, appended to CMAKE_PREFIX_PATH),
#      ATTN_ARCH (default 90), ATTN_BUILD (build dir), ATTN_N / ATTN_D (bench lists),
#      ATTN_HEADS (default 12; B = 1), ATTN_TAG (suffix of the jsonl/ratios names),
#      ATTN_FWD_SPLITS (bench_attention --fwd-splits: 1 never splits the forward;
#      unset: the launcher's choice), ATTN_SANITIZE=1.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tree_commit.sh"  # tree_commit
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:?set OUT to the results folder}
build=${ATTN_BUILD:-$root/build/gpu-attention}
arch=${ATTN_ARCH:-90}
ns=${ATTN_N:-2048,4096,8192,16384,23400,32768,65536,131072,262144}
ds=${ATTN_D:-64,128}
heads=${ATTN_HEADS:-12}
tag=${ATTN_TAG:-}
python=$(command -v python3)
stages=${*:-build test bench}
mkdir -p "$out"
summary="$out/attention_summary.txt"
prefix=${CMAKE_PREFIX_PATH:-}
if [ -n "${FLASHTICK_DEPS_PREFIX:-}" ]; then prefix="${prefix:+$prefix;}$FLASHTICK_DEPS_PREFIX"; fi
note() { echo "$*" | tee -a "$summary"; }

if [[ " $stages " == *" build "* ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHTICK_WITH_CUDA=ON \
    -DFLASHTICK_WITH_SERVER=OFF -DCMAKE_CUDA_ARCHITECTURES="$arch" -DFLASHTICK_PYTHON="$python" \
    -DCMAKE_PREFIX_PATH="$prefix" > "$out/attention_cmake.log" 2>&1 \
    || { tail -40 "$out/attention_cmake.log"; note "cmake FAILED"; exit 1; }
  ninja -C "$build" -j16 parity_test attention_oracle_test bench_attention \
    > "$out/attention_build.log" 2>&1 \
    || { grep -B2 -A12 -m5 "error" "$out/attention_build.log"; note "build FAILED"; exit 1; }
  grep -E "spill" "$out/attention_build.log" | grep -E "flash_(fwd|bwd)" > "$out/attention_ptxas.txt" || true
  note "build OK ($(wc -l < "$out/attention_ptxas.txt") attention kernels report spills; see attention_ptxas.txt)"
fi

if [[ " $stages " == *" test "* ]]; then
  "$build/tests/parity/parity_test" --gtest_filter='Parity/Cuda*.Case/*attention*' \
    > "$out/attention_parity_gpu.log" 2>&1
  note "parity_gpu (attention): $(grep -c ': OK' "$out/attention_parity_gpu.log") OK," \
       "$(grep -c ': SKIP' "$out/attention_parity_gpu.log") SKIP, $(grep -c ': FAIL' "$out/attention_parity_gpu.log") FAIL"
  grep ': FAIL' "$out/attention_parity_gpu.log" | head -40 >> "$summary"
  grep -E "^\[  (PASSED|FAILED)|tests? ran" "$out/attention_parity_gpu.log" | tail -3 >> "$summary"
  (cd "$build/tests/oracle" && JAX_PLATFORMS=cpu ./attention_oracle_test) > "$out/attention_oracle.log" 2>&1 \
    && note "oracle (CPU + CUDA vs JAX fp64): PASSED" \
    || { note "oracle: FAILED"; grep -E "Failure|Expected|Which is|case " "$out/attention_oracle.log" | head -30 >> "$summary"; }
  if [ "${ATTN_SANITIZE:-0}" = 1 ]; then
    for tool in memcheck racecheck; do
      compute-sanitizer --tool "$tool" "$build/tests/parity/parity_test" \
        --gtest_filter='Parity/CudaBf16.Case/*attention_*_T_1_*:Parity/CudaBf16.Case/*attention_*_T_37_*' \
        >> "$out/attention_sanitizer.log" 2>&1
      note "compute-sanitizer $tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/attention_sanitizer.log" | tail -1)"
    done
  fi
fi

if [[ " $stages " == *" bench "* ]]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_' | tr -cd '[:alnum:]_-')
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
  commit=$(tree_commit "$root")
  jsonl="$out/attention-${gpu}-$(date +%F)${tag}.jsonl"
  echo "{\"bench\":\"meta\",\"gpu\":\"$gpu\",\"driver\":\"$driver\",\"commit\":\"$commit\",\"date\":\"$(date -u +%FT%TZ)\"}" > "$jsonl"
  "$build/bench/attention/bench_attention" --n "$ns" --d "$ds" --heads "$heads" --commit "$commit" \
    --fwd-splits "${ATTN_FWD_SPLITS:-0}" > "$out/attention_ours.jsonl" 2> "$out/attention_bench.log" || note "bench_attention FAILED (see attention_bench.log)"
  "$python" "$root/bench/attention/torch_attention.py" --n "$ns" --d "$ds" --heads "$heads" --commit "$commit" \
    > "$out/attention_torch.jsonl" 2> "$out/attention_torch.log" || note "torch_attention.py FAILED (see attention_torch.log)"
  cat "$out/attention_ours.jsonl" "$out/attention_torch.jsonl" >> "$jsonl"
  "$python" "$root/bench/attention/merge_ratios.py" "$out/attention_ours.jsonl" "$out/attention_torch.jsonl" \
    > "$out/attention_ratios${tag}.txt" 2>&1
  cat "$out/attention_ratios${tag}.txt" >> "$summary"
  cat "$out/attention_ratios${tag}.txt"
  echo "results: $jsonl"
fi
