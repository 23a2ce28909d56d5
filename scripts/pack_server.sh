#!/usr/bin/env bash
# Packs flashtickd and its clients for a machine that cannot build them (the lent GPU
# machine has CUDA and PyTorch but no C++ gRPC and no network): the binaries, every
# shared library `ldd` lists for them except those the target provides, a MANIFEST and
# SHA256SUMS; then checks that the pack resolves on its own. Also fetches the Python
# wheels the target lacks for bench/serve_latency/serve_latency.py. docs/serving.md
# ("The server on a GPU box: one command") says how the pack is used.
#
#   scripts/pack_server.sh BUILD_DIR [DEST]     pack + wheels (DEST default: the
#                                               repository's .carry/serve, git-ignored)
#   scripts/pack_server.sh --verify DEST        only the self-containment check
#
# DEST/bin  flashtickd, flashtick, flashtick_make_model, load_gen (found under BUILD_DIR)
# DEST/lib  their shared libraries, under the names the binaries ask for (DT_NEEDED)
# DEST/MANIFEST    one line a file: path, sha256, where it was copied from
# DEST/SHA256SUMS  the same hashes for `sha256sum -c` on the target
# DEST.tar.xz      all of DEST in one archive: what a device call carries. The folder is
#                  ~30 MB (most of it gRPC, OpenSSL, protobuf); xz makes it ~8 MB, and a
#                  call carries at most 64 MiB with the working tree and the wheels.
#
# Not carried (the exclusion list; the target brings its own):
#   - glibc: linux-vdso, ld-linux, libc, libm, libdl, libpthread, librt, libutil,
#     libresolv, libanl, libmvec, libnss_*. Its libraries must come from one glibc
#     build with the target's ld-linux; mixing ours with theirs breaks at load time.
#     Needs the target's glibc to be at least the build machine's (Debian 12: 2.36;
#     the GPU image's Python 3.12.3 is Ubuntu 24.04's, glibc 2.39).
#   - libstdc++, libgcc_s: the compiler runtime; the target's GCC is newer than
#     Debian 12's GCC 12, and newer libstdc++ runs older binaries (GCC's ABI policy).
#   - libcuda, libnvidia-*: the driver's user-space half must match the target's
#     kernel driver, so it can only come from the target.
#   - libcublas, libcublasLt, libcudart: the CUDA toolkit the target has (13.0 here and
#     there); cuBLAS alone is several hundred MB, past the 64 MiB a device call carries.
#     (libcudart is normally linked statically by CMake and then is not listed at all.)
#   - libcudnn*, libnvrtc*: only when the build has the cuDNN attention backend
#     (cmake/FlashtickCudnn.cmake); libcudnn.so.9 is a stub that dlopens engine
#     libraries of hundreds of MB, which ldd does not list. The target has them in
#     PyTorch's nvidia-cudnn and nvrtc wheels; docs/serving.md builds the pack without
#     cuDNN so that nothing depends on them.
# Everything else (gRPC, protobuf, Abseil, OpenSSL, c-ares, re2, zlib, sqlite,
# prometheus-cpp, civetweb, ...) is carried, so the binaries run the library versions
# they were built and tested against, whatever the target has.
#
# Env: PACK_BINARIES (default "flashtickd flashtick flashtick_make_model load_gen"),
#      PACK_WHEELS=0 to skip the wheels, PACK_ARCHIVE=0 to skip DEST.tar.xz, WHEEL_DIR (default the repository's .carry/wheels),
#      PACK_PY_VERSION (default 3.12: the GPU image's python3).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

# Sonames (as ldd prints them) that are never carried; see the list above.
EXCLUDE_RE='^(linux-vdso\.so|linux-gate\.so|ld-linux(-x86-64)?\.so|lib(c|m|dl|pthread|rt|util|resolv|anl|mvec)\.so|libnss_[a-z0-9_]+\.so|libstdc\+\+\.so|libgcc_s\.so|libcuda\.so|libcudart\.so|libcublas\.so|libcublasLt\.so|libcudnn[A-Za-z0-9_]*\.so|libnvrtc[A-Za-z0-9_.-]*\.so|libnvidia-[A-Za-z0-9_.-]+\.so)'

