#!/usr/bin/env bash
# The sanitizer stage of the test suite, run by scripts/test.sh after the main
# suite: one clang build (CMakePresets.json `fuzz`: CPU only, AddressSanitizer +
# UndefinedBehaviorSanitizer, -O1) of the libraries, the tests and the libFuzzer targets,
# then ctest of every cpu-labelled test in it (the fuzz targets for
# FLASHTICK_FUZZ_SECONDS each over their seed corpus and crash regressions) except:
#   parity_cpu   the whole CPU parity table ran past 4 minutes under ASan on 2 cores (the
#       clean-clone run of 2026-11-30); its CPU kernels run under the sanitizers in the ops,
#       grad and attention unit tests
#   sweep_planted_test, research_real_data_test, sweep_usdchf_test   minutes of training
#       whose code paths sweep_resume_test, sweep_config_test and the research unit
#       tests already run under the sanitizers
#   bob_oracle_test, bob_verify_derivation, train_model_oracle_test,
#   grad_train_ops_jax_test, attention_oracle_cpu, research_stats_oracle_test
#       time spent in JAX/NumPy (Python, not instrumented); the C++ they check runs
#       under the sanitizers in the ops, grad, train and attention unit tests
#   deploy_*   check files (Dockerfile, k8s, compose, dashboards) and a container
#       start, no C++ of ours beyond e2e_serving's
#   e2e_serving   predicts full 23,400-step days; under ASan flashtickd spent over 15
#       CPU minutes in it. The server's paths run under the sanitizers in e2e_overload,
#       e2e_crash, security_test, server_unit_test and experiments_service_test
#   flash_emu_test, bob_emu_test   the CUDA kernels on the CPU emulator: under clang's
#       ASan at -O1 their kernel templates took 1,055 s and 223 s of one core to compile
#       and 614 s to run (the clean-clone run of 2026-12-06), a third of the stage. They
#       run in the main suite; the same kernels' memory accesses are checked on the GPU by
#       compute-sanitizer memcheck and racecheck (bench/scripts/gpu_attention.sh)
#   model_transformer_day_test   one full 23,400-step forward whose point is peak memory
#       (ASan's redzones and quarantine make that figure meaningless); it ran past its
#       20-minute timeout under ASan in the clean-clone run of 2026-11-30. The model's
#       forward runs under the sanitizers in model_transformer_test at short N
# Ends with ctest's summary line. Usage: scripts/sanitize.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${FLASHTICK_JOBS:-$(nproc)}
skip='^(parity_cpu|sweep_planted_test|research_real_data_test|sweep_usdchf_test|bob_oracle_test|bob_verify_derivation|train_model_oracle_test|grad_train_ops_jax_test|attention_oracle_cpu|research_stats_oracle_test|deploy_.*|e2e_serving|model_transformer_day_test|flash_emu_test|bob_emu_test)$'
# Leaks and UB are failures; symbolized stacks for whoever reads the log. An
# allocation too large to serve returns null (std::bad_alloc from new), as without
# ASan, since tests check that a sweep too big for memory fails alone.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}
dir=${FLASHTICK_SANITIZE_DIR:-build/fuzz}  # the preset's binaryDir unless told
cmake --preset fuzz -B "$dir" -DFLASHTICK_BUILD_TESTS=ON >/dev/null
# Build only what the selected tests run (their executables, and the binaries the
# Python-driven ones are given): the skipped and GPU-only tests cost no compile time.
targets=$(ctest --test-dir "$dir" -N -L cpu -E "$skip" --show-only=json-v1 2>/dev/null |
  python3 -c '
import json, os, subprocess, sys
tests = json.load(sys.stdin)["tests"]
known = {l.split(":")[0] for l in subprocess.run(
    ["ninja", "-C", sys.argv[1], "-t", "targets", "all"],
    capture_output=True, text=True, check=True).stdout.splitlines()}
alias = {"parity_cpu": "parity_test"}  # a test named apart from its executable
need = set()
for t in tests:
    words = [t["name"], alias.get(t["name"], "")] + t.get("command", [])
    need |= {os.path.basename(w) for w in words if os.path.basename(w) in known}
print(" ".join(sorted(need)))' "$dir")
built_from=$(date +%s)
cmake --build "$dir" -j "$jobs" --target $targets
echo "== sanitizer build: $(( $(date +%s) - built_from )) s"
ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 1800 --no-tests=error \
  -L cpu -E "$skip" "$@"
