#!/usr/bin/env bash
# The main job on the embedded default: build (release preset: CPU backend, plus CUDA
# when nvcc is present), write a small seeded model, start flashtickd (GPU when one is
# present, else CPU), predict a synthetic 23,400-step trading day over gRPC with our
# CLI, show the server's metrics, then run a small N-sweep on the CPU and print its
# verdict. Everything it writes goes under runs/demo (FLASHTICK_DEMO_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${FLASHTICK_PRESET:-release}
work=${FLASHTICK_DEMO_DIR:-runs/demo}
bin=build/$preset
start=$(date +%s)

echo "== build ($preset preset)"
cmake --preset "$preset" -DFLASHTICK_BUILD_TESTS=OFF -DFLASHTICK_BUILD_BENCH=OFF >/dev/null
cmake --build --preset "$preset" -j "$(nproc)" --target flashtickd flashtick flashtick_make_model

echo "== model: $work/models/flashtick-tiny/1"
mkdir -p "$work"
# One head of D = 64 (C = 64): the smallest shape the CUDA attention kernels take (D ∈
# {64, 128}), so the same model serves on the GPU; the same FLOPs as 4 heads of 16.
"$bin/model/tools/flashtick_make_model" --out "$work/models" --name flashtick-tiny --seed 7 --heads 1

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port); mport=$(free_port)
addr=127.0.0.1:$port
echo "== flashtickd on $addr (metrics on :$mport)"
py=python3; [ -x .venv/bin/python ] && py=.venv/bin/python  # matplotlib for the sweep plots
"$bin/server/flashtickd" --listen "$addr" --metrics-port "$mport" \
  --model-repository "$work/models" --device auto \
  --experiment-dir "$work/experiments" --report-python "$py" >"$work/flashtickd.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  "$bin/client/flashtick" --server "$addr" --timeout 2 health >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/flashtickd.log"; exit 1; }
  sleep 0.2
done
"$bin/client/flashtick" --server "$addr" health
"$bin/client/flashtick" --server "$addr" models

echo "== predict a synthetic 23,400-step day"
"$bin/client/flashtick" --server "$addr" --timeout 600 predict --synthetic-day 1 \
  --output "$work/predictions.csv"

echo "== a few of flashtickd's metrics (http://127.0.0.1:$mport/metrics)"
python3 - "$mport" <<'PY'
import sys, urllib.request
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode()
for line in text.splitlines():
    if line.startswith(("flashtick_requests_total{code=\"OK\",method=\"ModelInfer\"",
                        "flashtick_request_duration_seconds_sum{method=\"ModelInfer\"",
                        "flashtick_request_gpu_peak_bytes_sum{method=\"ModelInfer\"",
                        "flashtick_gpu_memory_", "flashtick_model_info",
                        "process_resident_memory_bytes", "process_cpu_seconds_total")):
        print("  " + line)
PY

if "$bin/client/flashtick" sweep --help >/dev/null 2>&1; then
  echo "== a small N-sweep on the CPU (planted-signal synthetic days)"
  "$bin/client/flashtick" --server "$addr" --timeout 3600 sweep submit --preset demo --watch
fi
echo "== done in $(( $(date +%s) - start )) s; predictions in $work/predictions.csv"
