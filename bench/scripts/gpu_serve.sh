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
#   5a. promotion (SERVE_PROMOTE, 1; 0 skips): a tiny sweep (two arms, width 32, 2 heads
#      of D = 16; on the server's device) submitted with `flashtick sweep submit --watch`
#      until it SUCCEEDS; a `flashtick stream` opened on the served version (1); then
#      `flashtick sweep promote EXP --model $model_name` makes the winner version 2,
#      loaded without a restart. Checked: the model list and RepositoryIndex (READY),
#      ModelInfer on latest, 1 and 2 (which version answered) and load_gen on 2; the
#      stream open across the promotion ends on version 1 with the probabilities of a
#      stream pinned to version 1 (a stream opened after it gets version 2). Any check
#      that fails is a "FAILED (promote)" line and promote=1;
#   6. stop the server (its /metrics scraped first), then, when SERVE_INPROC is set and
#      enough time is left, bench/scripts/gpu_serve_latency.sh (the in-process CUDA and
#      PyTorch rows: same model flags and seed, so the same weights) under what is left.
# One deadline: SERVE_BUDGET seconds from the start (default 570, inside the device
# tool's 600 s a command). Each stage's timeout is the smaller of its own cap and the time
# left less 20 s kept for shutdown and packing the logs, so a slow stage shortens the ones
# after it instead of losing everything. Results go to $OUT as they come (8 files; the
# device tool returns at most 8, so anything more goes into logs.tgz):
#   serve_summary.txt           read first: pack, machine, model, each stage's exit and table
#   flashtickd.log              the server's log
#   grpc/results.jsonl, grpc/table.md   serve_latency.py's JSON lines (one per row) and
#                               load_gen --tick-stream's tick line, and their table
#   load.jsonl                  load_gen's JSON lines (meta, one per rate, summary)
#   inproc.tgz                  gpu_serve_latency.sh's results and logs, when it ran
#   promote.json                the promotion stage: commands, exits, timings, version,
#                               checks (its logs and stream CSVs, promote_*, in logs.tgz)
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
#   SERVE_PROMOTE (1; 0 skips stage 5a), SERVE_PROMOTE_TICKS (its stream's steps: 23400;
#   4096 on cpu; at most the model's max_context), SERVE_PROMOTE_SWEEP_DEVICE (auto: the
#   server's device; cpu trains the promoted arms on the CPU),
#   SERVE_PYTHON (python3), SERVE_PACK (.carry/serve),
#   SERVE_WHEELS (.carry/wheels), FLASHTICK_COMMIT (recorded in every result),
#   SERVE_SERVER_FLAGS (more flashtickd flags for every server started, split on spaces,
#   e.g. "--pad-length-to 1024 --warm-up"; docs/serving.md).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tree_commit.sh"  # tree_commit
cd "$(dirname "$0")/../.." || exit 1
source bench/scripts/pack_ld.sh
root=$PWD
out=${OUT:?set OUT to the results folder}
mkdir -p "$out/grpc"
t0=$(date +%s)
deadline=$((t0 + ${SERVE_BUDGET:-570}))
r=$(mktemp -d /tmp/gpu_serve.XXXXXX)
summary="$out/serve_summary.txt"
: > "$summary"
commit=$(tree_commit)
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
  # The promotion stage's stream: the C = 32 model's whole context (~3 s here).
  d_promote_ticks=4096; d_promote_rate=20; d_promote_infer_s=1
