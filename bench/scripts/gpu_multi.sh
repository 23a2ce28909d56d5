#!/usr/bin/env bash
# Data parallelism (docs/multi_gpu.md) on a 2-GPU machine (nvidia-h200-x2), about 6 minutes
# (at most 10): builds the data-parallel targets (gpu-kernels preset: no gRPC), runs the
# data-parallel tests (CPU replicas, then 2 GPUs through NCCL vs 1 GPU), then the scaling
# benchmark of one arm at N = 23,400 (global batch 2: 1 GPU vs 2 GPUs, AdamW and Sophia-H)
# beside PyTorch (1 GPU vs DistributedDataParallel, AdamW) measured in the same run, and
# 2 processes (one GPU each, ncclCommInitRank) against the in-process 2-GPU run's losses
# (the multi_process stage; reported, not asserted). NCCL is the pip
# package nvidia-nccl-cu13 (loaded with dlopen through FLASHTICK_NCCL_LIBRARY).
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0): the machine owner requires it.
# Output: $OUT/gpu_multi_summary.txt (read first) and $OUT/gpu_multi.tgz (logs, JSON).
# Usage, from the repository root:  OUT=dir bench/scripts/gpu_multi.sh
# Env: MG_N (23400), MG_BATCH (2), MG_STEPS (6), MG_ARCH (90).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tree_commit.sh"  # tree_commit
cd "$(dirname "$0")/../.."
source scripts/device_env.sh
export NCCL_NVLS_ENABLE=0
out=${OUT:?set OUT to the results folder}
mkdir -p "$out"
r=$(mktemp -d /tmp/gpu_multi.XXXXXX)
summary="$out/gpu_multi_summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }
stage() { echo "== $1 ($(date +%T))" | tee -a "$summary"; }
commit=$(tree_commit)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '_')
n=${MG_N:-23400}
batch=${MG_BATCH:-2}
steps=${MG_STEPS:-6}
build=build/gpu-kernels
note "commit $commit, $(nvidia-smi -L 2>/dev/null | wc -l) GPU(s): ${gpu:-none}; NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
nvidia-smi topo -m > "$r/topo.txt" 2>&1

stage nccl
if [ -z "${FLASHTICK_NCCL_LIBRARY:-}" ]; then
  ncdir=$(python3 -c 'import nvidia.nccl as m, os; print(list(m.__path__)[0])' 2>/dev/null)
  if [ -n "$ncdir" ] && [ -f "$ncdir/lib/libnccl.so.2" ]; then
    export FLASHTICK_NCCL_LIBRARY="$ncdir/lib/libnccl.so.2"
  fi
fi
note "FLASHTICK_NCCL_LIBRARY=${FLASHTICK_NCCL_LIBRARY:-<unset: libnccl.so.2 on the loader path>}"

stage build
cmake --preset gpu-kernels -DFLASHTICK_BUILD_TESTS=ON -DFLASHTICK_BUILD_BENCH=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${MG_ARCH:-90}" > "$r/cmake.log" 2>&1 || note "cmake FAILED"
timeout 300 ninja -C "$build" -j16 parallel_data_parallel_test parallel_data_parallel_gpu_test \
  parallel_gpu_scheduler_test parallel_tcp_store_test parallel_tcp_reduce_group_test \
  parallel_process_group_config_test parallel_process_group_trainer_test data_parallel_bench \
  data_parallel_rank > "$r/build.log" 2>&1
note "build exit $?"
grep -E "error:" "$r/build.log" | head -5 | tee -a "$summary"

stage tests
(cd "$build" && timeout 90 ctest -R '^parallel_' --timeout 85 --output-on-failure -V) \
  > "$r/ctest.log" 2>&1
grep -E "tests passed|\*\*\*|Not Run|SKIPPED|Skipped|loss .* -> |Failure|Expected|Which is" "$r/ctest.log" \
  | head -20 | tee -a "$summary"

stage bench
timeout 120 "$build/bench/data_parallel/data_parallel_bench" --device cuda --n "$n" --batch "$batch" \
  --replicas 1,2 --warmup 2 --steps "$steps" --gpu "${gpu:-unknown}" --commit "$commit" \
  > "$r/ours.jsonl" 2> "$r/ours.err"
