#!/usr/bin/env bash
# Head dims 16, 32, 96 and 256 on the GPU machine (docs/kernels/head_dims.md): one build
# with cuDNN (gpu_cudnn.sh build; flashtick_sweep too, so a screen can follow warm), then stages under one deadline, each writing to $OUT:
#   parity   the attention parity cases (forward, backward, backward-over-backward,
#            decode) of D = 16, 32, 96 and, in a run of its own, D = 256 through ours
#            (FLASHTICK_ATTENTION_IMPL=flash), and every attention backward case through
#            cuDNN (its Dvec is ours)
#   oracle   the JAX float64 oracle on the GPU (every D it has), and bob_gpu_test: BoB
#            at D = 64, 128, 256 against the CPU fp64 reference and JAX
#   model    cuda_model_test: whole models of D = 16, 32 and 64 against the CPU in fp64
#   bench    bench_attention (ours, cuDNN) beside PyTorch at D = 16, 32, 96, 256
#            (gpu_cudnn.sh bench; cuDNN skips 256), then bob_bench (BoB) at D = 256 and 128
# $OUT gets head_dims_summary.txt (read first) and each stage's log.
# Usage (repository root): OUT=dir bench/scripts/gpu_head_dims.sh [build] [parity] [oracle] [model] [bench]
# Env: HD_DEADLINE (seconds for all stages, default 560), HD_N (bench lengths, default 4096,23400),
#      HD_BOB_N (bob_bench lengths, default 4096,23400).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tree_commit.sh"  # tree_commit
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
[ -f scripts/device_env.sh ] && source scripts/device_env.sh  # the carried Abseil/gtest/json
out=${OUT:?set OUT to the results folder}
mkdir -p "$out"
start=$(date +%s)
deadline=$((start + ${HD_DEADLINE:-560}))
left() { echo $((deadline - $(date +%s))); }
stages=${*:-build parity oracle model bench}
build=$root/build/gpu-kernels
summary="$out/head_dims_summary.txt"
note() { echo "$*" | tee -a "$summary"; }
note "== gpu_head_dims.sh $(date -u +%FT%TZ) commit $(tree_commit)"
export FLASHTICK_ATTENTION_CACHE=off
use_cudnn_wheel_libs  # scripts/device_env.sh

if [[ " $stages " == *" build "* ]]; then
  CUDNN_TARGETS="parity_test attention_oracle_test cuda_model_test bench_attention flashtick_sweep bob_gpu_test bob_bench" \
    CUDNN_DEADLINE=$(( $(left) - 200 )) OUT=$out bench/scripts/gpu_cudnn.sh build > "$out/head_dims_build.txt" 2>&1 \
    || { tail -20 "$out/head_dims_build.txt"; note "build FAILED"; exit 1; }
  note "build OK ($(( $(date +%s) - start )) s)"
fi

if [[ " $stages " == *" parity "* ]]; then
  # Ours on the new head dims; cuDNN on every backward case (its Dvec is our kernel,
  # now written for any even D).
  # D = 256 (forward, backward, BoB on its 32 × 32 tiles, decode) runs apart so a
  # timeout there keeps the other dims' results.
  new_d='Parity/Cuda*.Case/*_D_16_*:Parity/Cuda*.Case/*_D_32_*:Parity/Cuda*.Case/*_D_96_*'
  d256='Parity/Cuda*.Case/*_D_256_*'
  for run in flash cudnn flash_d256; do
    impl=${run%_d256}
    filter=$new_d
    [ $run = cudnn ] && filter='Parity/Cuda*.Case/*attention_bwd_B*'
    [ $run = flash_d256 ] && filter=$d256
    FLASHTICK_ATTENTION_IMPL=$impl timeout $(( $(left) > 260 ? 90 : 30 )) "$build/tests/parity/parity_test" \
      --gtest_filter="$filter" > "$out/head_dims_parity_$run.log" 2>&1
    note "parity $filter ($impl): $(grep -c ': OK' "$out/head_dims_parity_$run.log") OK," \
         "$(grep -c ': SKIP' "$out/head_dims_parity_$run.log") SKIP, $(grep -c ': FAIL' "$out/head_dims_parity_$run.log") FAIL"
    grep ': FAIL' "$out/head_dims_parity_$run.log" | head -20 >> "$summary"
  done
  grep -E '^attention_bwd_bwd.*D=256' "$out/head_dims_parity_flash_d256.log" | head -20 >> "$summary"
