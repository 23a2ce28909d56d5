#!/usr/bin/env bash
# ctest install_consumer_test: `cmake --install` of this build into a fresh prefix,
# then a downstream project (consumer/) configured with find_package(flashtick) and
# that prefix alone, built, installed into the prefix and run. Also checks that the
# package's CMake files and headers name no path of the source or build tree, that
# the installed binaries start, and that an installed binary finds plot_report.py in
# the prefix (no source tree needed).
# Usage: install_consumer_test.sh BUILD_DIR SOURCE_DIR GENERATOR CXX BUILD_TYPE [LAUNCHER]
set -euo pipefail
build=$1 source=$2 generator=$3 cxx=$4 build_type=$5 launcher=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
t0=$(date +%s)
step() { echo "== $1 ($(( $(date +%s) - t0 )) s)"; }

step "install $build into $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
for f in lib/cmake/flashtick/flashtickConfig.cmake lib/cmake/flashtick/flashtickConfigVersion.cmake \
         lib/cmake/flashtick/flashtickTargets.cmake share/flashtick/plot_report.py \
         include/flashtick/common/file_io.h bin/flashtick_make_model; do
  [ -e "$prefix/$f" ] || { echo "missing: $prefix/$f"; find "$prefix" -maxdepth 3; exit 1; }
done
if grep -rlF -e "$source" -e "$build" "$prefix/lib/cmake" "$prefix/include"; then
  echo "the files above name the source or build tree"; exit 1
fi
"$prefix/bin/flashtick_make_model" --help >/dev/null
for program in flashtickd flashtick; do
  if [ -e "$prefix/bin/$program" ]; then "$prefix/bin/$program" --help >/dev/null; fi
done

step "configure the consumer"
consumer=$tmp/consumer-build
args=(-S "$here/consumer" -B "$consumer" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx"
      -DCMAKE_BUILD_TYPE="$build_type" -DCMAKE_PREFIX_PATH="$prefix")
[ -n "$launcher" ] && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher")
cmake "${args[@]}" >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; exit 1; }
step "build the consumer"
cmake --build "$consumer" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
cmake --install "$consumer" --prefix "$prefix" >/dev/null

step "run it"
if [ -e "$consumer/consumer_client" ]; then
  "$consumer/consumer_client"
fi
want=$prefix/share/flashtick/plot_report.py
got=$(env -u FLASHTICK_PLOT_SCRIPT "$prefix/bin/consumer_plot_script")
[ "$got" = "$want" ] || { echo "plot script from $prefix/bin: '$got', expected '$want'"; exit 1; }
echo "consumer_plot_script: $got"
step "done"
