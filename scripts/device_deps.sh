#!/usr/bin/env bash
# Packs the C++ build dependencies that the GPU machine lacks (Abseil, GoogleTest,
# Google Benchmark, nlohmann-json, CLI11, and Protobuf with protoc for the sweep
# configuration's messages) as Debian .deb files into .carry/debs, so a
# device call can `dpkg -x` them and build kernels/, model/, research/ and bench/ there.
# Run here (on the Debian development machine); the device call carries .carry.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$here/.carry/debs"
cd "$here/.carry/debs"
apt-get download libabsl-dev libabsl20220623 libgtest-dev libgmock-dev nlohmann-json3-dev \
  libbenchmark-dev libbenchmark1debian libcli11-dev \
  libprotobuf-dev libprotobuf32 libprotobuf-lite32 libprotoc32 protobuf-compiler 2>/dev/null
ls -la
