#!/usr/bin/env bash
# The CLI is a thin client (ARCHITECTURE.md: client/ links flashtick_proto,
# flashtick_common and flashtick_ticks only). Fails when a binary built from the
# client library
#   - loads a library of the CUDA stack (ldd: cudart, cuBLAS/cuBLASLt, cuDNN, NCCL,
#     NVRTC, the driver),
#   - has CUDA runtime or cuBLAS code linked in statically (nm: cudart_static), or
#   - defines any global symbol that one of the forbidden libraries (the
#     flashtick_kernels, _model, _trainer and _research archives) defines, i.e. it
#     linked code of those layers (nm on both; weak symbols, such as the template
#     instances every library may carry, do not count).
#
# Usage: link_check.sh [--forbid LIB.a]... BINARY...   (exit 0: nothing of that)
set -u
forbid=()
bins=()
while [ $# -gt 0 ]; do
  case "$1" in
    --forbid) forbid+=("$2"); shift 2 ;;
    *) bins+=("$1"); shift ;;
  esac
done
if [ ${#bins[@]} -eq 0 ]; then
  echo "usage: $0 [--forbid LIB.a]... BINARY..." >&2
  exit 2
fi

cuda_libs='lib(cuda|cudart|cublas|cublasLt|cudnn[a-z_]*|nccl|nvrtc|nvJitLink)\.so'
cuda_symbols='^(cuda(Malloc|Free|LaunchKernel|GetDeviceCount|StreamCreate)|cublas(Lt)?[A-Z][A-Za-z_]*|cudnn[A-Z][A-Za-z_]*|ncclAllReduce)$'
# A symbol the client does link (the tick features of ticks/), so a stripped binary,
# with nothing for nm to read, fails instead of passing unchecked.
expected='flashtick::ComputeFeatures'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Strong global definitions (T text, D data, B bss, R read-only), mangled, sorted.
strong_defs() { nm -g --defined-only --format=posix "$1" 2>/dev/null | awk 'NF >= 2 && $2 ~ /^[TDBR]$/ {print $1}' | sort -u; }
for lib in "${forbid[@]}"; do
  if [ ! -f "$lib" ]; then
    echo "FAIL forbidden library $lib does not exist" >&2
    exit 1
  fi
  strong_defs "$lib"
done | sort -u > "$tmp/forbidden"
if [ ${#forbid[@]} -gt 0 ] && [ ! -s "$tmp/forbidden" ]; then
  echo "FAIL nm read no symbols from ${forbid[*]}" >&2
  exit 1
fi

status=0
for bin in "${bins[@]}"; do
  bad=0
  if [ ! -x "$bin" ]; then
    echo "FAIL $bin: not an executable" >&2
    status=1
    continue
  fi
  shared=$(ldd "$bin" 2>&1 | grep -E "$cuda_libs")
  for lib in "${forbid[@]}"; do  # a shared-library build: the forbidden .so loaded
    case "$lib" in *.so*) shared+=$(ldd "$bin" 2>&1 | grep -F "${lib##*/}") ;; esac
  done
  if [ -n "$shared" ]; then
    printf 'FAIL %s loads CUDA or forbidden libraries:\n%s\n' "$bin" "$shared" >&2
    bad=1
  fi
  if ! nm -C "$bin" 2>/dev/null | grep -q "$expected"; then
    echo "FAIL $bin: nm finds no $expected (stripped?), so the symbol checks cannot run" >&2
    status=1
    continue
  fi
  strong_defs "$bin" > "$tmp/bin"
  found=$(grep -E "$cuda_symbols" "$tmp/bin" | head -20)
  if [ -n "$found" ]; then
    printf 'FAIL %s has CUDA runtime or cuBLAS code linked in (first 20):\n%s\n' "$bin" "$found" >&2
    bad=1
  fi
  found=$(comm -12 "$tmp/bin" "$tmp/forbidden" | c++filt | head -20)
  if [ -n "$found" ]; then
    printf 'FAIL %s defines symbols of %s (first 20):\n%s\n' "$bin" "${forbid[*]##*/}" "$found" >&2
    bad=1
  fi
  if [ $bad -eq 0 ]; then
    echo "OK   $bin: no CUDA libraries or code, nothing of ${#forbid[@]} forbidden libraries"
  else
    status=1
  fi
done
exit $status
