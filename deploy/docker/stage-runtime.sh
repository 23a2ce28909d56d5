#!/usr/bin/env bash
# Stages what the runtime image needs, under STAGE (copied to / by the Dockerfile):
#   usr/local/bin/{flashtickd,flashtick}    the server and the CLI
#   usr/local/bin/flashtick_sweep           one sweep arm per Kubernetes Job pod
#   opt/flashtick/lib/                      their shared libraries that the CUDA
#                                           runtime image lacks (gRPC, Protobuf,
#                                           Abseil, prometheus-cpp, SQLite, ...)
#   etc/ld.so.conf.d/flashtick.conf         so the loader finds them (ldconfig)
#   models/flashtick-tiny/1/                the default model, made here by
#                                           flashtick_make_model
# Not copied: glibc, libstdc++ and libgcc (the runtime image has the same ones),
# the CUDA and cuDNN libraries (the runtime image has them) and the driver's
# libcuda/libnvidia-* (mounted from the host by the NVIDIA container toolkit).
# Usage: stage-runtime.sh BUILD_DIR STAGE
set -euo pipefail
build=${1:?usage: stage-runtime.sh BUILD_DIR STAGE}
stage=${2:?usage: stage-runtime.sh BUILD_DIR STAGE}

find_bin() {
  local path
  path=$(find "$build" -type f -name "$1" -perm -u+x -not -path '*/CMakeFiles/*' | head -n1)
  [ -n "$path" ] || { echo "stage-runtime: $1 not found under $build" >&2; exit 1; }
  echo "$path"
}

flashtickd=$(find_bin flashtickd)
flashtick=$(find_bin flashtick)
make_model=$(find_bin flashtick_make_model)
sweep=$(find_bin flashtick_sweep)

mkdir -p "$stage/usr/local/bin" "$stage/opt/flashtick/lib" "$stage/etc/ld.so.conf.d" "$stage/models"
install -m 0755 "$flashtickd" "$flashtick" "$sweep" "$stage/usr/local/bin/"

# Shared libraries: everything ldd resolves, minus what the runtime image or the
# host driver provides.
system_lib='/(ld-linux[^/]*|libc|libm|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s)\.so'
cuda_lib='^/usr/local/cuda|/(libcuda|libnvidia-[^/]*|libcudnn[^/]*|libcublas(Lt)?|libcudart|libnccl|libnvrtc|libnvJitLink|libcurand|libcufft|libcusparse|libcusolver)\.so'
for bin in "$flashtickd" "$flashtick" "$sweep"; do
  ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  if [[ "$lib" =~ $system_lib ]] || [[ "$lib" =~ $cuda_lib ]]; then
    continue
  fi
  cp -L "$lib" "$stage/opt/flashtick/lib/"
done
echo /opt/flashtick/lib >"$stage/etc/ld.so.conf.d/flashtick.conf"

# The default model the image serves without a volume.
# Seeded and tiny (C = 64, one head of D = 64: the CUDA attention kernels take D ∈ {64,
# 128}, and the image is for GPU nodes); its context covers the largest --max-seq-len
# the deployment configures.
"$make_model" --out="$stage/models" --name=flashtick-tiny --version=1 --seed=1 --max-context=262144 --heads=1
echo "stage-runtime: staged $(find "$stage/opt/flashtick/lib" -type f | wc -l) libraries, model:"
find "$stage/models" -type f | sed "s|^$stage||"
