#!/usr/bin/env bash
# The sanitizer stage of the test suite (issue 8), run by scripts/test.sh after the main
# suite: one clang build (CMakePresets.json `fuzz`: CPU only, AddressSanitizer +
# UndefinedBehaviorSanitizer, -O1) of the libraries, the tests and the libFuzzer targets,
# then ctest of every cpu-labelled test in it (the fuzz targets for
# FLASHTICK_FUZZ_SECONDS each over their seed corpus and crash regressions) except:
#   sweep_planted_test, research_real_data_test, sweep_usdchf_test   minutes of training
#       whose code paths sweep_resume_test, sweep_config_test and the research unit
#       tests already run under the sanitizers
#   bob_oracle_test, bob_verify_derivation, train_model_oracle_test,
#   grad_train_ops_jax_test, attention_oracle_cpu, research_stats_oracle_test
#       time spent in JAX/NumPy (Python, not instrumented); the C++ they check runs
#       under the sanitizers in the ops, grad, train and attention unit tests
#   deploy_*   check files (Dockerfile, k8s, compose, dashboards) and a container
#       start, no C++ of ours beyond e2e_serving's
# Ends with ctest's summary line. Usage: scripts/sanitize.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${FLASHTICK_JOBS:-$(nproc)}
skip='^(sweep_planted_test|research_real_data_test|sweep_usdchf_test|bob_oracle_test|bob_verify_derivation|train_model_oracle_test|grad_train_ops_jax_test|attention_oracle_cpu|research_stats_oracle_test|deploy_.*)$'
# Leaks and UB are failures; symbolized stacks for whoever reads the log.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}
cmake --preset fuzz -DFLASHTICK_BUILD_TESTS=ON >/dev/null
cmake --build --preset fuzz -j "$jobs"
ctest --preset fuzz -j "$jobs" -L cpu -E "$skip" "$@"
