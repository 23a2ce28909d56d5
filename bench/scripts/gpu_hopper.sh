#!/usr/bin/env bash
# Our Hopper (sm_90a) attention kernels on the GPU machine (docs/kernels/hopper.md): one
# build with cuDNN (gpu_cudnn.sh build), then stages under one deadline, each writing to
# $OUT as it goes:
#   wgmma    wgmma_gpu_test: the wgmma layer's tile GEMM (every descriptor layout the CPU
#            emulator checks) against the CPU; then compute-sanitizer memcheck and racecheck
#            on it
#   parity   the attention forward parity cases of D = 64 and 128 and the backward cases
#            of D = 64 with FLASHTICK_ATTENTION_IMPL=flash_sm90a (the wgmma kernels:
#            kernel paths …_sm90a), and compute-sanitizer memcheck and racecheck on a
#            forward and a backward case; then the overlapped forward's parity and times
#            beside the plain one (FLASHTICK_SM90_FWD=overlap)
#   bob      the backward-over-backward's wgmma passes (sm90/bob_sm90.cuh): bob_gpu_test
#            (float64 bound, JAX oracle, determinism) and compute-sanitizer memcheck and
#            racecheck on its parity cases at D = 64, then bob_bench with the mma.sync
#            passes (flash), the wgmma ones with shared-memory operands (none) and their
#            register-operand variants (FLASHTICK_BOB_SM90_REGS=qdo, kv, qdo,kv, the last the
#            default; parity first) at the same lengths
#   bench    bench_attention --impl flash,cudnn,flash_sm90a at D = 64 and 128 beside PyTorch
#            (gpu_cudnn.sh bench), and the ratio table with the sm90a/cudnn column
# $OUT gets hopper_summary.txt (read first) and hopper_logs.tgz with each stage's log (few
# files: the device tool returns only so many).
# Usage (repository root): OUT=dir bench/scripts/gpu_hopper.sh [build] [wgmma] [parity] [bob] [bench]
# Env: HOPPER_DEADLINE (seconds for all stages, default 560), HOPPER_N (bench lengths,
#      default 8192,23400,65536), HOPPER_BOB_N (default 8192,16384,23400,32768).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tree_commit.sh"  # tree_commit
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
[ -f scripts/device_env.sh ] && source scripts/device_env.sh  # the carried Abseil/gtest/json
out=${OUT:?set OUT to the results folder}
mkdir -p "$out"
start=$(date +%s)
deadline=$((start + ${HOPPER_DEADLINE:-560}))
left() { echo $((deadline - $(date +%s))); }
stages=${*:-build wgmma parity bob bench}
build=$root/build/gpu-kernels
summary="$out/hopper_summary.txt"
note() { echo "$*" | tee -a "$summary"; }
note "== gpu_hopper.sh $(date -u +%FT%TZ) commit $(tree_commit)"
export FLASHTICK_ATTENTION_CACHE=off
use_cudnn_wheel_libs  # scripts/device_env.sh
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)

if [[ " $stages " == *" build "* ]]; then
  CUDNN_TARGETS="wgmma_gpu_test tma_gpu_test parity_test bench_attention bob_gpu_test bob_bench" \
    CUDNN_DEADLINE=$(( $(left) - 150 )) OUT=$out bench/scripts/gpu_cudnn.sh build > "$out/hopper_build.txt" 2>&1 \
    || { tail -20 "$out/hopper_build.txt"; note "build FAILED"; exit 1; }
  note "build OK ($(( $(date +%s) - start )) s)"
fi

