#!/usr/bin/env bash
# Installs every dependency flashtick needs on Debian bookworm: C++ libraries from
# Debian's packages, and the Python test tools (JAX, tritonclient, scipy, ...) into
# a virtual environment at .venv. Idempotent: a second run changes nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

apt_packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev prometheus-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libsqlite3-dev zlib1g-dev libssl-dev openssl
  python3 python3-venv python3-dev
  prometheus
  clang libclang-rt-14-dev
)

missing=()
for p in "${apt_packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Debian's prometheus package (wanted for promtool and the README's recipe) enables
# a system service on :9090, which the README's own `prometheus --web.listen-address
# 127.0.0.1:9090` would then collide with: stop and disable it.
if command -v systemctl >/dev/null 2>&1 && systemctl is-enabled prometheus >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO systemctl disable --now prometheus >/dev/null 2>&1 || true
fi

# Python test environment. Uses Debian's python3 so the venv works on a bare machine.
venv="$here/.venv"
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
fi
stamp="$venv/.requirements.sha"
want=$(sha256sum "$here/scripts/requirements-test.txt" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q -r "$here/scripts/requirements-test.txt"
  echo "$want" >"$stamp"
fi
# The header-only C++ cudnn-frontend ships in this wheel; with it a CUDA build compiles
# the cuDNN attention backend (docs/kernels/cudnn.md). --no-deps: only its headers are
# used, not its Python side. Not fatal: without it the backend is left out.
if ! "$venv/bin/pip" show nvidia-cudnn-frontend >/dev/null 2>&1; then
  "$venv/bin/pip" install -q --no-deps nvidia-cudnn-frontend \
    || echo "setup: nvidia-cudnn-frontend not installed; the cuDNN attention backend will be off"
fi
echo "setup: dependencies present"
