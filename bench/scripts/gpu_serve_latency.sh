#!/usr/bin/env bash
# Serving latency on the H200, in process (the GPU machine has no C++ gRPC,
# so flashtickd cannot be built there): a model from flashtick_make_model (default
# C=128, 2 layers, 2 heads: the default flashtick-tiny's depth, but head dim D = 64,
# as the CUDA attention kernels are built for D ∈ {64, 128} and flashtick-tiny has
# D = 16), timed by serve_latency_inproc on CUDA
# (Transformer::Predict at B = 1, 8, 64 for N = 512, 4096, 23400: host ticks in, host
# probabilities out, synchronised; Transformer::Step per tick over a 23,400-step day)
# beside torch_serve.py (the same weights in PyTorch, bf16, eager; then torch.compile
# at B = 1 under its own time limit). Checks first: CUDA Step vs CUDA full forward
# (2,048 steps, bound 2e-2 in bf16), PyTorch vs our CUDA forward on the same input.
# At most ~6 minutes on a fresh machine (build ≤ 4 min, then stages under their own
# time limits: 100 s, 150 s, 60 s; results are written line by line, so a stage cut
# short keeps what it measured). Results in $OUT (≤ 8 files):
#   serve_latency_summary.txt  read first: stage exits, checks, the side-by-side table
#   inproc.jsonl, torch_eager.jsonl, torch_compile.jsonl  raw JSON lines
#   logs.tgz                   cmake/build/run logs
# The gRPC rows (flashtickd over loopback: serve_latency.py's ModelInfer and TickStream
# figures, and the open-loop load_gen sweep of docs/serving.md "Serving under load") are
# not built here, as this machine has no C++ gRPC: bench/scripts/gpu_serve.sh runs a
# flashtickd packed on the development machine (scripts/pack_server.sh) and calls this
# script afterwards, with the same model flags, when its time budget leaves room
# (docs/serving.md, "The server on a GPU box: one command").
# Usage (repository root, with the carried .deb deps like gpu_all.sh):
#   OUT=dir bash bench/scripts/gpu_serve_latency.sh
# Env: SL_N (default 512,4096,23400), SL_BATCH (1,8,64), SL_REPS (50), SL_TICKS (23400),
#      SL_MODEL (flashtick_make_model flags, default "--width 128 --heads 2 --layers 2").
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tree_commit.sh"  # tree_commit
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=scripts/device_env.sh
source scripts/device_env.sh
out=${OUT:?set OUT to the results folder}
mkdir -p "$out"
r=$(mktemp -d /tmp/gpu_serve_latency.XXXXXX)
summary="$out/serve_latency_summary.txt"
commit=$(tree_commit)
n=${SL_N:-512,4096,23400}
batch=${SL_BATCH:-1,8,64}
reps=${SL_REPS:-50}
ticks=${SL_TICKS:-23400}
model_flags=${SL_MODEL:---width 128 --heads 2 --layers 2}
note() { echo "$*" | tee -a "$summary"; }
stage() { note "== $1 ($(date +%T))"; }
note "commit $commit; gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
note "torch: $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>&1 | tail -1)"

stage build
cmake --preset gpu-kernels -DFLASHTICK_BUILD_TESTS=OFF -DFLASHTICK_BUILD_BENCH=ON > "$r/cmake.log" 2>&1
timeout 240 ninja -C build/gpu-kernels -j16 serve_latency_inproc flashtick_make_model > "$r/build.log" 2>&1
rc=$?; note "build exit $rc"
if [ $rc -ne 0 ]; then grep -E "error" "$r/build.log" | head -10 | tee -a "$summary"; tar czf "$out/logs.tgz" -C "$r" .; exit 1; fi
bin=build/gpu-kernels/bench/serve_latency/serve_latency_inproc
# shellcheck disable=SC2086  # model_flags is a list of flags
build/gpu-kernels/model/tools/flashtick_make_model --out "$r/models" --name flashtick-bench \
  --seed 1 $model_flags > "$r/make_model.log" 2>&1
note "model: $model_flags ($(tail -1 "$r/make_model.log"))"
model="$r/models/flashtick-bench/1"

stage "flashtick in process (CUDA)"
timeout 100 "$bin" --model-dir "$model" --device cuda --n "$n" --batch "$batch" --reps "$reps" \
  --warmup 5 --ticks "$ticks" --check-steps 2048 --dump "$r/check" > "$out/inproc.jsonl" 2> "$r/inproc.err"
note "serve_latency_inproc exit $?"; tail -3 "$r/inproc.err" >> "$summary"

stage "PyTorch eager (bf16)"
timeout 150 python3 bench/serve_latency/torch_serve.py --model-dir "$model" --device cuda \
  --n "$n" --batch "$batch" --reps "$reps" --warmup 5 --ticks "$ticks" --compare "$r/check" \
  > "$out/torch_eager.jsonl" 2> "$r/torch_eager.err"
note "torch eager exit $?"; tail -3 "$r/torch_eager.err" >> "$summary"

stage "torch.compile (B=1)"
timeout 60 python3 bench/serve_latency/torch_serve.py --model-dir "$model" --device cuda \
  --n "$n" --batch 1 --reps "$reps" --warmup 3 --ticks 0 --no-eager \
  > "$out/torch_compile.jsonl" 2> "$r/torch_compile.err"
note "torch.compile exit $? (124: ran out of its 60 s; the shapes it finished are kept)"; tail -3 "$r/torch_compile.err" >> "$summary"

stage table
python3 bench/serve_latency/latency_table.py "$out/inproc.jsonl" "$out/torch_eager.jsonl" \
  "$out/torch_compile.jsonl" 2>&1 | tee -a "$summary"
tar czf "$out/logs.tgz" -C "$r" --exclude=models --exclude='check.*' .