if [[ " $stages " == *" wgmma "* ]]; then
  timeout 60 "$build/tests/cuda_ops/wgmma_gpu_test" > "$out/hopper_wgmma.log" 2>&1
  note "wgmma_gpu_test: exit $? ($(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED \]' "$out/hopper_wgmma.log" | tail -1))"
  timeout 60 "$build/tests/cuda_ops/tma_gpu_test" > "$out/hopper_tma.log" 2>&1
  note "tma_gpu_test: exit $? ($(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED \]' "$out/hopper_tma.log" | tail -1))"
  grep -E "wgmma on the GPU|Failure|Expected|Which is" "$out/hopper_wgmma.log" | head -24 >> "$summary"
  if [ -n "$sanitizer" ]; then
    for tool in memcheck racecheck; do
      timeout 60 "$sanitizer" --tool $tool "$build/tests/cuda_ops/wgmma_gpu_test" > "$out/hopper_wgmma_$tool.log" 2>&1
      note "compute-sanitizer $tool (wgmma_gpu_test): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/hopper_wgmma_$tool.log" | tail -1)"
    done
  else
    note "compute-sanitizer: not found"
  fi
fi

if [[ " $stages " == *" parity "* ]]; then
  fwd='Parity/Cuda*.Case/*attention_fwd*_D_64_*:Parity/Cuda*.Case/*attention_fwd*_D_128_*:Parity/Cuda*.Case/*attention_bwd_*_D_64_*'
  FLASHTICK_ATTENTION_IMPL=flash_sm90a timeout $(( $(left) > 200 ? 90 : 30 )) "$build/tests/parity/parity_test" \
    --gtest_filter="$fwd" > "$out/hopper_parity_fwd.log" 2>&1
  note "parity $fwd (flash_sm90a): $(grep -c ': OK' "$out/hopper_parity_fwd.log") OK," \
       "$(grep -c ': SKIP' "$out/hopper_parity_fwd.log") SKIP, $(grep -c ': FAIL' "$out/hopper_parity_fwd.log") FAIL;" \
       "$(grep -c '_sm90a.*: OK' "$out/hopper_parity_fwd.log") of the OK ran the wgmma kernel"
  grep -E ': FAIL|_sm90a' "$out/hopper_parity_fwd.log" | head -30 >> "$summary"
  if [ -n "$sanitizer" ] && [ "$(left)" -gt 120 ]; then
    for tool in memcheck racecheck; do
      FLASHTICK_ATTENTION_IMPL=flash_sm90a timeout 60 "$sanitizer" --tool $tool "$build/tests/parity/parity_test" \
        --gtest_filter='Parity/CudaBf16.Case/*attention_fwd_B_2_H_8_Hkv_2_T_200_D_64_causal_1_*:Parity/CudaBf16.Case/*attention_bwd_B_2_H_8_Hkv_2_T_200_D_64_causal_1_*' \
        > "$out/hopper_parity_$tool.log" 2>&1
      note "compute-sanitizer $tool (parity, a forward and a backward case): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/hopper_parity_$tool.log" | tail -1)"
    done
  fi
fi

if [[ " $stages " == *" parity "* ]]; then
  # The forward variant with the softmax overlapped with the previous block's P·V
  # (FLASHTICK_SM90_FWD=overlap, kernel paths …_ov_sm90a): its parity, then its times
  # beside the plain wgmma forward's at the bench lengths.
  FLASHTICK_SM90_FWD=overlap FLASHTICK_ATTENTION_IMPL=flash_sm90a timeout $(( $(left) > 200 ? 90 : 30 )) \
    "$build/tests/parity/parity_test" --gtest_filter="$fwd" > "$out/hopper_parity_overlap.log" 2>&1
  note "parity (flash_sm90a, overlap forward): $(grep -c ': OK' "$out/hopper_parity_overlap.log") OK," \
       "$(grep -c ': FAIL' "$out/hopper_parity_overlap.log") FAIL; $(grep -c '_ov_.*: OK\|_ov_sm90a.*: OK' "$out/hopper_parity_overlap.log") of the OK ran it"
  for fwdv in plain overlap; do
    [ "$(left)" -gt 90 ] || break
    sel=; [ $fwdv = overlap ] && sel=overlap
    FLASHTICK_SM90_FWD=$sel timeout 60 "$build/bench/attention/bench_attention" --impl flash_sm90a \
      --n "${HOPPER_N:-8192,23400,65536}" --d 64,128 --rounds 2 --no-check > "$out/hopper_fwd_$fwdv.jsonl" 2>&1
    note "bench_attention flash_sm90a ($fwdv forward): $(grep -o '"d":[0-9]*\|"N":[0-9]*\|"op":"[a-z_+]*"\|"ms":[0-9.]*' "$out/hopper_fwd_$fwdv.jsonl" | paste -sd' ')"
  done
