# syntax=docker/dockerfile:1
# flashtick image: builds flashtickd and the flashtick CLI on NVIDIA's CUDA + cuDNN
# development image with the same two steps as the README (scripts/setup.sh, then
# the `release` CMake preset), and ships them on the CUDA + cuDNN runtime image with
# only their shared libraries and a default model. Base: Ubuntu 24.04, whose gRPC
# 1.51, Protobuf 3.21 and Abseil 20220623 are the versions of the Debian bookworm
# packages setup.sh names (NVIDIA publishes no Debian CUDA images). See docs/deploy.md.
#   docker build -t flashtick --build-arg CUDA_ARCHS="80;90" .
#   docker run --gpus all -p 8001:8001 -p 8002:8002 flashtick

ARG CUDA_VERSION=13.0.1
ARG BASE_OS=ubuntu24.04

# ---------------------------------------------------------------------------- build
FROM nvidia/cuda:${CUDA_VERSION}-cudnn-devel-${BASE_OS} AS build
# GPU architectures: 80 = A100 (the deployment target), 90 = H100/H200.
ARG CUDA_ARCHS="80;90"
# Parallel compile jobs (empty: one per core). nvcc for two architectures needs
# about 2 GiB per job; lower this on small builders.
ARG BUILD_JOBS=""
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /src

# Dependencies first, from only the files setup.sh reads, so this layer stays cached
# while the sources change.
COPY scripts/setup.sh scripts/requirements-test.txt scripts/
RUN scripts/setup.sh && rm -rf /var/lib/apt/lists/*

COPY . .
# The README's build (CMake preset `release`), with CUDA required and only the
# binaries the image ships; flashtick_sweep (a bench/ target) is the command of the
# sweep-arm pods flashtickd --sweep-arm-runner=kubernetes creates (docs/deploy.md).
RUN cmake --preset release -DFLASHTICK_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS}" \
      -DFLASHTICK_BUILD_TESTS=OFF -DFLASHTICK_BUILD_BENCH=ON \
 && cmake --build --preset release ${BUILD_JOBS:+-j ${BUILD_JOBS}} \
      --target flashtickd flashtick flashtick_make_model flashtick_sweep

# Binaries, their non-system shared libraries and the default model, under /stage.
RUN deploy/docker/stage-runtime.sh build/release /stage

# -------------------------------------------------------------------------- runtime
FROM nvidia/cuda:${CUDA_VERSION}-cudnn-runtime-${BASE_OS} AS runtime
LABEL org.opencontainers.image.title="flashtick" \
      org.opencontainers.image.description="gRPC service for a causal transformer over day-long tick sequences, with Flash attention kernels"

COPY --from=build /stage/ /
RUN ldconfig \
 && groupadd --system --gid 10001 flashtick \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/flashtick \
      --shell /usr/sbin/nologin flashtick \
 && mkdir -p /var/lib/flashtick \
 && chown 10001:10001 /var/lib/flashtick \
 && for bin in /usr/local/bin/flashtickd /usr/local/bin/flashtick /usr/local/bin/flashtick_sweep; do \
      # Every library resolves here; libcuda comes from the host driver at run time.
      if ldd "$bin" | grep -v 'libcuda\.so' | grep -q 'not found'; then ldd "$bin"; exit 1; fi; \
    done

USER 10001:10001
WORKDIR /var/lib/flashtick
VOLUME ["/var/lib/flashtick"]
# gRPC (KServe v2, flashtick.v1, health, reflection) and Prometheus /metrics, on
# Triton's port conventions.
EXPOSE 8001 8002
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 \
  CMD ["flashtick", "--server=127.0.0.1:8001", "--timeout=3", "health"]
ENTRYPOINT ["flashtickd"]
CMD ["--listen=0.0.0.0:8001", "--metrics-port=8002", "--model-repository=/models", "--device=auto"]
