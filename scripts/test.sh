#!/usr/bin/env bash
# The whole test suite: installs what is missing (scripts/setup.sh), configures the
# `release` preset (CUDA for sm_80 and sm_90 when nvcc is present, so CUDA code always
# compiles), builds, and runs ctest. GPU tests skip with a message where no GPU is.
# Then the sanitizer stage (scripts/sanitize.sh: clang ASan+UBSan build of the CPU
# tests and the libFuzzer targets, run with a bounded time each; FLASHTICK_SANITIZERS=0
# skips it). Ends with ctest's summary line of the main suite, or, with the sanitizer
# stage, a combined summary line of both in ctest's words.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
stamp() { echo "== $1: $(( $(date +%s) - t0 )) s since start"; }  # where CI's time goes
scripts/setup.sh
stamp "setup done"
preset=${FLASHTICK_PRESET:-release}
jobs=${FLASHTICK_JOBS:-$(nproc)}
# BENCH=ON explicitly: scripts/demo.sh configures the same build directory with
# BENCH=OFF, and a cached OFF would otherwise leave bench/sweep/flashtick_sweep
# (which tests run) unbuilt when the demo ran first.
# FLASHTICK_WERROR=ON (CI sets it, .ci/run) makes every C++ warning an error; off by
# default, since another compiler's new warnings should not stop a user's build.
cmake --preset "$preset" -DFLASHTICK_BUILD_TESTS=ON -DFLASHTICK_BUILD_BENCH=ON \
  -DFLASHTICK_WERROR="${FLASHTICK_WERROR:-OFF}" >/dev/null
cmake --build --preset "$preset" -j "$jobs"
stamp "build of the $preset preset done"
if [ "${FLASHTICK_SANITIZERS:-1}" = 0 ]; then
  exec ctest --preset "$preset" -j "$jobs" "$@"
fi

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
set +e
ctest --preset "$preset" -j "$jobs" "$@" 2>&1 | tee "$logs/main.log"
main_rc=${PIPESTATUS[0]}
stamp "main suite done"
echo "== sanitizer stage: ASan + UBSan build of the CPU tests and fuzz targets (scripts/sanitize.sh)"
start=$(date +%s)
scripts/sanitize.sh 2>&1 | tee "$logs/sanitize.log"
san_rc=${PIPESTATUS[0]}
echo "== sanitizer stage: exit $san_rc in $(( $(date +%s) - start )) s"
set -e

# "N% tests passed, F tests failed out of T" of each stage, summed.
counts() { grep -Eo '[0-9]+ tests failed out of [0-9]+' "$1" | tail -1 | grep -Eo '[0-9]+' | tr '\n' ' '; }
read -r main_failed main_total <<<"$(counts "$logs/main.log")"
read -r san_failed san_total <<<"$(counts "$logs/sanitize.log")"
main_failed=${main_failed:-0} main_total=${main_total:-0}
san_failed=${san_failed:-0} san_total=${san_total:-0}
if [ "$san_rc" != 0 ] && [ "$san_total" = 0 ]; then
  san_failed=1 san_total=1  # the stage failed before ctest ran (configure or build)
fi
failed=$((main_failed + san_failed)) total=$((main_total + san_total))
pct=0; [ "$total" -gt 0 ] && pct=$(( (total - failed) * 100 / total ))
echo "${pct}% tests passed, ${failed} tests failed out of ${total}" \
     "(main suite ${main_failed} of ${main_total} failed, sanitizer stage ${san_failed} of ${san_total})"
[ "$main_rc" = 0 ] && [ "$san_rc" = 0 ]
