#!/usr/bin/env bash
# Split-KV forward (the one-head serving day; kernels/cuda/attention/flash_host.h
# FlashFwdNumSplits) on the GPU machine, in one device call (~6 min on a fresh H200):
#   1. build (gpu-kernels preset) and the attention parity table on the GPU (its T = 2500
#      one-head and T = 4096 cases run split-KV there) with the JAX oracle;
#   2. bench_attention at B = 1, H = 1 (d = 64, 128; N = 4096, 8192, 23400) with the
#      split choice automatic and with ATTN_FWD_SPLITS=1 (bench_attention --fwd-splits 1:
#      never split), each beside PyTorch SDPA flash and cuDNN on the same shapes
#      (gpu_attention.sh, ATTN_TAG names them);
#   3. the serving latency of the default flashtick-tiny shape (C = 64, one head of D = 64,
#      2 layers) beside PyTorch eager and torch.compile (gpu_serve_latency.sh).
# Results in $OUT/splitkv.tgz plus the two summaries. Usage (repository root, with the
# carried deps as gpu_all.sh):  OUT=dir bash bench/scripts/gpu_splitkv.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/device_env.sh
out=${OUT:?set OUT to the results folder}
r=$(mktemp -d /tmp/gpu_splitkv.XXXXXX)
build=$PWD/build/gpu-kernels
stage() { echo "== $1 ($(date +%T))"; }

stage "build + parity"
OUT=$r ATTN_BUILD=$build timeout 300 bash bench/scripts/gpu_attention.sh build test \
  > "$r/attention_test.log" 2>&1
grep -E "OK|FAIL|passed" "$r/attention_summary.txt" | head -12

for mode in auto nosplit; do
  stage "bench heads=1 ($mode)"
  splits=0
  [ "$mode" = nosplit ] && splits=1
  ATTN_FWD_SPLITS=$splits OUT=$r ATTN_BUILD=$build ATTN_HEADS=1 ATTN_N=4096,8192,23400 ATTN_TAG="-h1-$mode" \
    timeout 120 bash bench/scripts/gpu_attention.sh bench > "$r/attention_bench_$mode.log" 2>&1
  grep -E "fwd" "$r/attention_ratios-h1-$mode.txt" | head -12
done

stage "serve latency (flashtick-tiny shape)"
OUT=$r SL_MODEL="--width 64 --heads 1 --layers 2" SL_REPS=${SL_REPS:-30} SL_BATCH=1,8 \
  timeout 330 bash bench/scripts/gpu_serve_latency.sh > "$r/serve_latency.log" 2>&1
tail -20 "$r/serve_latency_summary.txt" 2>/dev/null

cp "$r/attention_summary.txt" "$r/serve_latency_summary.txt" "$out/" 2>/dev/null
tar -czf "$out/splitkv.tgz" -C "$r" . && echo "results: $out/splitkv.tgz"
