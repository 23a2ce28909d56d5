#!/usr/bin/env bash
# On the GPU machine: builds model_decode_state_test with CUDA and runs it, so
# DecodeStateTest.CudaBf16StepsMatchPredict (Transformer::Step through the CUDA
# attention_decode, rope into the cache, bf16) is checked against Predict on CUDA, and
# DecodeStateTest.CudaBf16CapturedStepsMatchPredict the same steps replayed from a CUDA
# graph per cache capacity (DecodeOptions::capture, docs/serving.md "Decode graphs").
# The CPU cases run too. Results in $OUT:
#   decode_state_summary.txt   read first: build status and the gtest summary lines
#   decode_state_test.log      the full test output (max |step − predict| per case)
#   decode_state_build.log, decode_state_cmake.log
# Usage (repository root): OUT=/some/dir bench/scripts/gpu_decode_state.sh
# Env: FLASHTICK_DEPS_PREFIX (appended to CMAKE_PREFIX_PATH), DS_ARCH (default 90),
#      DS_BUILD (build dir, default build/gpu-decode-state).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:?set OUT to the results folder}
build=${DS_BUILD:-$root/build/gpu-decode-state}
arch=${DS_ARCH:-90}
mkdir -p "$out"
summary="$out/decode_state_summary.txt"
prefix=${CMAKE_PREFIX_PATH:-}
if [ -n "${FLASHTICK_DEPS_PREFIX:-}" ]; then prefix="${prefix:+$prefix;}$FLASHTICK_DEPS_PREFIX"; fi
note() { echo "$*" | tee -a "$summary"; }
note "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
if ! cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHTICK_WITH_CUDA=ON \
    -DFLASHTICK_WITH_SERVER=OFF -DCMAKE_CUDA_ARCHITECTURES="$arch" \
    ${prefix:+-DCMAKE_PREFIX_PATH="$prefix"} > "$out/decode_state_cmake.log" 2>&1; then
  note "cmake FAILED (see decode_state_cmake.log)"; exit 1
fi
if ! ninja -C "$build" model_decode_state_test > "$out/decode_state_build.log" 2>&1; then
  note "build FAILED (see decode_state_build.log)"; tail -20 "$out/decode_state_build.log" >> "$summary"
  exit 1
fi
"$build/tests/model/model_decode_state_test" > "$out/decode_state_test.log" 2>&1
rc=$?
grep -E "max \||SKIP|OK \]|FAILED|PASSED|Failure" "$out/decode_state_test.log" >> "$summary"
note "model_decode_state_test exit code: $rc"
exit $rc