else
  d_model="--width 256 --heads 4 --layers 2 --max-context 32768"; d_n=512,4096,23400
  d_clients=1,8; d_reps=50; d_ticks=23400; d_load_n=23400
  d_rates=50,100,200,400,800,1600,3200; d_load_s=10; d_warm_s=2; d_slo=10; d_inproc=1
  # The GPU machine has 16 cores: the generator may spin for exact send times.
  load_extra=(--spin); threads=()
  d_under_sweep=1; d_sweep_preset=planted; d_sweep_rates=100; d_sweep_ticks=4000
  d_last_rates=100,200,400,800,1600; d_closed_s=5
  d_promote_ticks=23400; d_promote_rate=100; d_promote_infer_s=3
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
promote=${SERVE_PROMOTE:-1}; promote_ticks=${SERVE_PROMOTE_TICKS:-$d_promote_ticks}
promote_sweep_device=${SERVE_PROMOTE_SWEEP_DEVICE:-auto}
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
# The pack leaves cuBLAS, cuDNN and the driver to this machine (scripts/pack_server.sh
# says why); pack_ld.sh finds them where CUDA and PyTorch keep them.
serve_ld=$(pack_ld_path "$pack" flashtickd 2> "$r/pack_ld.log")
while IFS= read -r line; do note "$line"; done < "$r/pack_ld.log"
missing() { LD_LIBRARY_PATH="$serve_ld" ldd "$pack/bin/flashtickd" | awk '/not found/ {print $1}'; }
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

# Promotion (docs/serving.md, "Promoting a sweep arm"; the GPU half of the issue's "done
# when", whose CPU half is tests/experiments/sweep_promote_test.cc): a tiny sweep on this
# server, its winner promoted with `flashtick sweep promote` to the next version of the
# model measured above and served without a restart, while a tick stream opened on the
# old version runs across the promotion. Last of the server stages, because "latest"
# changes here. Each check that fails is a "FAILED (promote)" line and promote=1.
# now, since T, since_ms T: wall-clock seconds, and seconds or ms since T.
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.3f", b - a}'; }
since_ms() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.1f", (b - a) * 1000}'; }
# ft LIMIT ARGS...: the packed CLI against this server, under LIMIT s (its deadline too).
ft() {
  local lim=$1
  shift
  timeout "$lim" env LD_LIBRARY_PATH="$serve_ld" "$pack/bin/flashtick" --server "$addr" \
    --timeout "$lim" "$@"
}
# max_context CONFIG_JSON: the model's max_context (0 when unreadable).
max_context() { sed -n 's/.*"max_context": *\([0-9]*\).*/\1/p' "$1" 2> /dev/null | head -1 | grep . || echo 0; }
# promote_stream LIMIT NAME VERSION STEPS: `flashtick stream` of synthetic day 7 (the
# same quotes every time) on $model_name, VERSION "" for the latest; every step's
# probabilities in $r/NAME.csv, the output in $r/NAME.log.
promote_stream() {
  local v=()
  [ -n "$3" ] && v=(--model-version "$3")
  ft "$1" stream --model "$model_name" "${v[@]}" --synthetic-day 7 --steps "$4" \
    --print-every 0 --output "$r/$2.csv" > "$r/$2.log" 2>&1
}
# stream_version NAME: the version its session opened on; stream_line NAME: its last line.
stream_version() { sed -n 's/^session [^ ]*: [^ ]* v\([^ ]*\) on .*/\1/p' "$r/$1.log" | head -1; }
stream_line() { tail -1 "$r/$1.log"; }
# (0 before the file exists: the poll below starts while the stream opens.)
csv_rows() { local n=0; [ -f "$1" ] && n=$(wc -l < "$1"); echo $((n > 0 ? n - 1 : 0)); }
# maxdiff A.csv B.csv: the largest |p_A − p_B| over the steps both answered, and how many.
maxdiff() {
  awk -F, 'NR == FNR { if (FNR > 1) for (i = 2; i <= 4; i++) p[$1, i] = $i; next }
           FNR > 1 && (($1, 2) in p) { n++; for (i = 2; i <= 4; i++) {
             d = $i - p[$1, i]; if (d < 0) d = -d; if (d > m) m = d } }
           END { printf "%.3g %d\n", m + 0, n + 0 }' "$1" "$2"
}
promote_ok=1
pfail() { note "FAILED (promote): $*"; promote_ok=0; }
pj=("commit=$commit" "device=$device" "gpu=$gpu" "model=$model_name" "server=$addr")

