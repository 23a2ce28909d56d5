#!/usr/bin/env bash
# Copies the header-only cudnn-frontend (MIT; the PyPI wheel nvidia-cudnn-frontend) into
# .carry/cudnn_frontend/include (git-ignored), for a GPU machine that lacks the wheel:
# carry .carry/cudnn_frontend with the working tree, and bench/scripts/gpu_cudnn.sh
# points CMake at it (FLASHTICK_CUDNN_FRONTEND_INCLUDE). About 3 MB.
# Usage (repository root): scripts/carry_cudnn_frontend.sh [python]
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-python3}
src=$("$python" -c "import importlib.metadata as m; d=m.distribution('nvidia-cudnn-frontend'); f=[p for p in (d.files or []) if str(p).endswith('include/cudnn_frontend.h')]; print(d.locate_file(f[0]).parent.resolve())") \
  || { echo "no nvidia-cudnn-frontend wheel for $python: pip install nvidia-cudnn-frontend" >&2; exit 1; }
version=$("$python" -c "import importlib.metadata as m; print(m.version('nvidia-cudnn-frontend'))")
dst=.carry/cudnn_frontend/include
rm -rf "$dst"
mkdir -p "$dst"
cp -r "$src"/cudnn_frontend "$src"/cudnn_frontend*.h "$src"/cudnn_backend_base.h "$dst"/
echo "$version" > .carry/cudnn_frontend/VERSION
# cuDNN 9's own headers too, for a machine whose cuDNN wheel ships only the libraries
# (gpu_cudnn.sh uses them only then; the C API is stable within major version 9).
cudnn_h=${CUDNN_INCLUDE:-/usr/local/cuda/include}
if [ -f "$cudnn_h/cudnn.h" ]; then
  mkdir -p .carry/cudnn_frontend/cudnn_include
  cp "$cudnn_h"/cudnn*.h .carry/cudnn_frontend/cudnn_include/
fi
echo "cudnn-frontend $version -> $dst ($(du -sh "$dst" | cut -f1))"