fi

if [[ " $stages " == *" oracle "* ]]; then
  (cd "$build/tests/oracle" && FLASHTICK_ATTENTION_IMPL=flash JAX_PLATFORMS=cpu timeout 90 ./attention_oracle_test \
    --gtest_filter='*Cuda*') > "$out/head_dims_oracle.log" 2>&1 \
    && note "oracle (CUDA vs JAX fp64, D = 16, 32, 64, 96, 128, 256): PASSED" \
    || { note "oracle: FAILED or timed out"; grep -E "Failure|Expected|Which is|lacks" "$out/head_dims_oracle.log" | head -10 >> "$summary"; }
  # BoB at D = 64, 128, 256 against the CPU fp64 reference and JAX, determinism, refusals.
  (cd "$build/tests/bob" && FLASHTICK_ATTENTION_IMPL=flash JAX_PLATFORMS=cpu \
    timeout $(( $(left) > 260 ? 120 : 30 )) ./bob_gpu_test) > "$out/head_dims_bob_gpu.log" 2>&1
  note "bob_gpu_test: exit $? ($(grep -E '^\[  PASSED|^\[  FAILED' "$out/head_dims_bob_gpu.log" | tail -1))"
  grep -E "D=256|Failure" "$out/head_dims_bob_gpu.log" | head -20 >> "$summary"
fi

if [[ " $stages " == *" model "* ]]; then
  timeout 90 "$build/tests/cuda_ops/cuda_model_test" > "$out/head_dims_model.log" 2>&1
  note "cuda_model_test: exit $? ($(grep -E '^\[  PASSED|^\[  FAILED' "$out/head_dims_model.log" | tail -1))"
  grep -E "model forward|Failure" "$out/head_dims_model.log" | head -30 >> "$summary"
fi

if [[ " $stages " == *" bench "* ]]; then
  # Three fifths of what is left to the attention bench, the rest to BoB.
  CUDNN_N=${HD_N:-4096,23400} CUDNN_D=16,32,96,256 CUDNN_ROUNDS=1 CUDNN_DEADLINE=$(( $(left) * 3 / 5 )) OUT=$out \
    bench/scripts/gpu_cudnn.sh bench > "$out/head_dims_bench.txt" 2>&1
  tail -30 "$out/head_dims_bench.txt" >> "$summary"
  # BoB (bf16, B = 1, H = 12, causal) at D = 256, then D = 128 for the same session's
  # reference; D = 256 gets two thirds of what is left. Its first check is at D = 64
  # (bob_bench.cc).
  commit=$(tree_commit)
  for d in 256 128; do
    [ "$(left)" -gt 15 ] || { note "bob_bench D = $d: no time left"; continue; }
    limit=$(( $(left) - 5 ))
    [ $d = 256 ] && limit=$(( limit * 2 / 3 ))
    timeout $limit "$build/bench/bob/bob_bench" --d $d --n "${HD_BOB_N:-4096,23400}" \
      --commit "$commit" --json "$out/head_dims_bob.jsonl" 2> "$out/head_dims_bob_d$d.log"
    note "bob_bench D = $d: exit $?"
  done
  grep -h '"bwd_bwd"' "$out/head_dims_bob.jsonl" 2>/dev/null | tail -8 >> "$summary"
fi
note "== done in $(( $(date +%s) - start )) s"
