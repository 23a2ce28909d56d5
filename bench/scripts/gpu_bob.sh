#!/usr/bin/env bash
# On the GPU machine: builds the CUDA attention backward-over-backward, runs
# its GPU tests, then the bob benchmark beside PyTorch's math double backward, and the
# bf16-vs-float64 precision table. Everything lands in $OUT:
#   bob_build.log, bob_ptxas.txt              build output, register/spill report
#   bob_gpu_test.log, bob_parity_gpu.log      GPU tests (vs CPU f64 + JAX; parity harness)
#   bob-<gpu>-<date>.jsonl                    bench lines: ours, torch_math, precision
#   bob_bench.log, torch_bob*.log             stderr of the benchmark runs
# Usage (repository root):  OUT=/some/dir bench/scripts/gpu_bob.sh
# Env: FLASHTICK_DEPS_PREFIX (carried Abseil/gtest/json, appended to CMAKE_PREFIX_PATH),
#      BOB_STAGES (default build,test,bench: run them in separate calls if one call's
#      time is short; the build folder persists), BOB_N (comma list of N, default
#      2048 … 262144), BOB_ARCH (default 90), BOB_BUILD (build folder).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tree_commit.sh"  # tree_commit
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:?set OUT to the results folder}
build=${BOB_BUILD:-$root/build/gpu-bob}
arch=${BOB_ARCH:-90}
stages=${BOB_STAGES:-build,test,bench}
ns=${BOB_N:-2048,4096,8192,16384,23400,32768,65536,131072,262144}
python=$(command -v python3)
mkdir -p "$out"
has_stage() { [[ ",$stages," == *",$1,"* ]]; }

if has_stage build; then
  prefix=${CMAKE_PREFIX_PATH:-}
  if [ -n "${FLASHTICK_DEPS_PREFIX:-}" ]; then prefix="${prefix:+$prefix;}$FLASHTICK_DEPS_PREFIX"; fi
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHTICK_WITH_CUDA=ON \
    -DFLASHTICK_WITH_SERVER=OFF -DCMAKE_CUDA_ARCHITECTURES="$arch" \
    -DFLASHTICK_PYTHON="$python" -DCMAKE_PREFIX_PATH="$prefix" > "$out/bob_cmake.log" 2>&1 \
    || { tail -40 "$out/bob_cmake.log"; exit 1; }
  ninja -C "$build" -j16 -v bob_gpu_test parity_test bob_bench > "$out/bob_build.log" 2>&1 \
    || { grep -B2 -A12 -m5 "error" "$out/bob_build.log"; exit 1; }
  grep -E "bob_pass|spill" "$out/bob_build.log" > "$out/bob_ptxas.txt" || true
  echo "build ok"
fi

if has_stage test; then
  JAX_PLATFORMS=cpu "$build/tests/bob/bob_gpu_test" > "$out/bob_gpu_test.log" 2>&1 \
    || echo "bob_gpu_test FAILED (see bob_gpu_test.log)"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" "$out/bob_gpu_test.log" | head -20 || true
  "$build/tests/parity/parity_test" --gtest_filter='Parity/Cuda*bwd_bwd*' \
    > "$out/bob_parity_gpu.log" 2>&1 || echo "bob parity FAILED (see bob_parity_gpu.log)"
  grep -E "^attention_bwd_bwd" "$out/bob_parity_gpu.log" | tail -40 || true
fi

if has_stage bench; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_' | tr -cd '[:alnum:]_-')
  commit=$(tree_commit "$root")
  jsonl="$out/bob-${gpu}-$(date +%F).jsonl"
  dump=$(mktemp -d /tmp/bob_dump.XXXXXX)
  trap 'rm -rf "$dump"' EXIT
  "$build/bench/bob/bob_bench" --n "$ns" --json "$jsonl" --commit "$commit" \
    --dump-dir "$dump" --dump-max-n 32768 2> "$out/bob_bench.log" \
    || echo "bob_bench FAILED (see bob_bench.log)"
  "$python" "$root/bench/bob/torch_bob.py" prec --n "$ns" --dump-dir "$dump" --json "$jsonl" \
    --commit "$commit" 2> "$out/torch_bob_prec.log" || echo "precision table FAILED (torch_bob_prec.log)"
  "$python" "$root/bench/bob/torch_bob.py" time --n "$ns" --json "$jsonl" --commit "$commit" \
    2> "$out/torch_bob.log" || echo "torch timing FAILED (see torch_bob.log)"
  echo "results: $jsonl"
fi