# The client wheels serve_latency.py needs beyond what the GPU image has (numpy,
# packaging, typing-extensions are there). grpcio and protobuf are there too, but at
# versions nobody recorded, and grpcio-reflection needs grpcio >= 1.85.1 and
# protobuf >= 7.35.1; so all three travel, at the versions the project's .venv runs
# the e2e tests with.
WHEELS="grpcio==1.85.3 grpcio-reflection==1.85.1 protobuf==7.36.2 tritonclient==2.41.0 python-rapidjson==1.25"

die() { echo "pack_server: $*" >&2; exit 1; }

# ldd's lines as "NAME<TAB>PATH" (PATH is "not found" when unresolved, "-" for the vdso).
ldd_pairs() {
  ldd "$1" 2>&1 | awk '
    /=>/ { name=$1; path=$3; if ($3 == "not") path="not found"; print name "\t" path; next }
    /^[ \t]*\// { n=$1; sub(/.*\//, "", n); print n "\t" $1; next }
    /^[ \t]*linux-(vdso|gate)/ { print $1 "\t-" }'
}

# Every binary in DEST/bin must find each non-excluded library in DEST/lib with
# LD_LIBRARY_PATH=DEST/lib (LD_LIBRARY_PATH is searched before RUNPATH and the system
# paths, so this is what the target's loader will do).
verify() {
  local dest lib bin name path bad=0 checked=0 excluded=""
  dest=$(cd "$1" && pwd) || die "no folder $1"
  lib="$dest/lib"
  [ -d "$dest/bin" ] || die "$dest/bin missing"
  for bin in "$dest"/bin/*; do
    while IFS=$'\t' read -r name path; do
      [ -n "$name" ] || continue
      if [[ $name =~ $EXCLUDE_RE ]]; then
        excluded="$excluded $name"
        continue
      fi
      checked=$((checked + 1))
      if [ "$path" = "not found" ]; then
        echo "pack_server: VERIFY FAILED: $(basename "$bin") needs $name: not found in $lib" >&2
        bad=1
      elif [ "$(dirname "$(readlink -f "$path")")" != "$(readlink -f "$lib")" ]; then
        echo "pack_server: VERIFY FAILED: $(basename "$bin") needs $name: resolves to $path, outside $lib" >&2
        bad=1
      fi
    done < <(LD_LIBRARY_PATH="$lib" ldd_pairs "$bin")
  done
  [ $bad -eq 0 ] || die "the pack in $dest is not self-contained (see above)"
  excluded=$(echo "$excluded" | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ')
  echo "pack_server: verified $dest: $(find "$dest/bin" -type f | wc -l) binaries, $(find "$lib" -type f | wc -l) libraries; $checked lookups resolve in lib/; left to the target: ${excluded:-none}"
}

fetch_wheels() {
  local dir=$1 spec name ver stem plats=() p
  mkdir -p "$dir" || die "cannot make $dir"
  for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 \
           manylinux2014_x86_64 manylinux1_x86_64; do
    plats+=(--platform "$p")
  done
  for spec in $WHEELS; do
    name=${spec%%==*}; ver=${spec##*==}
    stem=${name//-/_}   # wheel file names spell - as _
    if compgen -G "$dir/${stem}-${ver}-*.whl" > /dev/null; then
      echo "pack_server: wheel $spec present"
      continue
    fi
    # pip installs nothing when two versions of one package are offered; keep one.
    for old in "$dir/${stem}"-*.whl; do
      [ -e "$old" ] && { echo "pack_server: removing other version $(basename "$old")"; rm -f "$old"; }
    done
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version "${PACK_PY_VERSION:-3.12}" \
      --implementation cp "${plats[@]}" -d "$dir" "$spec" || die "pip download $spec failed"
  done
  echo "pack_server: wheels in $dir: $(du -sh "$dir" | cut -f1) ($(find "$dir" -name '*.whl' -printf '%f\n' | sort | tr '\n' ' '))"
}

if [ "${1:-}" = "--verify" ]; then
  [ $# -eq 2 ] || die "usage: $0 --verify DEST"
  verify "$2"
  exit
fi
if [ $# -lt 1 ] || [ $# -gt 2 ]; then die "usage: $0 BUILD_DIR [DEST]   or   $0 --verify DEST"; fi
command -v ldd > /dev/null || die "ldd not found"
build=$(cd "$1" && pwd) || die "no build folder $1"
dest=${2:-$here/.carry/serve}
rm -rf "${dest:?}/bin" "${dest:?}/lib" "$dest/MANIFEST" "$dest/SHA256SUMS"
mkdir -p "$dest/bin" "$dest/lib" || die "cannot make $dest"
dest=$(cd "$dest" && pwd)

manifest="$dest/MANIFEST"
{
  echo "# flashtick server pack: $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n) ($(sed -n 's/^PRETTY_NAME=//p' /etc/os-release 2>/dev/null | tr -d '"'), $(ldd --version 2>&1 | head -1))"
  echo "# from $build (repository at $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown) when packed)"
  echo "# not carried (the target's own): sonames matching $EXCLUDE_RE"
  echo "# path	sha256	source"
} > "$manifest"

declare -A seen=()
for name in ${PACK_BINARIES:-flashtickd flashtick flashtick_make_model load_gen}; do
  src=$(find "$build" -type f -name "$name" -perm -u+x -not -path '*/CMakeFiles/*' | head -1)
  [ -n "$src" ] || die "$name not found under $build (build it first: ninja -C $build $name)"
  cp "$src" "$dest/bin/$name" || die "copy $src"
  printf '%s\t%s\t%s\n' "bin/$name" "$(sha256sum < "$src" | cut -d' ' -f1)" "$src" >> "$manifest"
  while IFS=$'\t' read -r lib path; do
    [ -n "$lib" ] || continue
    [[ $lib =~ $EXCLUDE_RE ]] && continue
    [ -n "${seen[$lib]:-}" ] && continue
    [ "$path" = "not found" ] && die "$name needs $lib, which ldd does not find on this machine"
    seen[$lib]=1
    # -L: the file a symlink names, saved under the soname the loader asks for.
    cp -L "$path" "$dest/lib/$lib" || die "copy $path"
    printf '%s\t%s\t%s\n' "lib/$lib" "$(sha256sum < "$dest/lib/$lib" | cut -d' ' -f1)" "$(readlink -f "$path")" >> "$manifest"
  done < <(ldd_pairs "$src")
done
(cd "$dest" && grep -v '^#' MANIFEST | cut -f1 | xargs sha256sum > SHA256SUMS) || die "SHA256SUMS"
echo "pack_server: $dest: $(du -sh "$dest" | cut -f1) ($(find "$dest/bin" -type f | wc -l) binaries, $(find "$dest/lib" -type f | wc -l) libraries)"
verify "$dest"
if [ "${PACK_ARCHIVE:-1}" != "0" ]; then
  rm -f "$dest.tar.xz"
  # xz -9e: a CUDA build's pack (116 MB with cuDNN) is 21 MB at xz's default level and
  # 16 MB at -9e, a minute of compression here against the 64 MiB a device call carries.
  XZ_OPT=${XZ_OPT:--9e -T0} tar -C "$dest" -cJf "$dest.tar.xz" . || die "tar $dest.tar.xz"
  echo "pack_server: $dest.tar.xz: $(du -sh "$dest.tar.xz" | cut -f1) (carry this; bench/scripts/gpu_serve.sh unpacks it)"
fi

if [ "${PACK_WHEELS:-1}" != "0" ]; then
  fetch_wheels "${WHEEL_DIR:-$here/.carry/wheels}"
fi
