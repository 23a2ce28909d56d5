# Sourced by the device scripts that run a server pack (scripts/pack_server.sh):
# gpu_serve.sh and gpu_inproc_pack.sh find the libraries the pack leaves to the
# machine the same way.
#
# pack_ld_path PACK BINARY: prints the LD_LIBRARY_PATH for PACK's BINARY: PACK/lib, then,
# for each library the loader cannot find from there and its default paths (the pack
# leaves cuBLAS, cuDNN, nvrtc and the driver to the machine), the first folder that holds
# it: CUDA's own, then the lib folders of PyTorch's nvidia wheels. One "LIB from DIR"
# line per library found goes to stderr. The path is for the packed binaries only:
# Python and PyTorch keep their own OpenSSL, zlib and protobuf.
pack_ld_path() {
  local pack=$1 bin=$2 ld="$1/lib" lib d cands=(/usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib)
  local missing
  missing=$(LD_LIBRARY_PATH="$ld" ldd "$pack/bin/$bin" | awk '/not found/ {print $1}')
  if [ -n "$missing" ]; then
    while IFS= read -r d; do cands+=("$d"); done < <(python3 -c 'import glob, os, site
for p in site.getsitepackages():
    print("\n".join(sorted(glob.glob(os.path.join(p, "nvidia", "*", "lib")))))' 2> /dev/null)
    for lib in $missing; do
      for d in "${cands[@]}"; do
        if [ -e "$d/$lib" ]; then
          case ":$ld:" in *":$d:"*) ;; *) ld="$ld:$d" ;; esac
          echo "$lib from $d" >&2
          break
        fi
      done
    done
  fi
  echo "$ld"
}