stage "promote: a tiny sweep's winner as the next version of $model_name, loaded without a restart, a tick stream open across it"
if [ "$promote" != 1 ]; then
  note "skipped (SERVE_PROMOTE=$promote)"
  status="$status promote=skipped"
elif [ "$(limit 240)" -lt 60 ]; then
  note "skipped: $(limit 240) s left"
  status="$status promote=skipped"
else
  # 1. The sweep: tests/experiments/sweep_promote_test.cc's two arms (N = 8, 32) on 8
  # short planted days, widened to 2 heads of D = 16 (width 32), a head dim the CUDA
  # kernels serve (zero-padded to 64); the `demo` preset's D = 8 would be refused at load
  # on cuda. Under a second on 2 CPU cores; on cuda the arms train on the GPU ("auto": the
  # server's device; SERVE_PROMOTE_SWEEP_DEVICE=cpu trains them on the CPU instead).
  cat > "$r/promote_sweep.json" <<EOF
{"name": "promote", "contexts": [8, 32], "seeds": [1],
 "model": {"width": 32, "layers": 1, "heads": 2, "kv_heads": 2, "mlp_ratio": 2},
 "optimizer": {"learning_rate": 0.003, "warmup_steps": 2, "tokens_per_step": 256},
 "training": {"first_fold_epochs": 2, "epochs_per_fold": 1, "checkpoint_every_steps": 5},
 "data": {"synthetic": {"generator": "planted_cue", "seed": 3, "days": 8, "steps_per_day": 256,
                        "lags": [6, 24], "events_per_lag_per_day": 6, "drift_bps": 1.0}},
 "labels": {"horizon": 2},
 "walk_forward": {"train_days": 3, "test_days": 1},
 "gates": {"pbo_blocks": 4},
 "device": "$promote_sweep_device", "cpu_threads": 1}
