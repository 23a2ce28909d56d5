#!/usr/bin/env bash
# cuDNN attention backend on the GPU machine (docs/kernels/cudnn.md): one build with the
# cuDNN backend on, then stages under one deadline, each writing to $OUT as it goes:
#   build   configure (the gpu-kernels preset) pointing CMake at the carried
#           cudnn-frontend header and at the cuDNN wheel found beside PyTorch; build the
#           tests and benches below
#   test    cudnn_attention_test (cuDNN vs CPU fp64 and ours, mixed fwd/bwd, our BoB on
#           cuDNN's forward), cuda_ops_test, bob_gpu_test; the attention parity harness
#           and the JAX oracle once per implementation (FLASHTICK_ATTENTION_IMPL=flash,
#           cudnn); compute-sanitizer memcheck on the cuDNN test (CUDNN_SANITIZE=1)
#   bench   bench_attention --impl flash,cudnn,auto beside PyTorch's SDPA flash and
#           cuDNN (torch_attention.py), and the ratio table (merge_cudnn.py)
# $OUT gets: cudnn_summary.txt (read first), cudnn_cmake.log, cudnn_build.log,
#   cudnn_test.log, cudnn_parity_{flash,cudnn}.log, cudnn_oracle_{flash,cudnn}.log,
#   cudnn_sanitizer.log, cudnn-<gpu>-<date>.jsonl (commit under bench/results/),
#   cudnn_ratios.txt, attention_impl_cache.json (auto's measured winners).
# Usage (repository root):  OUT=/some/dir bench/scripts/gpu_cudnn.sh [build] [test] [bench]
# Needs, carried with the working tree: .carry/cudnn_frontend/include (the header-only
# cudnn-frontend; scripts/carry_cudnn_frontend.sh fills it), and .carry/debs when the
# machine lacks Abseil/gtest/json (scripts/device_env.sh).
# Env: CUDNN_DEADLINE (seconds for all stages, default 560), CUDNN_ARCH (default 90),
#      CUDNN_BUILD (build dir), CUDNN_N / CUDNN_D (bench lists), CUDNN_HEADS (default 12),
#      CUDNN_ROOT (a cuDNN 9 with include/ and lib/; default: found beside PyTorch),
#      CUDNN_ROUNDS (bench_attention --rounds, default 3), CUDNN_IMPLS (bench_attention
#      --impl, default flash,cudnn,auto), CUDNN_SANITIZE=1, CUDNN_TARGETS (what the build stage builds; default the tests and
#      bench above, e.g. train_step_bench for bench/scripts/gpu_train_step.sh with TS_BUILD).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tree_commit.sh"  # tree_commit
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
[ -f scripts/device_env.sh ] && source scripts/device_env.sh
out=${OUT:?set OUT to the results folder}
mkdir -p "$out"
start=$(date +%s)
deadline=$((start + ${CUDNN_DEADLINE:-560}))
left() { echo $((deadline - $(date +%s))); }
build=${CUDNN_BUILD:-$root/build/gpu-kernels}
arch=${CUDNN_ARCH:-90}
ns=${CUDNN_N:-4096,8192,23400,65536,262144}
ds=${CUDNN_D:-64,128}
heads=${CUDNN_HEADS:-12}
python=$(command -v python3)
stages=${*:-build test bench}
summary="$out/cudnn_summary.txt"
note() { echo "$*" | tee -a "$summary"; }
note "== gpu_cudnn.sh $(date -u +%FT%TZ) commit $(tree_commit)"

# cuDNN 9: $CUDNN_ROOT, else the toolkit's, else the wheel beside PyTorch
# (nvidia-cudnn-cu13 / -cu12: site-packages/nvidia/cudnn/{include,lib}).
cudnn_lib="" cudnn_inc=""
if [ -n "${CUDNN_ROOT:-}" ]; then
  cudnn_lib=$(ls "$CUDNN_ROOT"/lib*/libcudnn.so.9 2>/dev/null | head -1)
  cudnn_inc="$CUDNN_ROOT/include"
elif ls /usr/local/cuda/lib*/libcudnn.so.9 > /dev/null 2>&1 && [ -f /usr/local/cuda/include/cudnn.h ]; then
  cudnn_lib=$(ls /usr/local/cuda/lib*/libcudnn.so.9 | head -1)
  cudnn_inc=/usr/local/cuda/include
