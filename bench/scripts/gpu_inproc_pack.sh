#!/usr/bin/env bash
# The in-process forward of the served model, run from the server pack (no build on the
# GPU machine): serve_latency_inproc from the pack (scripts/pack_server.sh with
# PACK_BINARIES naming it) on the model gpu_serve.sh serves (flashtick_make_model
# $SERVE_MODEL --seed 1: the same weights), so its forward sits beside the server's
# compute time of the same call (docs/serving.md, "Where the time goes").
# Rows per N and B: the forward of every step, with the stop callback flashtickd passes,
# and the last-step forward (serve_latency_inproc --last-only 1 --stop-check 1).
# Usage: OUT=dir INPROC_PACK=.carry/serve_cudnn bash bench/scripts/gpu_inproc_pack.sh
# Env: INPROC_PACK (.carry/serve_cudnn; unpacked from INPROC_PACK.tar.xz if needed),
#   INPROC_N (23400,23552,4096,512), INPROC_BATCH (1,8), INPROC_REPS (50),
#   INPROC_BUDGET (120 s), SERVE_MODEL (gpu_serve.sh's default model flags),
#   INPROC_PROFILE (0: off; R: after each timed row, R forwards profiled per op kind,
#   serve_latency_inproc --profile-ops, summed up in the summary),
#   INPROC_PINNED (0; 1: every mode again from page-locked ticks, rows *_pinned_input).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source bench/scripts/pack_ld.sh
out=${OUT:?set OUT to the results folder}
mkdir -p "$out"
# Two files come back (the device tool returns few): the summary, and the rest in one archive.
w=$(mktemp -d /tmp/inproc_pack_out.XXXXXX)
deadline=$(($(date +%s) + ${INPROC_BUDGET:-120}))
pack=${INPROC_PACK:-.carry/serve_cudnn}
summary="$out/inproc_pack_summary.txt"
note() { echo "$*" | tee -a "$summary"; }
if [ ! -x "$pack/bin/serve_latency_inproc" ] && [ -f "$pack.tar.xz" ]; then
  mkdir -p "$pack" && tar -C "$pack" -xJf "$pack.tar.xz" || { note "cannot unpack $pack.tar.xz"; exit 1; }
fi
[ -x "$pack/bin/serve_latency_inproc" ] || { note "no $pack/bin/serve_latency_inproc"; exit 1; }
pack=$(cd "$pack" && pwd)
# cuDNN, nvrtc and cuBLAS where gpu_serve.sh finds them (pack_ld.sh).
ld=$(pack_ld_path "$pack" serve_latency_inproc 2> "$w/pack_ld.log")
while IFS= read -r line; do note "$line"; done < "$w/pack_ld.log"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
note "gpu_inproc_pack: commit ${FLASHTICK_COMMIT:-unknown}; gpu ${gpu:-unknown}; $(date -u '+%Y-%m-%d %H:%M UTC')"
model_flags=${SERVE_MODEL:---width 256 --heads 4 --layers 2 --max-context 32768}
m=$(mktemp -d /tmp/inproc_pack.XXXXXX)
LD_LIBRARY_PATH="$ld" "$pack/bin/flashtick_make_model" --out "$m" --name flashtick-bench --seed 1 \
  $model_flags > "$w/make_model.log" 2>&1 || { note "flashtick_make_model failed: $(tail -2 "$w/make_model.log")"; exit 1; }
note "model: $model_flags --seed 1"
lim=$((deadline - $(date +%s) - 5))
timeout "$lim" env LD_LIBRARY_PATH="$ld" "$pack/bin/serve_latency_inproc" --model-dir "$m/flashtick-bench/1" \
  --device cuda --n "${INPROC_N:-23400,23552,4096,512}" --batch "${INPROC_BATCH:-1,8}" \
  --reps "${INPROC_REPS:-50}" --warmup 3 --ticks 2048 --last-only 1 --stop-check 1 \
  --profile-ops "${INPROC_PROFILE:-0}" --pinned-input "${INPROC_PINNED:-0}" \
  > "$w/inproc.jsonl" 2> "$w/inproc.err"
rc=$?
note "serve_latency_inproc exit $rc$([ $rc -eq 124 ] && echo " (cut at its $lim s limit; rows so far kept)")"
python3 - "$w/inproc.jsonl" << 'EOF' | tee -a "$summary"
import json, sys
print("| what | N | B | p50 ms | p99 ms | mean ms | kernel path |")
print("|---|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "p50_ms" in r:
        print(f"| {r['what']} | {r['N']} | {r['B']} | {r['p50_ms']:.3f} | {r['p99_ms']:.3f} | {r['mean_ms']:.3f} | {r.get('kernel_path', '')} |")
    elif "ops" in r:  # --profile-ops: stream time of one forward per op kind, largest first
        ops = "; ".join(f"{o['kind']} {o['ms']:.3f} ({100 * o['share']:.0f}%, {o['count']:g}x)" for o in r["ops"])
        print(f"| {r['what']} | {r['N']} | {r['B']} | {r['total_ms']:.3f} a forward over {r['forwards']}: {ops} | | | |")
    else:
        print("|", json.dumps(r), "|")
EOF
tar czf "$out/inproc_pack.tgz" -C "$w" .
exit $rc