EOF
  lim=$(limit 150)
  t=$(now)
  ft "$lim" sweep submit --config "$r/promote_sweep.json" --watch > "$r/promote_sweep.log" 2>&1
  rc_sweep=$?
  sweep_s=$(since "$t")
  pexp=$(sed -n 's/^submitted \([^ ]*\) .*/\1/p' "$r/promote_sweep.log" | head -1)
  note "flashtick sweep submit --config promote_sweep.json --watch: exit $rc_sweep in $sweep_s s (${pexp:-no experiment}; 0: SUCCEEDED)$(cut_note $rc_sweep "$lim" steps)"
  grep -E '^(arm +N|n[0-9]+ |verdict:|error:)' "$r/promote_sweep.log" | sed 's/^/  /' | tee -a "$summary"
  pj+=("sweep_config@=$r/promote_sweep.json" "experiment=$pexp" "sweep_exit:=$rc_sweep"
       "sweep_seconds:=$sweep_s" "sweep_device=$promote_sweep_device"
       "sweep_command=flashtick sweep submit --config promote_sweep.json --watch")
  if [ $rc_sweep -ne 0 ] || [ -z "$pexp" ]; then
    pfail "the sweep did not succeed: $(tail -1 "$r/promote_sweep.log")"
    [ -n "$pexp" ] && ft 20 sweep cancel "$pexp" > "$r/promote_sweep_cancel.log" 2>&1
  else
    # 2. A stream on the served version (latest: 1), open before the promotion: it has
    # answered rows when the promotion starts, and is still open when it returns.
    v1_ctx=$(max_context "$r/models/$model_name/1/config.json")
    steps=$promote_ticks
    [ "$v1_ctx" -gt 0 ] && [ "$steps" -gt "$v1_ctx" ] && steps=$v1_ctx
    lim=$(limit 120)
    timeout "$lim" env LD_LIBRARY_PATH="$serve_ld" "$pack/bin/flashtick" --server "$addr" \
      --timeout "$lim" stream --model "$model_name" --synthetic-day 7 --steps "$steps" \
      --print-every 0 --output "$r/promote_stream_open.csv" > "$r/promote_stream_open.log" 2>&1 &
    spid=$!
    # Its CSV is written in 4 KB blocks: the first rows show after ~90 answered steps.
    for _ in $(seq 200); do
      [ "$(csv_rows "$r/promote_stream_open.csv")" -gt 0 ] && break
      kill -0 "$spid" 2> /dev/null || break
      sleep 0.05
    done
    rows_before=$(csv_rows "$r/promote_stream_open.csv")
    # 3. The promotion: the winner (the verdict's best N) as version 1 + the highest on disk.
    t=$(now)
    ft "$(limit 60)" sweep promote "$pexp" --model "$model_name" > "$r/promote.log" 2>&1
    rc_promote=$?
    promote_ms=$(since_ms "$t")
    open_after=no
    kill -0 "$spid" 2> /dev/null && open_after=yes
    rows_after=$(csv_rows "$r/promote_stream_open.csv")
    pcmd="flashtick sweep promote $pexp --model $model_name"
    note "$pcmd: exit $rc_promote in $promote_ms ms: $(tail -1 "$r/promote.log")"
    if [ $rc_promote -ne 0 ] && grep -q 'tied at the top' "$r/promote.log"; then
      # A verdict without a single best N names no winner (docs/serving.md): the longest arm.
      pcmd="$pcmd --arm n32"
      t=$(now)
      ft "$(limit 60)" sweep promote "$pexp" --model "$model_name" --arm n32 > "$r/promote.log" 2>&1
      rc_promote=$?
      promote_ms=$(since_ms "$t")
      kill -0 "$spid" 2> /dev/null || open_after=no
      note "no single best N: $pcmd: exit $rc_promote in $promote_ms ms: $(tail -1 "$r/promote.log")"
    fi
    note "the stream opened before it: $rows_before steps answered when the promotion started, $rows_after when it returned (the CSV is written in 4 KB blocks); still open then: $open_after"
    parm=$(sed -n 's/.*: promoted arm \([^ ]*\) to model .*/\1/p' "$r/promote.log" | head -1)
    pver=$(sed -n 's/.*: promoted arm .* version \([0-9]*\) (.*/\1/p' "$r/promote.log" | head -1)
    ppath=$(sed -n 's/.*: promoted arm .* version [0-9]* (\(.*\))$/\1/p' "$r/promote.log" | head -1)
    pj+=("promote_command=$pcmd" "promote_exit:=$rc_promote" "promote_ms:=$promote_ms" "arm=$parm"
         "version:=$pver" "path=$ppath" "stream_rows_before:=$rows_before"
         "stream_rows_after:=$rows_after" "stream_open_after=$open_after")
    if [ $rc_promote -ne 0 ] || [ -z "$pver" ]; then
      pfail "flashtick sweep promote exit $rc_promote: $(tail -2 "$r/promote.log" | paste -sd ' ' -)"
    else
      cp "$ppath/config.json" "$r/promote_config.json" 2> /dev/null
      pctx=$(max_context "$ppath/config.json")
      [ "$pctx" -gt 0 ] || pctx=32
      grep "'$model_name' version $pver " "$out/flashtickd.log" | sed 's/^/  /' | tee -a "$summary"
      # The model list (ModelMetadata: loaded versions) and, with the Python client,
      # RepositoryIndex's states and ModelInfer on latest, 1 and the new version, each
      # answer's model_version checked.
      ft 30 models > "$r/promote_models.log" 2>&1
      versions=$(sed -n "s/^model $model_name  versions \[\(.*\)\].*/\1/p" "$r/promote_models.log")
      note "flashtick models: $model_name versions [$versions]"
      pj+=("models_versions:=[$versions]")
      case ", $versions, " in
        *", $pver, "*) ;;
        *) pfail "version $pver is not in the model list ([$versions])" ;;
      esac
      if [ -z "$py" ]; then
        note "RepositoryIndex states and the answering versions not checked: no client python"
      else
        timeout "$(limit 60)" env PYTHONPATH="$client_pp" "$py" - "$addr" "$model_name" "$pver" "$pctx" \
          > "$r/promote_check.json" 2> "$r/promote_check.log" <<'PY'
