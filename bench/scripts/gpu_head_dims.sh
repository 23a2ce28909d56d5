#!/usr/bin/env bash
# Head dims 16, 32 and 96 on the GPU machine (docs/kernels/head_dims.md): one build with
# cuDNN (gpu_cudnn.sh build; flashtick_sweep too, so a screen can follow warm), then stages under one deadline, each writing to $OUT:
#   parity   the attention parity cases (forward, backward, backward-over-backward,
#            decode) of D = 16, 32, 96 through ours (FLASHTICK_ATTENTION_IMPL=flash), and
#            every attention backward case through cuDNN (its Dvec is ours)
#   oracle   the JAX float64 oracle on the GPU (every D it has)
#   model    cuda_model_test: whole models of D = 16, 32 and 64 against the CPU in fp64
#   bench    bench_attention (ours, cuDNN) beside PyTorch at D = 16, 32, 96 (gpu_cudnn.sh bench)
# $OUT gets head_dims_summary.txt (read first) and each stage's log.
# Usage (repository root): OUT=dir bench/scripts/gpu_head_dims.sh [build] [parity] [oracle] [model] [bench]
# Env: HD_DEADLINE (seconds for all stages, default 560), HD_N (bench lengths, default 4096,23400).
set -uo pipefail
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
note "== gpu_head_dims.sh $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
export FLASHTICK_ATTENTION_CACHE=off
use_cudnn_wheel_libs  # scripts/device_env.sh

if [[ " $stages " == *" build "* ]]; then
  CUDNN_TARGETS="parity_test attention_oracle_test cuda_model_test bench_attention flashtick_sweep" \
    CUDNN_DEADLINE=$(( $(left) - 200 )) OUT=$out bench/scripts/gpu_cudnn.sh build > "$out/head_dims_build.txt" 2>&1 \
    || { tail -20 "$out/head_dims_build.txt"; note "build FAILED"; exit 1; }
  note "build OK ($(( $(date +%s) - start )) s)"
fi

if [[ " $stages " == *" parity "* ]]; then
  # Ours on the new head dims; cuDNN on every backward case (its Dvec is our kernel,
  # now written for any even D).
  new_d='Parity/Cuda*.Case/*_D_16_*:Parity/Cuda*.Case/*_D_32_*:Parity/Cuda*.Case/*_D_96_*'
  for impl in flash cudnn; do
    filter=$new_d
    [ $impl = cudnn ] && filter='Parity/Cuda*.Case/*attention_bwd_B*'
    FLASHTICK_ATTENTION_IMPL=$impl timeout $(( $(left) > 200 ? 90 : 30 )) "$build/tests/parity/parity_test" \
      --gtest_filter="$filter" > "$out/head_dims_parity_$impl.log" 2>&1
    note "parity $filter ($impl): $(grep -c ': OK' "$out/head_dims_parity_$impl.log") OK," \
         "$(grep -c ': SKIP' "$out/head_dims_parity_$impl.log") SKIP, $(grep -c ': FAIL' "$out/head_dims_parity_$impl.log") FAIL"
    grep ': FAIL' "$out/head_dims_parity_$impl.log" | head -20 >> "$summary"
  done
fi

if [[ " $stages " == *" oracle "* ]]; then
  (cd "$build/tests/oracle" && FLASHTICK_ATTENTION_IMPL=flash JAX_PLATFORMS=cpu timeout 90 ./attention_oracle_test \
    --gtest_filter='*Cuda*') > "$out/head_dims_oracle.log" 2>&1 \
    && note "oracle (CUDA vs JAX fp64, D = 16, 32, 64, 96, 128): PASSED" \
    || { note "oracle: FAILED or timed out"; grep -E "Failure|Expected|Which is|lacks" "$out/head_dims_oracle.log" | head -10 >> "$summary"; }
fi

if [[ " $stages " == *" model "* ]]; then
  timeout 90 "$build/tests/cuda_ops/cuda_model_test" > "$out/head_dims_model.log" 2>&1
  note "cuda_model_test: exit $? ($(grep -E '^\[  PASSED|^\[  FAILED' "$out/head_dims_model.log" | tail -1))"
  grep -E "model forward|Failure" "$out/head_dims_model.log" | head -30 >> "$summary"
fi

if [[ " $stages " == *" bench "* ]]; then
  CUDNN_N=${HD_N:-4096,23400} CUDNN_D=16,32,96 CUDNN_ROUNDS=1 CUDNN_DEADLINE=$(( $(left) - 5 )) OUT=$out \
    bench/scripts/gpu_cudnn.sh bench > "$out/head_dims_bench.txt" 2>&1
  tail -30 "$out/head_dims_bench.txt" >> "$summary"
fi
note "== done in $(( $(date +%s) - start )) s"
