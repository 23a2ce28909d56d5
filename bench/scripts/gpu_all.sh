#!/usr/bin/env bash
# Everything GPU in one device call (about 9 minutes on a fresh H200 machine): build once
# (gpu-kernels preset: no gRPC), run every gpu-labelled test, then the attention,
# backward-over-backward and training-step benchmarks beside PyTorch, each stage under
# its own time limit. Results and logs land in $OUT/gpu_all.tgz (the device tool returns
# at most 8 files). Usage, from the repository root:  OUT=dir bench/scripts/gpu_all.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tree_commit.sh"  # tree_commit
cd "$(dirname "$0")/../.."
source scripts/device_env.sh
out=${OUT:?}
r=$(mktemp -d /tmp/gpu_all.XXXXXX)
commit=$(tree_commit)
stage() { echo "== $1 ($(date +%T))"; }

stage build
cmake --preset gpu-kernels -DFLASHTICK_BUILD_TESTS=ON -DFLASHTICK_BUILD_BENCH=ON > "$r/cmake.log" 2>&1
ninja -C build/gpu-kernels -k 0 -j16 > "$r/build.log" 2>&1; echo "build exit $?"
grep -E "error:" "$r/build.log" | head -5

stage tests
(cd build/gpu-kernels && timeout 200 ctest -L gpu -j 4 --timeout 190 --output-on-failure) \
  > "$r/ctest_gpu.log" 2>&1
grep -E "tests passed|\*\*\*|Not Run" "$r/ctest_gpu.log" | head -12

stage attention
OUT=$r ATTN_BUILD=$PWD/build/gpu-kernels ATTN_N=${ATTN_N:-8192,16384,23400,65536,262144} \
  timeout 150 bash bench/scripts/gpu_attention.sh bench > "$r/attention_run.log" 2>&1
grep -E "fwd" "$r/attention_ratios.txt" | head -24

stage bob
bobn=${BOB_N:-16384,23400,32768,262144}
timeout 60 build/gpu-kernels/bench/bob/bob_bench --n "$bobn" --json "$r/bob.jsonl" \
  --commit "$commit" > "$r/bob_bench.log" 2>&1; echo "bob_bench exit $?"
grep -E '"impl":"flashtick' "$r/bob.jsonl" | python3 -c '
import json,sys
for l in sys.stdin:
    d=json.loads(l); print("bob N=%d %.2f ms extra %d B fwd+bwd %.2f ms" % (d["N"], d["ms"], d.get("peak_extra_bytes",0), d.get("fwd_bwd_ms",0)))'

stage train_step
OUT=$r TS_BUILD=$PWD/build/gpu-kernels TS_N=${TS_N:-512,4096,23400} TS_STEPS=${TS_STEPS:-4} \
  TS_CURVE_STEPS=${TS_CURVE_STEPS:-30} timeout 170 bash bench/scripts/gpu_train_step.sh bench torch plot \
  > "$r/train_step_run.log" 2>&1; echo "train_step exit $?"
cat "$r/train_step_summary.txt" 2>/dev/null | head -40

# The training-curve dumps are large; the plot and JSON lines stay.
tar czf "$out/gpu_all.tgz" --exclude=train_step_curve_data -C "$r" .