import json, sys, time
import numpy as np
import tritonclient.grpc as grpcclient
addr, model, version, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
client = grpcclient.InferenceServerClient(addr)
index = client.get_model_repository_index(as_json=True).get("models", [])
states = {f'{m["name"]}/{m.get("version", "")}': m.get("state", "") for m in index}
x = np.random.default_rng(1).normal(size=(1, n, 6)).astype(np.float32)
out, bad = {"index": states}, []
for want, asked in ((version, ""), ("1", "1"), (version, version)):
    tensor = grpcclient.InferInput("ticks", list(x.shape), "FP32")
    tensor.set_data_from_numpy(x)
    t = time.perf_counter()
    result = client.infer(model, [tensor], model_version=asked)
    ms = (time.perf_counter() - t) * 1e3
    answered = result.get_response().model_version
    out["infer_" + (asked or "latest")] = {"answered": answered, "ms": round(ms, 3), "N": n}
    if answered != want:
        bad.append(f"ModelInfer asking '{asked or 'latest'}' was answered by version {answered}, not {want}")
for v in ("1", version):
    if states.get(f"{model}/{v}") != "READY":
        bad.append(f"RepositoryIndex: {model}/{v} is {states.get(f'{model}/{v}', 'absent')}, not READY")
out["ok"], out["failures"] = not bad, bad
print(json.dumps(out))
sys.exit(1 if bad else 0)
PY
        rc_check=$?
        note "Python client: RepositoryIndex and ModelInfer (latest, 1, $pver) exit $rc_check: $(head -c 600 "$r/promote_check.json")"
        [ $rc_check -eq 0 ] || pfail "the Python client's checks: $(tail -2 "$r/promote_check.log" | paste -sd ' ' -) $(head -c 300 "$r/promote_check.json")"
        pj+=("client_check@=$r/promote_check.json" "client_check_exit:=$rc_check")
      fi
      # ModelInfer on the promoted version from C++: load_gen, open loop at a low rate,
      # one request a day of the promoted model's whole context.
      lim=$(limit 60)
      timeout "$lim" env LD_LIBRARY_PATH="$serve_ld" "$pack/bin/load_gen" --server "$addr" \
        --model "$model_name" --model-version "$pver" --n "$pctx" --rates "$d_promote_rate" \
        --duration-s "$d_promote_infer_s" --warmup-s 1 --slo-ms 1000 --no-stop --gpu "$gpu" \
        --commit "$commit" --json "$r/promote_infer.jsonl" > "$r/promote_infer.log" 2>&1
      rc_infer=$?
      note "load_gen ModelInfer on $model_name version $pver (N = $pctx, $d_promote_rate /s for $d_promote_infer_s s): exit $rc_infer"
      sed -n '2,3p' "$r/promote_infer.log" | tee -a "$summary"
      rate_line=$(grep '"op":"model_infer"' "$r/promote_infer.jsonl" 2> /dev/null | grep -v '"what":"summary"' | head -1)
      if [ $rc_infer -ne 0 ] || [ -z "$rate_line" ] || ! grep -q '"error_count":0' <<< "$rate_line"; then
        pfail "ModelInfer on version $pver: load_gen exit $rc_infer, $(tail -1 "$r/promote_infer.log")"
      fi
      pj+=("infer_exit:=$rc_infer" "infer@=$r/promote_infer.jsonl")
    fi
    # 4. The stream across the promotion: it ends on the version it opened on. Its
    # probabilities are compared with the same day streamed on version 1 pinned (equal:
    # max |Δp| ≤ 1e-3, 0 on the CPU) and on the latest, the new version (different,
    # > 1e-3, over the new model's context: its first $pctx steps).
    wait "$spid"
    rc_open=$?
    open_ver=$(stream_version promote_stream_open)
    note "stream open across the promotion: exit $rc_open, session on v${open_ver:-?}, $(csv_rows "$r/promote_stream_open.csv") of $steps steps: $(stream_line promote_stream_open)"
    if ! { [ $rc_open -eq 0 ] && [ "$open_ver" = 1 ] \
           && [ "$(csv_rows "$r/promote_stream_open.csv")" -eq "$steps" ]; }; then
      pfail "the stream open across the promotion did not end on version 1 with all $steps steps (exit $rc_open, v${open_ver:-?})"
    fi
    if ! { [ "$rows_before" -gt 0 ] && [ "$open_after" = yes ]; }; then
      pfail "the stream was not open across the promotion ($rows_before steps before it, open after it: $open_after): raise SERVE_PROMOTE_TICKS (its steps are capped at the model's max_context)"
    fi
    pj+=("stream_steps:=$steps" "stream_exit:=$rc_open" "stream_version=$open_ver"
         "stream_result=$(stream_line promote_stream_open)")
    if [ -n "$pver" ] && [ $rc_promote -eq 0 ]; then
      promote_stream "$(limit 120)" promote_stream_v1 1 "$steps"
      rc_v1=$?
      new_steps=$((steps < pctx ? steps : pctx))
      promote_stream "$(limit 60)" promote_stream_new "" "$new_steps"
      rc_new=$?
      new_ver=$(stream_version promote_stream_new)
      read -r d_v1 n_v1 <<< "$(maxdiff "$r/promote_stream_open.csv" "$r/promote_stream_v1.csv")"
      read -r d_new n_new <<< "$(maxdiff "$r/promote_stream_open.csv" "$r/promote_stream_new.csv")"
      note "the same day on version 1 pinned: exit $rc_v1, max |Δp| against the stream across the promotion $d_v1 over $n_v1 steps"
      note "the same day on latest (a session opened after the promotion): exit $rc_new, session on v${new_ver:-?}, max |Δp| $d_new over $n_new steps"
      awk -v "d=$d_v1" -v "n=$n_v1" -v "s=$steps" 'BEGIN {exit !(n == s && d <= 1e-3)}' \
        || pfail "the stream across the promotion does not match version 1 (max |Δp| $d_v1 over $n_v1 of $steps steps, pinned stream exit $rc_v1)"
      if ! { [ $rc_new -eq 0 ] && [ "$new_ver" = "$pver" ]; }; then
        pfail "a stream opened after the promotion is on v${new_ver:-?}, not v$pver (exit $rc_new)"
      fi
      awk -v "d=$d_new" -v "n=$n_new" 'BEGIN {exit !(n > 0 && d > 1e-3)}' \
        || pfail "versions 1 and $pver answer the day alike (max |Δp| $d_new over $n_new steps): the comparison shows nothing"
      pj+=("stream_v1_exit:=$rc_v1" "stream_v1_maxdiff:=$d_v1" "stream_v1_steps:=$n_v1"
           "stream_new_exit:=$rc_new" "stream_new_version=$new_ver" "stream_new_maxdiff:=$d_new"
           "stream_new_steps:=$n_new")
    fi
  fi
  if [ $promote_ok = 1 ]; then
    note "promotion: ok (version ${pver:-?} of $model_name, arm ${parm:-?}, served without a restart; the open stream kept version 1)"
    status="$status promote=0"
  else
    status="$status promote=1"
  fi
  pj+=("ok:=$([ $promote_ok = 1 ] && echo true || echo false)")
  python3 - "$out/promote.json" "${pj[@]}" <<'PY' 2>&1 | tee -a "$summary"
import json, sys
out = {}
for kv in sys.argv[2:]:
    key, _, value = kv.partition("=")
    if key.endswith("@"):  # a JSON file, or JSON lines (a list)
        try:
            with open(value) as f:
                text = f.read()
            try:
                out[key[:-1]] = json.loads(text)
            except ValueError:
                out[key[:-1]] = [json.loads(l) for l in text.splitlines() if l.strip()]
        except (OSError, ValueError):
            out[key[:-1]] = None
        continue
    if key.endswith(":"):  # a JSON literal: a number, true or false, a list
        try:
            out[key[:-1]] = json.loads(value)
        except ValueError:
            out[key[:-1]] = value or None
        continue
    out[key] = value
with open(sys.argv[1], "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
PY
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
