#!/usr/bin/env bash
# Flash backward tile experiment on the H200 (about 3 minutes): builds bwd_tiles_bench
# (bench/attention/bwd_tiles_bench.cu: the production d = 64 backward beside candidate
# tilings, each checked against it) for sm_90 only, runs it, and PyTorch's SDPA flash
# and cuDNN on the same shapes in the same call. Output in $OUT: bwd_tiles.jsonl,
# torch.jsonl, bwd_tiles_summary.txt (build report with registers/spills, the lines).
# Usage (repository root, carried deps as gpu_all.sh):  OUT=dir bench/scripts/gpu_bwd_tiles.sh
# Env: TILES_N (default 8192,16384,23400).
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/device_env.sh
out=${OUT:?set OUT}
ns=${TILES_N:-8192,16384,23400}
b=build/gpu-tiles
sum="$out/bwd_tiles_summary.txt"
cmake --preset gpu-kernels -B $b -DCMAKE_CUDA_ARCHITECTURES=90 -DFLASHTICK_BUILD_TESTS=OFF \
  -DFLASHTICK_BUILD_BENCH=ON -DFLASHTICK_BUILD_TILE_BENCH=ON > "$out/cmake.log" 2>&1
timeout 240 ninja -C $b -j16 bwd_tiles_bench > "$out/build.log" 2>&1
echo "build exit $?" | tee "$sum"
grep -E "error" "$out/build.log" | head -5 | tee -a "$sum"
timeout 120 $b/bench/attention/bwd_tiles_bench --n "$ns" > "$out/bwd_tiles.jsonl" 2> "$out/bwd_tiles.err"
echo "bwd_tiles_bench exit $?" | tee -a "$sum"
timeout 120 python3 bench/attention/torch_attention.py --n "$ns" --d 64 > "$out/torch.jsonl" 2> "$out/torch.err"
echo "torch_attention exit $?" | tee -a "$sum"
python3 - "$out/bwd_tiles.jsonl" "$out/torch.jsonl" <<'PY' | tee -a "$sum"
import json, sys
ours = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
torch = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
ref = {}
for t in torch:
    if t.get("op") == "fwd+bwd" and t.get("d") == 64 and t.get("causal", True):
        ref[(t["impl"], t["N"])] = t.get("tflops")
print("%-32s %6s %8s %8s %9s %10s %9s" % ("variant", "N", "bwd ms", "TFLOP/s", "/sdpa", "/cudnn", "rel_l2"))
for o in ours:
    s = ref.get(("torch_sdpa_flash", o["N"]))
    c = ref.get(("torch_cudnn", o["N"]))
    print("%-32s %6d %8.3f %8.1f %9s %10s %9.1e" % (o["impl"], o["N"], o["bwd_ms"], o["fwd_bwd_tflops"],
          "%.2f" % (o["fwd_bwd_tflops"] / s) if s else "-", "%.2f" % (o["fwd_bwd_tflops"] / c) if c else "-",
          o["rel_l2_vs_production"]))
print("torch impls seen:", sorted({(t.get("impl"), t.get("op")) for t in torch})[:8])
PY