fi

if [[ " $stages " == *" bob "* ]]; then
  FLASHTICK_ATTENTION_IMPL=flash_sm90a timeout $(( $(left) > 200 ? 90 : 30 )) "$build/tests/bob/bob_gpu_test" \
    > "$out/hopper_bob_test.log" 2>&1
  note "bob_gpu_test (flash_sm90a): exit $? ($(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED \]' "$out/hopper_bob_test.log" | tail -1))"
  grep -E 'Failure|kernel|FAILED' "$out/hopper_bob_test.log" | head -12 >> "$summary"
  if [ -n "$sanitizer" ] && [ "$(left)" -gt 150 ]; then
    for tool in memcheck racecheck; do
      timeout 60 "$sanitizer" --tool $tool "$build/tests/parity/parity_test" \
        --gtest_filter='Parity/CudaBf16.Case/*attention_bwd_bwd*_D_64_*' > "$out/hopper_bob_$tool.log" 2>&1
      note "compute-sanitizer $tool (parity, attention_bwd_bwd D = 64, wgmma passes): $(grep -c ': OK' "$out/hopper_bob_$tool.log") OK," \
           "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/hopper_bob_$tool.log" | tail -1)"
    done
  fi
  # flash: the mma.sync passes; none: the wgmma ones with every score operand from shared
  # memory; qdo, kv, qdo,kv (the default): wgmma with those operands from registers
  # (FLASHTICK_BOB_SM90_REGS). The sanitizers above ran the default.
  FLASHTICK_BOB_SM90_REGS=none timeout 60 "$build/tests/bob/bob_gpu_test" > "$out/hopper_bob_test_regs.log" 2>&1
  note "bob_gpu_test (FLASHTICK_BOB_SM90_REGS=none, shared-memory operands): exit $? ($(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED \]' "$out/hopper_bob_test_regs.log" | tail -1))"
  for variant in flash none qdo kv qdo,kv; do
    [ "$(left)" -gt 60 ] || break
    impl=auto regs=$variant
    [ "$variant" = flash ] && impl=flash
    FLASHTICK_ATTENTION_IMPL=$impl FLASHTICK_BOB_SM90_REGS=$regs timeout $(( $(left) - 30 )) "$build/bench/bob/bob_bench" \
      --n "${HOPPER_BOB_N:-8192,16384,23400,32768}" --b 1 --h 12 --d 64 > "$out/hopper_bob_bench_${variant/,/_}.jsonl" 2>&1
    note "bob_bench ($variant): $(grep -o '"N":[0-9]*\|"ms":[0-9.]*\|"tflops":[0-9.]*' "$out/hopper_bob_bench_${variant/,/_}.jsonl" | paste -sd' ')"
  done
fi

if [[ " $stages " == *" bench "* ]]; then
  CUDNN_N=${HOPPER_N:-8192,23400,65536} CUDNN_D=64,128 CUDNN_ROUNDS=2 CUDNN_IMPLS=flash,cudnn,flash_sm90a \
    CUDNN_DEADLINE=$(( $(left) - 5 )) OUT=$out bench/scripts/gpu_cudnn.sh bench > "$out/hopper_bench.txt" 2>&1
  tail -20 "$out/hopper_bench.txt" >> "$summary"
fi
note "== done in $(( $(date +%s) - start )) s"
( cd "$out" && ls hopper_*.log hopper_*.txt hopper_*.jsonl 2>/dev/null | grep -v '^hopper_summary.txt$' \
    | tar czf hopper_logs.tgz -T - --remove-files ) || true