else
  sp=$("$python" -c 'import site,sys; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null)
  for d in $sp; do
    [ -d "$d/nvidia" ] || continue
    cudnn_lib=$(find "$d/nvidia" -name 'libcudnn.so.9' 2>/dev/null | head -1)
    if [ -n "$cudnn_lib" ]; then
      cudnn_inc=$(dirname "$(dirname "$cudnn_lib")")/include
      break
    fi
  done
fi
if [ -n "$cudnn_lib" ] && [ ! -f "$cudnn_inc/cudnn.h" ] && [ -f "$root/.carry/cudnn_frontend/cudnn_include/cudnn.h" ]; then
  cudnn_inc="$root/.carry/cudnn_frontend/cudnn_include"  # carried cuDNN 9 headers
fi
if [ -z "$cudnn_lib" ] || [ ! -f "$cudnn_inc/cudnn.h" ]; then
  note "cuDNN 9 not found (lib '$cudnn_lib', include '$cudnn_inc'); set CUDNN_ROOT"
  exit 1
fi
cudnn_libdir=$(dirname "$cudnn_lib")
# libcudnn.so.9 loads its engine libraries (libcudnn_graph, _engines_*) by name.
export LD_LIBRARY_PATH="$cudnn_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
frontend="$root/.carry/cudnn_frontend/include"
if [ ! -f "$frontend/cudnn_frontend.h" ]; then
  frontend=$("$python" -c "import importlib.metadata as m; d=m.distribution('nvidia-cudnn-frontend'); f=[p for p in (d.files or []) if str(p).endswith('include/cudnn_frontend.h')]; print(d.locate_file(f[0]).parent.resolve())" 2>/dev/null)
fi
if [ ! -f "$frontend/cudnn_frontend.h" ]; then
  note "cudnn_frontend.h not found: carry .carry/cudnn_frontend/include (scripts/carry_cudnn_frontend.sh)"
  exit 1
fi
note "cuDNN $cudnn_lib; headers $cudnn_inc; frontend $frontend"
prefix=${CMAKE_PREFIX_PATH:-}
if [ -n "${FLASHTICK_DEPS_PREFIX:-}" ]; then prefix="${prefix:+$prefix;}$FLASHTICK_DEPS_PREFIX"; fi

if [[ " $stages " == *" build "* ]]; then
  cmake --preset gpu-kernels -B "$build" -DCMAKE_CUDA_ARCHITECTURES="$arch" -DFLASHTICK_PYTHON="$python" \
    -DFLASHTICK_CUDNN_FRONTEND_INCLUDE="$frontend" -DFLASHTICK_CUDNN_INCLUDE="$cudnn_inc" \
    -DFLASHTICK_CUDNN_LIBRARY="$cudnn_lib" -DCMAKE_PREFIX_PATH="$prefix" > "$out/cudnn_cmake.log" 2>&1 \
    || { tail -40 "$out/cudnn_cmake.log"; note "cmake FAILED"; exit 1; }
  grep "cuDNN attention backend" "$out/cudnn_cmake.log" | tee -a "$summary"
  grep -q "cuDNN attention backend: on" "$out/cudnn_cmake.log" || { note "cuDNN backend is off: stop"; exit 1; }
  timeout $(( $(left) - 30 )) ninja -C "$build" -j16 ${CUDNN_TARGETS:-cudnn_attention_test cuda_ops_test \
    bob_gpu_test parity_test attention_oracle_test bench_attention} > "$out/cudnn_build.log" 2>&1 \
    || { grep -B2 -A12 -m5 "error" "$out/cudnn_build.log"; note "build FAILED (or out of time)"; exit 1; }
  note "build OK ($(( $(date +%s) - start )) s)"
fi

if [[ " $stages " == *" test "* ]]; then
  export FLASHTICK_ATTENTION_CACHE=off  # tests measure afresh
  for t in cudnn_attention_test cuda_ops_test; do
    timeout $(( $(left) > 150 ? 120 : 30 )) "$build/tests/cuda_ops/$t" >> "$out/cudnn_test.log" 2>&1
    note "$t: exit $? ($(grep -E '^\[  PASSED|^\[  FAILED' "$out/cudnn_test.log" | tail -1))"
  done
  grep -E "Failure|Expected|Which is|auto chose" "$out/cudnn_test.log" | head -30 >> "$summary"
  timeout 90 "$build/tests/bob/bob_gpu_test" > "$out/cudnn_bob_gpu.log" 2>&1
  note "bob_gpu_test: exit $?"
  for impl in flash cudnn; do
    # 240 s: on the H200 the flash run takes ~90 s and the cuDNN run longer (a graph is
    # built per shape); 90 s cut the cuDNN run after 97 of 147 cases on 2026-12-02.
    FLASHTICK_ATTENTION_IMPL=$impl timeout 240 "$build/tests/parity/parity_test" \
      --gtest_filter='Parity/Cuda*.Case/*attention*' \
      > "$out/cudnn_parity_$impl.log" 2>&1
    grep -q '^\[==========\] .* ran\.' "$out/cudnn_parity_$impl.log" \
      || note "parity ($impl): CUT SHORT (timeout) after $(grep -c '^\[ RUN' "$out/cudnn_parity_$impl.log") cases started"
    note "parity ($impl): $(grep -c ': OK' "$out/cudnn_parity_$impl.log") OK," \
         "$(grep -c ': SKIP' "$out/cudnn_parity_$impl.log") SKIP, $(grep -c ': FAIL' "$out/cudnn_parity_$impl.log") FAIL"
    note "  of which ran cuDNN (kernel path cudnn_sdpa_*): $(grep -c 'cudnn_sdpa.*: OK' "$out/cudnn_parity_$impl.log") OK"
    grep ': FAIL' "$out/cudnn_parity_$impl.log" | head -20 >> "$summary"
    (cd "$build/tests/oracle" && FLASHTICK_ATTENTION_IMPL=$impl JAX_PLATFORMS=cpu timeout 90 ./attention_oracle_test) \
      > "$out/cudnn_oracle_$impl.log" 2>&1 \
      && note "oracle ($impl, CPU + CUDA vs JAX fp64): PASSED" \
      || { note "oracle ($impl): FAILED or timed out"; grep -E "Failure|Expected|Which is" "$out/cudnn_oracle_$impl.log" | head -10 >> "$summary"; }
  done
  if [ "${CUDNN_SANITIZE:-0}" = 1 ] && [ "$(left)" -gt 150 ]; then
    timeout 140 compute-sanitizer --tool memcheck "$build/tests/cuda_ops/cudnn_attention_test" \
      --gtest_filter='*BackwardOverBackward*' > "$out/cudnn_sanitizer.log" 2>&1
    note "compute-sanitizer memcheck: $(grep -E 'ERROR SUMMARY' "$out/cudnn_sanitizer.log" | tail -1)"
  fi
fi

if [[ " $stages " == *" bench "* ]]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_' | tr -cd '[:alnum:]_-')
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
  commit=$(tree_commit "$root")
  jsonl="$out/cudnn-${gpu}-$(date +%F).jsonl"
  echo "{\"bench\":\"meta\",\"gpu\":\"$gpu\",\"driver\":\"$driver\",\"commit\":\"$commit\",\"date\":\"$(date -u +%FT%TZ)\",\"cudnn\":\"$cudnn_lib\"}" > "$jsonl"
  # auto writes its measured winners here (kernels/attention_dispatch.h).
  export FLASHTICK_ATTENTION_CACHE="$out/attention_impl_cache.json"
  budget=$(( $(left) - 20 ))
  timeout $(( budget * 3 / 5 )) "$build/bench/attention/bench_attention" --impl "${CUDNN_IMPLS:-flash,cudnn,auto}" \
    --n "$ns" --d "$ds" --heads "$heads" --commit "$commit" --rounds "${CUDNN_ROUNDS:-3}" \
    > "$out/cudnn_ours.jsonl" 2> "$out/cudnn_bench.log"
  note "bench_attention: exit $? ($(grep -c '"ms"' "$out/cudnn_ours.jsonl") rows)"
  grep -E "check|auto:|FAILED" "$out/cudnn_bench.log" | head -40 >> "$summary"
  timeout $(( $(left) - 10 )) "$python" "$root/bench/attention/torch_attention.py" --n "$ns" --d "$ds" \
    --heads "$heads" --commit "$commit" > "$out/cudnn_torch.jsonl" 2> "$out/cudnn_torch.log" \
    || note "torch_attention.py FAILED or timed out (see cudnn_torch.log)"
  cat "$out/cudnn_ours.jsonl" "$out/cudnn_torch.jsonl" >> "$jsonl"
  "$python" "$root/bench/attention/merge_cudnn.py" "$out/cudnn_ours.jsonl" "$out/cudnn_torch.jsonl" \
    > "$out/cudnn_ratios.txt" 2>&1
  cat "$out/cudnn_ratios.txt" | tee -a "$summary"
  echo "results: $jsonl"
fi
note "== done in $(( $(date +%s) - start )) s"