note "data_parallel_bench exit $?"

stage torch
timeout 90 python3 bench/data_parallel/torch_ddp.py --n "$n" --batch "$batch" --replicas 1,2 \
  --warmup 2 --steps "$steps" --commit "$commit" > "$r/torch.jsonl" 2> "$r/torch.err"
note "torch_ddp exit $?"
tail -3 "$r/torch.err" | grep -iE "error|Traceback" | tee -a "$summary"

stage multi_process
# Two processes, one GPU each (rank 1 on GPU 1 via its rank), vs the in-process 2-GPU run.
rank_bin="$build/bench/data_parallel/data_parallel_rank"
mp=(--device cuda --n 2048 --width 256 --heads 4 --layers 2 --batch 2 --steps 5 --bucket-kib 25600)
timeout 120 "$rank_bin" --world-size 1 --replicas 2 "${mp[@]}" > "$r/mp_ref.jsonl" 2> "$r/mp_ref.err"
note "in-process 2-GPU run exit $?"
rm -f "$r/mp_port"
timeout 120 "$rank_bin" --world-size 2 --rank 0 --master-port 0 --port-file "$r/mp_port" "${mp[@]}" \
  > "$r/mp_rank0.jsonl" 2> "$r/mp_rank0.err" &
mp_pid=$!
for _ in $(seq 300); do [ -f "$r/mp_port" ] && break; sleep 0.1; done
timeout 120 "$rank_bin" --world-size 2 --rank 1 --master-port "$(cat "$r/mp_port" 2>/dev/null || echo 1)" \
  "${mp[@]}" > "$r/mp_rank1.jsonl" 2> "$r/mp_rank1.err"
note "rank 1 exit $?"
wait "$mp_pid"
note "rank 0 exit $?"
python3 - "$r/mp_ref.jsonl" "$r/mp_rank0.jsonl" "$r/mp_rank1.jsonl" <<'PY' | tee -a "$summary"
import json, sys
runs = []
for path in sys.argv[1:]:
    losses, err = [], None
    for line in open(path):
        if line.startswith("{"):
            d = json.loads(line)
            err = d.get("error", err)
            if "loss" in d:
                losses.append(d["loss"])
    runs.append((path.rsplit("/", 1)[-1], losses, err))
ref = runs[0][1]
for name, losses, err in runs:
    if err or not losses:
        print("%s: ERROR %s" % (name, (err or "no steps")[:200]))
        continue
    diff = max((abs(a - b) for a, b in zip(losses, ref)), default=float("nan"))
    print("%s: losses %s; max |loss - in-process| %.3g%s" % (
        name, " ".join("%.6f" % x for x in losses), diff, " (bitwise equal)" if losses == ref else ""))
PY

stage table
python3 - "$r/ours.jsonl" "$r/torch.jsonl" <<'PY' | tee -a "$summary"
import json, sys
rows = []
for path in sys.argv[1:]:
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            rows.append(json.loads(line))
print("%-9s %-15s %2s %6s %10s %12s %7s %9s %s" % ("optimizer", "impl", "R", "N", "ms/step", "tokens/s",
                                                   "eff", "loss", "buckets(early/late)"))
for d in rows:
    if "error" in d:
        print("%-9s %-15s %2s ERROR %s" % (d.get("op", "?"), d.get("impl", "?"), d.get("replicas", "?"), d["error"][:200]))
        continue
    eff = d.get("scaling_efficiency")
    bk = "%s/%s" % (d["buckets_launched_during_backward"], d["buckets_launched_after"]) if "buckets" in d else ""
    print("%-9s %-15s %2d %6d %10.2f %12.0f %7s %9.5f %s" % (d["op"], d["impl"], d["replicas"], d["N"], d["ms"],
          d["tokens_per_s"], "%.3f" % eff if eff else "-", d.get("final_loss", 0), bk))
PY

cp "$summary" "$r/"
tar czf "$out/gpu_multi.tgz" -C "$r" .
echo "results: $out/gpu_multi_summary.txt, $out/gpu_multi.tgz"
