#!/usr/bin/env bash
# Issue 10 on the GPU machine: builds the CUDA attention backward-over-backward, runs
# its GPU tests (label gpu) and CPU tests, then the bob benchmark beside PyTorch's math
# double backward, and the bf16-vs-float64 precision table. Everything lands in $OUT:
#   $OUT/bob_tests.log                        ctest output (gpu + cpu bob tests)
#   $OUT/bob-<gpu>-<date>.jsonl               bench lines: ours, torch_math, precision
#   $OUT/bob_bench.log, $OUT/torch_bob.log    stderr of the two runs
# Usage (repository root):  OUT=/some/dir bench/scripts/gpu_bob.sh
# Env: FLASHTICK_DEPS_PREFIX (carried Abseil/gtest/json, appended to CMAKE_PREFIX_PATH),
#      BOB_N (comma list of N, default 2048 … 262144), BOB_SKIP_TESTS=1, BOB_ARCH (90).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:?set OUT to the results folder}
build=${BOB_BUILD:-$root/build/gpu-bob}
arch=${BOB_ARCH:-90}
ns=${BOB_N:-2048,4096,8192,16384,23400,32768,65536,131072,262144}
python=$(command -v python3)
mkdir -p "$out"
prefix=${CMAKE_PREFIX_PATH:-}
if [ -n "${FLASHTICK_DEPS_PREFIX:-}" ]; then prefix="${prefix:+$prefix;}$FLASHTICK_DEPS_PREFIX"; fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHTICK_WITH_CUDA=ON \
  -DFLASHTICK_WITH_SERVER=OFF -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DFLASHTICK_PYTHON="$python" -DCMAKE_PREFIX_PATH="$prefix" > "$out/bob_cmake.log" 2>&1 \
  || { tail -40 "$out/bob_cmake.log"; exit 1; }
ninja -C "$build" -j16 bob_gpu_test bob_cpu_test bob_oracle_test bob_fd_test bob_bench \
  > "$out/bob_build.log" 2>&1 || { grep -B2 -A12 -m5 "error" "$out/bob_build.log"; exit 1; }
grep -E "spill|Used [0-9]+ registers" "$out/bob_build.log" > "$out/bob_ptxas.txt" || true

if [ "${BOB_SKIP_TESTS:-0}" != 1 ]; then
  (cd "$build" && JAX_PLATFORMS=cpu ctest -R '^bob_' --output-on-failure -j4 --timeout 900) \
    > "$out/bob_tests.log" 2>&1 || echo "bob tests FAILED (see bob_tests.log)"
  grep -E "tests passed|tests failed|Passed|Failed|\*\*\*" "$out/bob_tests.log" | tail -20 || true
  "$build/tests/bob/bob_gpu_test" > "$out/bob_gpu_test.log" 2>&1 || true
fi

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_' | tr -cd '[:alnum:]_-')
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
jsonl="$out/bob-${gpu}-$(date +%F).jsonl"
dump=$(mktemp -d /tmp/bob_dump.XXXXXX)
trap 'rm -rf "$dump"' EXIT

"$build/bench/bob/bob_bench" --n "$ns" --json "$jsonl" --commit "$commit" \
  --dump-dir "$dump" --dump-max-n 32768 2> "$out/bob_bench.log" || echo "bob_bench FAILED (see bob_bench.log)"
"$python" "$root/bench/bob/torch_bob.py" prec --n "$ns" --dump-dir "$dump" --json "$jsonl" \
  --commit "$commit" 2> "$out/torch_bob_prec.log" || echo "precision table FAILED (torch_bob_prec.log)"
"$python" "$root/bench/bob/torch_bob.py" time --n "$ns" --json "$jsonl" --commit "$commit" \
  2> "$out/torch_bob.log" || echo "torch timing FAILED (see torch_bob.log)"
echo "results: $jsonl"
