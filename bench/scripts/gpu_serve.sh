#!/usr/bin/env bash
# The whole flashtickd server on the GPU machine, in one device call (docs/serving.md,
# "The server on a GPU box: one command"). That machine has CUDA, PyTorch and Python but
# no C++ gRPC, so nothing server-side is built there: scripts/pack_server.sh, run on the
# development machine over a CUDA build, packs flashtickd, flashtick,
# flashtick_make_model and load_gen with the shared libraries they need
# (.carry/serve.tar.xz) and the Python client's wheels (.carry/wheels). Here:
#   1. unpack the pack (or use .carry/serve/ as it is), check SHA256SUMS and that ldd
#      resolves flashtickd; install the wheels into a temporary --target (PYTHONPATH);
#   2. make a model (flashtick_make_model $SERVE_MODEL --seed 1), start flashtickd on it
#      on a port the kernel picks, wait until `flashtick health` says SERVING;
#   3. grpc: serve_latency.py --server: ModelInfer p50/p99/p99.9 and requests/s at
#      N = 512, 4096, 23400 for 1 and 8 concurrent closed-loop clients, then TickStream
#      per-tick latency (incremental K/V state) over a 23,400-step day; then the same day
#      through load_gen --tick-stream, a C++ client (no interpreter in the tick's path),
#      its tick row appended to grpc/results.jsonl beside the Python one;
#   3a. decode graphs (SERVE_DECODE_GRAPHS, 1): a second flashtickd with --decode-graphs
#      and the same day through load_gen --tick-stream, its row beside the op-by-op one;
#   3b. small heads (SERVE_SMALL_HEADS, 1): a second model in the same repository made
#      with flashtick_make_model's defaults (width 64, 4 heads: D = 16, the head dim
#      users get when they follow docs/serving.md), its kernel path from the model list,
#      one full day through ModelInfer (load_gen at 2 /s, N = $SERVE_TICKS) and the same
#      day streamed tick by tick (load_gen --tick-stream);
#   4. closed loop with C++ clients (load_gen --clients SERVE_CLOSED_CLIENTS: 1,8) at
#      N = $SERVE_LOAD_N, every step and the last step only;
#      load: load_gen, open-loop Poisson arrivals at rising rates, stopping after the
#      knee (docs/serving.md, "Serving under load"); then the same with --last-only
#      (the next step's call only: docs/serving.md, "The last step only");
#   5. under a sweep (SERVE_UNDER_SWEEP, 1 on cuda): submit a sweep to the same server
#      (SERVE_SWEEP_PRESET, on the same GPU), wait until its arms train (the
#      flashtick_train_step_seconds count on /metrics grows), then load_gen at
#      SERVE_SWEEP_RATES and the tick stream again (both clients) while it trains; the
#      sweep is cancelled after. Inference runs on a high-priority CUDA stream
#      (--serve-stream-priority, SERVE_PRIORITY: high), the arms on normal ones;
#   6. stop the server (its /metrics scraped first), then, when SERVE_INPROC is set and
#      enough time is left, bench/scripts/gpu_serve_latency.sh (the in-process CUDA and
#      PyTorch rows: same model flags and seed, so the same weights) under what is left.
# One deadline: SERVE_BUDGET seconds from the start (default 570, inside the device
# tool's 600 s a command). Each stage's timeout is the smaller of its own cap and the time
# left less 20 s kept for shutdown and packing the logs, so a slow stage shortens the ones
# after it instead of losing everything. Results go to $OUT as they come (7 files; the
# device tool returns at most 8):
#   serve_summary.txt           read first: pack, machine, model, each stage's exit and table
#   flashtickd.log              the server's log
#   grpc/results.jsonl, grpc/table.md   serve_latency.py's JSON lines (one per row) and
#                               load_gen --tick-stream's tick line, and their table
#   load.jsonl                  load_gen's JSON lines (meta, one per rate, summary)
#   inproc.tgz                  gpu_serve_latency.sh's results and logs, when it ran
#   logs.tgz                    wheel install, ldd, model, health, models, metrics, clients
# Usage, from the repository root (the device call carries .carry/serve.tar.xz and
# .carry/wheels, and .carry/debs for the in-process stage, which builds there):
#   FLASHTICK_COMMIT=abc1234 OUT=dir bash bench/scripts/gpu_serve.sh
# SERVE_DEVICE=cpu runs the same path on a machine without a GPU, with tiny settings and no
# in-process stage: the local smoke test that the pack is self-contained and this works.
# Env: SERVE_DEVICE (cuda), SERVE_BUDGET (570), SERVE_MODEL (flashtick_make_model flags;
#   "--width 256 --heads 4 --layers 2 --max-context 32768": 4 heads of D = 64, which the
#   CUDA kernels run natively), SERVE_N (512,4096,23400), SERVE_CLIENTS (1,8),
#   SERVE_REPS (50), SERVE_TICKS (23400), SERVE_LOAD_N (23400), SERVE_RATES
#   (50,100,200,400,800,1600,3200; empty skips the open-loop load stage), SERVE_LOAD_S
#   (10 s a rate), SERVE_SLO_MS (10),
#   SERVE_INPROC (1 on cuda), SERVE_UNDER_SWEEP (1 on cuda), SERVE_SWEEP_PRESET (planted),
#   SERVE_SWEEP_RATES (100), SERVE_SWEEP_TICKS (4000), SERVE_PRIORITY (high),
#   SERVE_LAST_ONLY_RATES (100,200,400,800,1600; empty skips the last-step load stage),
#   SERVE_SMALL_HEADS (1; 0 skips stage 3b), SERVE_GRPC_LAST_ONLY (0; 1 adds last-step rows
#   to stage 3), SERVE_DECODE_GRAPHS (1; 0 skips stage 3a),
#   SERVE_CLOSED_CLIENTS (1,8; empty skips the closed-loop C++ stage), SERVE_CLOSED_S (5 s; 1 on cpu),
#   SERVE_PYTHON (python3), SERVE_PACK (.carry/serve),
#   SERVE_WHEELS (.carry/wheels), FLASHTICK_COMMIT (recorded in every result),
#   SERVE_SERVER_FLAGS (more flashtickd flags for every server started, split on spaces,
#   e.g. "--pad-length-to 1024 --warm-up"; docs/serving.md).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
root=$PWD
out=${OUT:?set OUT to the results folder}
mkdir -p "$out/grpc"
t0=$(date +%s)
deadline=$((t0 + ${SERVE_BUDGET:-570}))
r=$(mktemp -d /tmp/gpu_serve.XXXXXX)
summary="$out/serve_summary.txt"
: > "$summary"
commit=${FLASHTICK_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
device=${SERVE_DEVICE:-cuda}
model_name=flashtick-bench

if [ "$device" = cpu ]; then
  # A few seconds a stage on 2 shared cores: proves the path, measures nothing.
  d_model="--width 32 --heads 2 --layers 2 --max-context 4096"; d_n=64,256; d_clients=1,2
  d_reps=3; d_ticks=64; d_load_n=64; d_rates=5,10; d_load_s=1; d_warm_s=0.5; d_slo=1000
  # --no-stop: both rates run, so the sweep itself is exercised; with a second of samples
  # on a busy machine one scheduling hiccup can read as a knee (generator_behind).
  d_inproc=0; load_extra=(--no-stop); threads=(--threads 1)
  d_under_sweep=0; d_sweep_preset=demo; d_sweep_rates=5; d_sweep_ticks=64
  d_last_rates=5; d_closed_s=1
else
  d_model="--width 256 --heads 4 --layers 2 --max-context 32768"; d_n=512,4096,23400
  d_clients=1,8; d_reps=50; d_ticks=23400; d_load_n=23400
  d_rates=50,100,200,400,800,1600,3200; d_load_s=10; d_warm_s=2; d_slo=10; d_inproc=1
  # The GPU machine has 16 cores: the generator may spin for exact send times.
  load_extra=(--spin); threads=()
  d_under_sweep=1; d_sweep_preset=planted; d_sweep_rates=100; d_sweep_ticks=4000
  d_last_rates=100,200,400,800,1600; d_closed_s=5
fi
model_flags=${SERVE_MODEL:-$d_model}
n=${SERVE_N:-$d_n}; clients=${SERVE_CLIENTS:-$d_clients}; reps=${SERVE_REPS:-$d_reps}
ticks=${SERVE_TICKS:-$d_ticks}; load_n=${SERVE_LOAD_N:-$d_load_n}; rates=${SERVE_RATES-$d_rates}
load_s=${SERVE_LOAD_S:-$d_load_s}; slo=${SERVE_SLO_MS:-$d_slo}; inproc=${SERVE_INPROC:-$d_inproc}
last_rates=${SERVE_LAST_ONLY_RATES-$d_last_rates}
pack=${SERVE_PACK:-.carry/serve}
wheels=${SERVE_WHEELS:-.carry/wheels}
under_sweep=${SERVE_UNDER_SWEEP:-$d_under_sweep}; sweep_preset=${SERVE_SWEEP_PRESET:-$d_sweep_preset}
sweep_rates=${SERVE_SWEEP_RATES:-$d_sweep_rates}; sweep_ticks=${SERVE_SWEEP_TICKS:-$d_sweep_ticks}
priority=${SERVE_PRIORITY:-high}
small_heads=${SERVE_SMALL_HEADS:-1}
# SERVE_GRPC_LAST_ONLY=1: serve_latency.py also times each ModelInfer row with last_only.
grpc_last=""; [ "${SERVE_GRPC_LAST_ONLY:-0}" = 1 ] && grpc_last=--last-only
decode_graphs=${SERVE_DECODE_GRAPHS:-1}
small_model=flashtick-d16

note() { echo "$*" | tee -a "$summary"; }
left() { echo $((deadline - $(date +%s))); }
stage() { note "== $1 ($(date -u +%T), $(left) s left)"; }
# limit CAP: a stage's timeout in seconds, CAP or less (20 s stay for the end).
limit() { local l=$(($(left) - 20)); if [ "$1" -lt "$l" ]; then echo "$1"; else echo "$l"; fi; }
# cut_note RC LIMIT WHAT: what an exit by timeout means for the results.
cut_note() { if [ "$1" -eq 124 ]; then echo " (cut at its $2 s limit; the $3 it finished are kept)"; fi; }
status=""
srv=""
gsrv=""  # the --decode-graphs server of its stage, while it runs
# stop_flashtickd PID NAME: SIGTERM, up to 10 s to drain, then SIGKILL; says how it ended.
stop_flashtickd() {
  if kill -0 "$1" 2> /dev/null; then
    kill -TERM "$1"
    for _ in $(seq 100); do kill -0 "$1" 2> /dev/null || break; sleep 0.1; done
    if kill -0 "$1" 2> /dev/null; then kill -KILL "$1"; note "$2 did not stop in 10 s: killed"; fi
  fi
  wait "$1" 2> /dev/null
  note "$2 exit $? (0: drained and stopped on SIGTERM)"
}
stop_server() {
  [ -n "$srv" ] || return 0
  stop_flashtickd "$srv" flashtickd
  srv=""
}
finish() {
  if [ -n "$gsrv" ]; then stop_flashtickd "$gsrv" "flashtickd --decode-graphs"; gsrv=""; fi
  stop_server
  tar czf "$out/logs.tgz" -C "$r" --exclude=./models --exclude=./site --exclude=./inproc \
    --exclude=./experiments . 2> /dev/null
  note "== end ($(date -u +%T), $(($(date +%s) - t0)) s):${status:- nothing ran}"
  rm -rf "$r"
}
trap finish EXIT
trap 'note "interrupted"; exit 130' INT TERM
fail() { note "FAILED: $*"; status="$status FAILED"; exit 1; }

gpu=none
if [ "$device" != cpu ]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
  gpu=${gpu:-unknown}
fi
note "gpu_serve: commit $commit; device $device; gpu: $gpu; $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC')"
note "this machine: $(sed -n 's/^PRETTY_NAME=//p' /etc/os-release 2> /dev/null | tr -d '"'), $(ldd --version 2>&1 | head -1)"

stage pack
if [ ! -x "$pack/bin/flashtickd" ] && [ -f "$pack.tar.xz" ]; then
  { mkdir -p "$pack" && tar -C "$pack" -xJf "$pack.tar.xz"; } || fail "cannot unpack $pack.tar.xz"
fi
[ -x "$pack/bin/flashtickd" ] || fail "no $pack/bin/flashtickd nor $pack.tar.xz: run scripts/pack_server.sh BUILD_DIR on the development machine and carry .carry/serve.tar.xz"
pack=$(cd "$pack" && pwd)
note "pack: $(sed -n '1,2s/^# //p' "$pack/MANIFEST" | paste -sd ';' - | sed 's/;/; /')"
(cd "$pack" && sha256sum -c --quiet SHA256SUMS) > "$r/sha256.log" 2>&1 || fail "pack checksums differ (sha256.log in logs.tgz)"
note "pack checksums ok: $(grep -vc '^#' "$pack/MANIFEST") files"
# The pack leaves cuBLAS and the driver to this machine (scripts/pack_server.sh says
# why). If the loader's default paths lack one, look where CUDA and PyTorch keep them.
# LD_LIBRARY_PATH is set for the packed binaries only: Python and PyTorch keep their
# own OpenSSL, zlib and protobuf.
serve_ld="$pack/lib"
missing() { LD_LIBRARY_PATH="$serve_ld" ldd "$pack/bin/flashtickd" | awk '/not found/ {print $1}'; }
if [ -n "$(missing)" ]; then
  cands=(/usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib)
  while IFS= read -r d; do cands+=("$d"); done < <(python3 -c 'import glob, os, site
for p in site.getsitepackages():
    print("\n".join(glob.glob(os.path.join(p, "nvidia", "*", "lib"))))' 2> /dev/null)
  for lib in $(missing); do
    for d in "${cands[@]}"; do
      if [ -e "$d/$lib" ]; then serve_ld="$serve_ld:$d"; note "$lib from $d"; break; fi
    done
  done
fi
LD_LIBRARY_PATH="$serve_ld" ldd "$pack/bin/flashtickd" > "$r/ldd.txt" 2>&1
[ -z "$(missing)" ] || fail "flashtickd still lacks: $(missing | paste -sd ' ' -) (ldd.txt in logs.tgz)"
note "libraries from this machine: $(grep '=>' "$r/ldd.txt" | grep -v "$pack/lib/" | awk '{print $1}' | paste -sd ' ' -)"
status="$status pack=ok"

stage "client python"
# The wheels are built for the GPU image's python3 (3.12); a machine whose python cannot
# install them (the development machine's 3.11) falls back to the repository's .venv,
# which has the same packages.
py=""
pp=""
for cand in "${SERVE_PYTHON:-python3}" "$root/.venv/bin/python"; do
  command -v "$cand" > /dev/null 2>&1 || continue
  pp=""
  if compgen -G "$wheels/*.whl" > /dev/null; then
    rm -rf "$r/site"
    echo "== $cand" >> "$r/wheels.log"
    if "$cand" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
         --target "$r/site" "$wheels"/*.whl >> "$r/wheels.log" 2>&1; then
      pp="$r/site"
    else
      note "the wheels in $wheels do not install for $cand ($("$cand" -V 2>&1)); trying it as it is"
    fi
  fi
  if PYTHONPATH="$pp${PYTHONPATH:+:$PYTHONPATH}" "$cand" -c \
       'import grpc, numpy, tritonclient.grpc, grpc_reflection' >> "$r/wheels.log" 2>&1; then
    py=$cand
    break
  fi
done
client_pp="$pp${PYTHONPATH:+:$PYTHONPATH}"
if [ -n "$py" ]; then
  if [ -n "$pp" ]; then from="the wheels in $wheels"; else from="its own packages"; fi
  note "client python: $py ($("$py" -V 2>&1)), grpcio $(PYTHONPATH="$client_pp" "$py" -c 'import grpc; print(grpc.__version__)'), from $from"
else
  note "no python with grpcio, tritonclient and grpc_reflection (wheels.log in logs.tgz): the grpc stage is skipped"
fi

stage "model and server"
# shellcheck disable=SC2086  # model_flags is a list of flags
LD_LIBRARY_PATH="$serve_ld" "$pack/bin/flashtick_make_model" --out "$r/models" --name "$model_name" \
  --seed 1 $model_flags > "$r/make_model.log" 2>&1 || fail "flashtick_make_model: $(tail -2 "$r/make_model.log")"
note "model $model_name: $model_flags --seed 1 ($(tail -1 "$r/make_model.log"))"
if [ "$small_heads" = 1 ]; then
  # flashtick_make_model's defaults: the model a user following docs/serving.md makes.
  LD_LIBRARY_PATH="$serve_ld" "$pack/bin/flashtick_make_model" --out "$r/models" \
    --name "$small_model" --seed 1 > "$r/make_model_d16.log" 2>&1 \
    || fail "flashtick_make_model (defaults): $(tail -2 "$r/make_model_d16.log")"
  note "model $small_model: flashtick_make_model's defaults --seed 1 ($(tail -1 "$r/make_model_d16.log"))"
fi
base_flags=(--listen 127.0.0.1:0 --metrics-port 0 --model-repository "$r/models" --device "$device"
            --max-queue 1024 --shutdown-grace-seconds 5
            --serve-stream-priority "$priority" "${threads[@]}")
read -r -a extra_flags <<< "${SERVE_SERVER_FLAGS:-}"
base_flags+=("${extra_flags[@]}")
server_flags=("${base_flags[@]}" --experiment-dir "$r/experiments")
# start_flashtickd LOG WAIT_S FLAGS...: starts the packed server in the background, then
# waits up to WAIT_S for its ready line; sets started_pid, and started_addr ("" if it
# never got ready).
start_flashtickd() {
  local log=$1 wait_s=$2
  shift 2
  LD_LIBRARY_PATH="$serve_ld" "$pack/bin/flashtickd" "$@" > "$log" 2>&1 &
  started_pid=$!
  started_addr=""
  local wait_until=$(($(date +%s) + $(limit "$wait_s")))
  while [ "$(date +%s)" -lt "$wait_until" ]; do
    started_addr=$(sed -n 's/.*flashtickd ready grpc=\([^ ]*\) .*/\1/p' "$log" | head -1)
    [ -n "$started_addr" ] && break
    kill -0 "$started_pid" 2> /dev/null || break
    sleep 0.2
  done
}
# tick_stream LIMIT ADDR MODEL NAME: a day of $ticks steps through load_gen --tick-stream
# (the C++ client), results in $r/NAME.jsonl and its output in $r/NAME.log; load_gen's
# exit status (124: cut at LIMIT s, and then no tick line).
tick_stream() {
  timeout "$1" env LD_LIBRARY_PATH="$serve_ld" "$pack/bin/load_gen" --server "$2" \
    --model "$3" --tick-stream --ticks "$ticks" --gpu "$gpu" --commit "$commit" \
    --json "$r/$4.jsonl" > "$r/$4.log" 2>&1
}
note "flashtickd ${server_flags[*]}"
start_flashtickd "$out/flashtickd.log" 120 "${server_flags[@]}"
srv=$started_pid
addr=$started_addr
[ -n "$addr" ] || fail "flashtickd not ready: $(tail -3 "$out/flashtickd.log")"
mport=$(sed -n 's/.*flashtickd ready grpc=[^ ]* metrics=\([0-9]*\).*/\1/p' "$out/flashtickd.log" | head -1)
healthy=1
for _ in $(seq 60); do
  if LD_LIBRARY_PATH="$serve_ld" "$pack/bin/flashtick" --server "$addr" --timeout 5 health > "$r/health.log" 2>&1; then
    healthy=0
    break
  fi
  sleep 0.5
done
[ $healthy -eq 0 ] || fail "flashtickd at $addr not SERVING: $(tail -2 "$r/health.log")"
LD_LIBRARY_PATH="$serve_ld" "$pack/bin/flashtick" --server "$addr" models > "$r/models.log" 2>&1
note "flashtickd SERVING at $addr ($(($(date +%s) - t0)) s in); $(grep -o 'models=.*' "$out/flashtickd.log" | head -1)"
status="$status server=ok"

stage "grpc: serve_latency.py (closed loop: ModelInfer at N = $n, clients $clients; TickStream over $ticks steps), then load_gen --tick-stream"
if [ -z "$py" ]; then
  note "serve_latency.py skipped: no client python"
  status="$status grpc=skipped"
else
  lim=$(limit 240)
  if [ "$lim" -lt 10 ]; then
    note "skipped: $lim s left"
    status="$status grpc=skipped"
  else
    timeout "$lim" env PYTHONPATH="$client_pp" PYTHONUNBUFFERED=1 "$py" bench/serve_latency/serve_latency.py \
      --server "$addr" --model "$model_name" --out "$out/grpc" --n "$n" --clients "$clients" \
      --reps "$reps" --warmup 3 --ticks "$ticks" --commit "$commit" $grpc_last > "$r/grpc.log" 2>&1
    rc=$?
    note "serve_latency.py exit $rc$(cut_note $rc "$lim" rows)"
    [ $rc -eq 0 ] || tail -4 "$r/grpc.log" | tee -a "$summary"
    status="$status grpc=$rc"
  fi
fi
# The same day through a C++ client: what the Python client's interpreter and grpcio
# threads add to a tick is then the difference of the two rows. It writes its tick
# line only when the day is done, so a cut run leaves none.
lim=$(limit 60)
if [ "$ticks" -lt 1 ] 2> /dev/null || [ "$lim" -lt 10 ]; then
  note "load_gen --tick-stream skipped: $ticks ticks, $lim s left"
  status="$status ticks_cpp=skipped"
else
  tick_stream "$lim" "$addr" "$model_name" ticks_cpp
  rc=$?
  note "load_gen --tick-stream exit $rc$(if [ $rc -eq 124 ]; then echo " (cut at its $lim s limit: no tick line)"; fi)"
  tail -2 "$r/ticks_cpp.log" | tee -a "$summary"
  grep '"what":"tick"' "$r/ticks_cpp.jsonl" >> "$out/grpc/results.jsonl" 2> /dev/null
  status="$status ticks_cpp=$rc"
fi
if [ -s "$out/grpc/results.jsonl" ]; then
  "${py:-python3}" bench/serve_latency/latency_table.py "$out/grpc/results.jsonl" > "$out/grpc/table.md" 2>&1
  tee -a "$summary" < "$out/grpc/table.md"
fi

stage "decode graphs: a second flashtickd with --decode-graphs, the same day through load_gen --tick-stream"
# The A/B of CUDA graphs for the decode step (docs/serving.md, "Decode graphs"): the
# C++ tick client against a server that replays each session's captured step, beside
# the row above from the server that launches op by op. No Experiments on this one.
if [ "$decode_graphs" != 1 ] || [ "$ticks" -lt 1 ] 2> /dev/null; then
  note "skipped: SERVE_DECODE_GRAPHS=$decode_graphs, $ticks ticks"
else
  start_flashtickd "$r/flashtickd_graphs.log" 60 "${base_flags[@]}" --decode-graphs
  gsrv=$started_pid
  gaddr=$started_addr
  lim=$(limit 60)
  if [ -z "$gaddr" ] || [ "$lim" -lt 10 ]; then
    note "not run: server ${gaddr:-not ready}, $lim s left"
    status="$status ticks_graphs=skipped"
  else
    tick_stream "$lim" "$gaddr" "$model_name" ticks_graphs
    rc=$?
    note "load_gen --tick-stream against --decode-graphs: exit $rc"
    tail -2 "$r/ticks_graphs.log" | tee -a "$summary"
    grep -i "decode graphs" "$r/flashtickd_graphs.log" | head -2 | tee -a "$summary"
    grep '"what":"tick"' "$r/ticks_graphs.jsonl" 2> /dev/null \
      | sed 's/"impl":"load_gen_grpc"/"impl":"load_gen_grpc_graphs"/' >> "$out/grpc/results.jsonl"
    "${py:-python3}" bench/serve_latency/latency_table.py "$out/grpc/results.jsonl" \
      > "$out/grpc/table.md" 2>&1
    status="$status ticks_graphs=$rc"
  fi
  stop_flashtickd "$gsrv" "flashtickd --decode-graphs"
  gsrv=""
fi

stage "small heads: $small_model (D = 16), a day of $ticks steps through ModelInfer and TickStream"
if [ "$small_heads" != 1 ]; then
  note "skipped: SERVE_SMALL_HEADS=$small_heads"
else
  LD_LIBRARY_PATH="$serve_ld" "$pack/bin/flashtick" --server "$addr" models > "$r/models_d16.log" 2>&1
  note "model list: $(grep -i -m1 "$small_model" "$r/models_d16.log")"
  grep -i "$small_model" "$out/flashtickd.log" | grep -i -m2 "kernel\|refus\|unsupported" | tee -a "$summary"
  # One full day a request, open loop at 2 /s for 3 s (6 days), after a 1 s warm-up.
  lim=$(limit 60)
  if [ "$lim" -lt 10 ]; then
    note "skipped: $lim s left"
    status="$status d16=skipped"
  else
    timeout "$lim" env LD_LIBRARY_PATH="$serve_ld" "$pack/bin/load_gen" --server "$addr" \
      --model "$small_model" --n "$ticks" --rates 2 --duration-s 3 --warmup-s 1 --slo-ms 1000 \
      --no-stop --gpu "$gpu" --commit "$commit" --json "$r/d16_day.jsonl" > "$r/d16_day.log" 2>&1
    rc_day=$?
    note "load_gen ModelInfer day (N = $ticks) on $small_model: exit $rc_day"
    tail -3 "$r/d16_day.log" | tee -a "$summary"
    lim=$(limit 90)
    tick_stream "$lim" "$addr" "$small_model" d16_ticks
    rc_ticks=$?
    note "load_gen --tick-stream ($ticks ticks) on $small_model: exit $rc_ticks"
    tail -2 "$r/d16_ticks.log" | tee -a "$summary"
    # Their JSON lines stay in logs.tgz (d16_day.jsonl, d16_ticks.jsonl): the device
    # call returns at most 8 files, and the summary has both tables.
    status="$status d16_day=$rc_day d16_ticks=$rc_ticks"
  fi
fi

# scrape: the server's /metrics text on stdout (nothing when the port is off).
scrape() {
  [ -n "$mport" ] && [ "$mport" != "-1" ] || return 0
  python3 -c 'import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode())' \
    "$mport" 2> /dev/null
}
# split FROM TO: the server's mean request, queue, compute and rest per method between
# two scrapes (bench/serve_latency/metrics_split.py), into the summary.
split() {
  [ -s "$1" ] && [ -s "$2" ] || return 0
  python3 bench/serve_latency/metrics_split.py "$1" "$2" 2>&1 | tee -a "$summary"
}

# run_load_gen LIMIT RATES JSON LOG [FLAG...]: load_gen's open-loop sweep at N = $load_n,
# with any further flags (e.g. --last-only).
run_load_gen() {
  local lim=$1 rates_=$2 json=$3 log=$4
  shift 4
  timeout "$lim" env LD_LIBRARY_PATH="$serve_ld" "$pack/bin/load_gen" --server "$addr" \
    --model "$model_name" --n "$load_n" --rates "$rates_" --duration-s "$load_s" \
    --warmup-s "${SERVE_WARMUP_S:-$d_warm_s}" --slo-ms "$slo" --gpu "$gpu" --commit "$commit" \
    --json "$json" "${load_extra[@]}" "$@" > "$log" 2>&1
}

# Closed loop with C++ clients: K clients on their own connections, each sending when
# answered, the workload the issue's "1 client" and "8 clients" bars name, without the
# Python client's interpreter in the path (bench/load_gen/closed_loop_load.h). Every
# step's probabilities, then the last step only; lines appended to load.jsonl
# (op "model_infer_closed") and to grpc/results.jsonl, whose table shows them in the
# C++ client column beside the Python client's closed-loop rows.
closed_clients=${SERVE_CLOSED_CLIENTS-1,8}
stage "closed loop: load_gen --clients $closed_clients (C++ clients, N = $load_n, ${SERVE_CLOSED_S:-$d_closed_s} s each)"
lim=$(limit 90)
if [ -z "$closed_clients" ] || [ "$lim" -lt 10 ]; then
  note "skipped: ${closed_clients:-no client counts (SERVE_CLOSED_CLIENTS empty)}, $lim s left"
  status="$status closed=skipped"
else
  for flag in "" --last-only; do
    timeout "$lim" env LD_LIBRARY_PATH="$serve_ld" "$pack/bin/load_gen" --server "$addr" \
      --model "$model_name" --n "$load_n" --clients "$closed_clients" \
      --duration-s "${SERVE_CLOSED_S:-$d_closed_s}" --warmup-s 1 --gpu "$gpu" --commit "$commit" \
      --json "$r/closed$flag.jsonl" $flag > "$r/closed$flag.log" 2>&1
    rc=$?
    note "load_gen --clients $closed_clients $flag exit $rc"
    tee -a "$summary" < "$r/closed$flag.log"
    grep model_infer_closed "$r/closed$flag.jsonl" >> "$out/load.jsonl" 2> /dev/null
    grep model_infer_closed "$r/closed$flag.jsonl" >> "$out/grpc/results.jsonl" 2> /dev/null
    status="$status closed${flag:+_last}=$rc"
    lim=$(limit 90)
    [ "$lim" -lt 10 ] && break
  done
  "${py:-python3}" bench/serve_latency/latency_table.py "$out/grpc/results.jsonl" \
    > "$out/grpc/table.md" 2>&1
  tee -a "$summary" < "$out/grpc/table.md"
fi

stage "load: load_gen (open loop, N = $load_n, rates $rates /s, $load_s s each, SLO p99 $slo ms)"
lim=$(limit 200)
if [ -z "$rates" ] || [ "$lim" -lt 10 ]; then
  note "skipped: ${rates:-no rates (SERVE_RATES empty)}, $lim s left"
  status="$status load=skipped"
else
  scrape > "$r/metrics_load_before.txt"
  run_load_gen "$lim" "$rates" "$out/load.jsonl" "$r/load_gen.log"
  rc=$?
  note "load_gen exit $rc$(cut_note $rc "$lim" rates)"
  head -40 "$r/load_gen.log" | tee -a "$summary"
  grep '"what":"summary"' "$out/load.jsonl" 2> /dev/null | tee -a "$summary"
  scrape > "$r/metrics_load_after.txt"
  note "server-side split of the load stage's requests (every rate together):"
  split "$r/metrics_load_before.txt" "$r/metrics_load_after.txt"
  status="$status load=$rc"
fi

# The same open loop asking for the last step only: a trading client's question (the
# call for the next step, given the day so far), which the server answers with less work
# (docs/serving.md, "The last step only"). Its lines follow the load stage's in load.jsonl
# ("last_only": true in each).
stage "load, last step only: load_gen --last-only (open loop, N = $load_n, rates $last_rates /s)"
lim=$(limit 120)
if [ -z "$last_rates" ] || [ "$lim" -lt 10 ]; then
  note "skipped: ${last_rates:-no rates (SERVE_LAST_ONLY_RATES empty)}, $lim s left"
  status="$status load_last_only=skipped"
else
  scrape > "$r/metrics_last_before.txt"
  run_load_gen "$lim" "$last_rates" "$r/load_last_only.jsonl" "$r/load_last_only.log" --last-only
  rc=$?
  note "load_gen --last-only exit $rc$(cut_note $rc "$lim" rates)"
  head -40 "$r/load_last_only.log" | tee -a "$summary"
  cat "$r/load_last_only.jsonl" >> "$out/load.jsonl" 2> /dev/null
  scrape > "$r/metrics_last_after.txt"
  note "server-side split of the last-step requests:"
  split "$r/metrics_last_before.txt" "$r/metrics_last_after.txt"
  status="$status load_last_only=$rc"
fi

# train_steps: optimizer steps the server's sweep arms have taken so far.
train_steps() { scrape | awk '/^flashtick_train_step_seconds_count/ {s += $2} END {print s + 0}'; }

stage "under a sweep: $sweep_preset on the same device; load_gen at $sweep_rates /s, $sweep_ticks ticks (stream priority $priority)"
if [ "$under_sweep" != 1 ]; then
  note "skipped (SERVE_UNDER_SWEEP=$under_sweep; off by default with SERVE_DEVICE=cpu)"
  status="$status sweep=skipped"
elif [ "$(limit 300)" -lt 60 ]; then
  note "skipped: $(limit 300) s left"
  status="$status sweep=skipped"
else
  LD_LIBRARY_PATH="$serve_ld" timeout 30 "$pack/bin/flashtick" --server "$addr" sweep submit \
    --preset "$sweep_preset" > "$r/sweep_submit.log" 2>&1
  rc=$?
  exp=$(sed -n 's/^submitted \([^ ]*\) .*/\1/p' "$r/sweep_submit.log" | head -1)
  note "sweep submit exit $rc: $(tail -1 "$r/sweep_submit.log")"
  # The arms first build their data; load starts once a step has been taken.
  wait_until=$(($(date +%s) + $(limit 150) / 2))
  steps0=0
  while [ "$(date +%s)" -lt "$wait_until" ]; do
    steps0=$(train_steps)
    [ "$steps0" -gt 0 ] 2> /dev/null && break
    sleep 1
  done
  if ! [ "$steps0" -gt 0 ] 2> /dev/null; then
    note "the sweep took no training step in time: measuring nothing under it"
    status="$status sweep=no_training"
  else
    note "sweep training ($steps0 steps so far, $(($(date +%s) - t0)) s in)"
    lim=$(limit 120)
    scrape > "$r/metrics_sweep_before.txt"
    run_load_gen "$lim" "$sweep_rates" "$r/load_under_sweep.jsonl" "$r/load_under_sweep.log"
    rc=$?
    note "load_gen under the sweep exit $rc$(cut_note $rc "$lim" rates)"
    head -20 "$r/load_under_sweep.log" | tee -a "$summary"
    if [ -n "$py" ] && [ "$(limit 120)" -ge 10 ]; then
      lim=$(limit 120)
      timeout "$lim" env PYTHONPATH="$client_pp" PYTHONUNBUFFERED=1 "$py" bench/serve_latency/serve_latency.py \
        --server "$addr" --model "$model_name" --out "$r/grpc_under_sweep" --n "" \
        --ticks "$sweep_ticks" --commit "$commit" > "$r/grpc_under_sweep.log" 2>&1
      rc=$?
      note "tick stream under the sweep exit $rc$(cut_note $rc "$lim" rows)"
    fi
    if [ "$(limit 60)" -ge 10 ]; then
      mkdir -p "$r/grpc_under_sweep"
      timeout "$(limit 60)" env LD_LIBRARY_PATH="$serve_ld" "$pack/bin/load_gen" --server "$addr" \
        --model "$model_name" --tick-stream --ticks "$sweep_ticks" --gpu "$gpu" --commit "$commit" \
        --json "$r/ticks_cpp_under_sweep.jsonl" > "$r/ticks_cpp_under_sweep.log" 2>&1
      note "load_gen --tick-stream under the sweep exit $?"
      grep '"what":"tick"' "$r/ticks_cpp_under_sweep.jsonl" >> "$r/grpc_under_sweep/results.jsonl" 2> /dev/null
    fi
    if [ -s "$r/grpc_under_sweep/results.jsonl" ]; then
      "${py:-python3}" bench/serve_latency/latency_table.py "$r/grpc_under_sweep/results.jsonl" 2>&1 | tee -a "$summary"
    fi
    scrape > "$r/metrics_sweep_after.txt"
    note "server-side split under the sweep:"
    split "$r/metrics_sweep_before.txt" "$r/metrics_sweep_after.txt"
    steps1=$(train_steps)
    note "the sweep took $((steps1 - steps0)) training steps while it was measured"
    status="$status sweep=$rc"
  fi
  LD_LIBRARY_PATH="$serve_ld" timeout 20 "$pack/bin/flashtick" --server "$addr" sweep cancel "$exp" \
    > "$r/sweep_cancel.log" 2>&1
  note "sweep cancel exit $?"
fi

stage "server stop"
if [ -n "$mport" ] && [ "$mport" != "-1" ]; then
  scrape > "$r/metrics.txt"
  note "metrics: $(grep -c '^flashtick_' "$r/metrics.txt") flashtick_* samples (metrics.txt in logs.tgz)"
fi
# In process and PyTorch run after the server stopped, each with the GPU to itself.
stop_server

stage "in process and PyTorch: gpu_serve_latency.sh"
if [ "$inproc" != 1 ]; then
  note "skipped (SERVE_INPROC=$inproc; off by default with SERVE_DEVICE=cpu)"
  status="$status inproc=skipped"
else
  lim=$(limit 600)
  # Its build alone takes up to 240 s; with less left it would measure nothing.
  if [ "$lim" -lt 240 ]; then
    note "skipped: $lim s left, it needs ~6 min; run it in a call of its own: OUT=dir bash bench/scripts/gpu_serve_latency.sh"
    status="$status inproc=skipped"
  else
    mkdir -p "$r/inproc"
    timeout "$lim" env -u PYTHONPATH OUT="$r/inproc" SL_MODEL="$model_flags" FLASHTICK_COMMIT="$commit" \
      bash bench/scripts/gpu_serve_latency.sh > "$r/inproc_run.log" 2>&1
    rc=$?
    note "gpu_serve_latency.sh exit $rc$(cut_note $rc "$lim" stages); its summary:"
    sed 's/^/  /' "$r/inproc/serve_latency_summary.txt" 2> /dev/null | tee -a "$summary"
    cp "$r/inproc_run.log" "$r/inproc/" 2> /dev/null
    tar czf "$out/inproc.tgz" -C "$r/inproc" . 2> /dev/null
    status="$status inproc=$rc"
  fi
fi
