#!/usr/bin/env bash
# N-sweeps on the GPU machine with the standalone sweep runner (bench/sweep/flashtick_sweep:
# the engine flashtickd runs, without gRPC), each with its GPU utilisation beside
# train_step_bench's throughput for the same model shape, in the same call.
# Specs are preset names (`planted`, `planted_null`, ...) or sweep config files (JSON,
# e.g. bench/sweep/configs/planted_lags2.json: another lag set and seed through the
# config, not a preset). The presets and their reasoning: research/sweep/sweep_presets.cc,
# docs/sweeps/keyed.md.
# Per spec, $OUT/<name>.tgz holds report.md/.json, the plots, config.json, run.log and
# utilisation.md (per arm: tokens/s, the bench's tokens/s at that N and batch, the
# ratio; nvidia-smi samples every second); $OUT/sweep_summary.txt has the verdicts.
# Commit them under docs/sweeps/<name>-h200/. Resumable: a second call with the same
# $SWEEP_DIR (the machine still warm) continues from the arms' checkpoints.
# Usage (repository root):  OUT=dir bench/scripts/gpu_sweep.sh SPEC...   (default:
#   planted planted_null)
# Env: SWEEP_BUILD (default build/gpu-kernels), SWEEP_DIR (default build/gpu-sweeps),
#      SWEEP_TIMEOUT (seconds per spec, default 600), SWEEP_BUDGET (seconds for the whole
#      script, build included, default 570: every stage's limit comes from this one
#      deadline, so a 10-minute device call still writes its summary),
#      SWEEP_CONCURRENT (auto: with at least as many GPUs as specs, each spec runs at
#      once on a GPU of its own, e.g. `planted planted_null` in one call on two GPUs;
#      0: one after the other; 1: at once).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tree_commit.sh"  # tree_commit
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
[ -f scripts/device_env.sh ] && source scripts/device_env.sh
out=${OUT:?set OUT to the results folder}
mkdir -p "$out"
build=${SWEEP_BUILD:-$root/build/gpu-kernels}
work=${SWEEP_DIR:-$root/build/gpu-sweeps}
limit=${SWEEP_TIMEOUT:-600}
deadline=$(( $(date +%s) + ${SWEEP_BUDGET:-570} ))
specs=("$@")
[ ${#specs[@]} -eq 0 ] && specs=(planted planted_null)
summary=$out/sweep_summary.txt
left() { echo $(( deadline - $(date +%s) )); }
sweep=$build/bench/sweep/flashtick_sweep
bench=$build/bench/train_step/train_step_bench
mkdir -p "$work"

if [ ! -x "$sweep" ] || [ ! -x "$bench" ]; then
  echo "== build ($(date +%T))" | tee -a "$summary"
  cmake --preset gpu-kernels -B "$build" -DFLASHTICK_BUILD_TESTS=OFF -DFLASHTICK_BUILD_BENCH=ON \
    > "$out/sweep_cmake.log" 2>&1 || { tail -30 "$out/sweep_cmake.log"; exit 1; }
  timeout "$(left)" ninja -C "$build" -j16 flashtick_sweep train_step_bench \
    > "$out/sweep_build.log" 2>&1 || { grep -E "error|FAILED" "$out/sweep_build.log" | head -30; exit 1; }
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >> "$summary" 2>&1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
commit=$(tree_commit)

# run_spec SPEC GPU: one sweep on GPU index GPU ("" = the GPUs the process sees), its lines
# of the summary on stdout.
run_spec() {
  local spec=$1 gpu_id=$2 name src d r this width heads kv layers tokens ns n ref smi rc
  if [ -f "$spec" ]; then name=$(basename "$spec" .json); src=(--config "$spec")
  else name=$spec; src=(--preset "$spec"); fi
  d=$work/$name r=$work/$name.results
  mkdir -p "$d" "$r"
  this=$(left); [ "$this" -gt "$limit" ] && this=$limit
  if [ "$this" -lt 60 ]; then
    echo "== $name skipped: ${this}s left; run again to continue"; return
  fi
  "$sweep" "${src[@]}" --print-config > "$r/config.json" || { echo "== $name: bad spec"; return; }
  # The bench's throughput for this model at each N and the sweep's batch (tokens_per_step / N).
  read -r width heads kv layers tokens ns < <(python3 -c '
import json,sys; c=json.load(open(sys.argv[1])); m=c["model"]
print(m["width"], m["heads"], m["kv_heads"], m["layers"], c["optimizer"]["tokens_per_step"],
      ",".join(map(str, c["contexts"])))' "$r/config.json")
  for n in ${ns//,/ }; do
    ref=$work/ref_w${width}_h${heads}_l${layers}_n${n}_t${tokens}${gpu_id:+_g$gpu_id}.jsonl
    [ -s "$ref" ] || timeout 60 "$bench" --device cuda --n "$n" --b $(( tokens / n )) \
      --width "$width" --heads "$heads" --kv-heads "$kv" --layers "$layers" --optimizers adamw \
      --warmup 2 --steps 5 --json "$ref" --gpu "$gpu" --commit "$commit" > /dev/null 2>&1
    cat "$ref" >> "$r/bench.jsonl" 2>/dev/null
  done
  this=$(left); [ "$this" -gt "$limit" ] && this=$limit
  echo "== $name (dir $d, limit ${this}s, $(date +%T)${gpu_id:+, GPU $gpu_id})"
  nvidia-smi ${gpu_id:+--id=$gpu_id} --query-gpu=timestamp,utilization.gpu,memory.used \
    --format=csv,noheader -l 1 \
    >> "$r/nvidia_smi.csv" 2>/dev/null &
  smi=$!
  echo "-- call at $(date -u +%FT%TZ), limit ${this}s" >> "$r/run.log"  # appended: resumes
  timeout "$this" "$sweep" "${src[@]}" --dir "$d" --device cuda --python python3 \
    >> "$r/run.log" 2>&1
  rc=$?
  kill "$smi" 2>/dev/null
  echo "exit $rc ($([ $rc -eq 124 ] && echo 'time limit: run again to resume' || echo done))"
  grep -E "^arm |^verdict|^precision|^report|wall" "$r/run.log" | tail -n 20
  cp "$d"/report.* "$d"/*.png "$r/" 2>/dev/null
  python3 bench/sweep/utilisation.py "$r" "$d" > "$r/utilisation.md" 2>&1
  cat "$r/utilisation.md"
  tar czf "$out/$name.tgz" -C "$r" .
}

# With as many GPUs as specs (SWEEP_CONCURRENT=auto, the default), every spec runs at
# once on a GPU of its own (a planted sweep and its null twin in one call on two GPUs);
# otherwise one after the other, each with the whole machine. Each spec's summary lines
# stay together.
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
concurrent=${SWEEP_CONCURRENT:-auto}
if [ "$concurrent" = auto ]; then
  concurrent=0
  [ ${#specs[@]} -gt 1 ] && [ "$ngpu" -ge ${#specs[@]} ] && concurrent=1
fi
if [ "$concurrent" = 1 ]; then
  echo "== ${#specs[@]} specs at once on $ngpu GPUs" | tee -a "$summary"
  i=0
  for spec in "${specs[@]}"; do
    CUDA_VISIBLE_DEVICES=$i run_spec "$spec" "$i" > "$work/summary.$i.txt" 2>&1 &
    i=$((i + 1))
  done
  wait
  for j in $(seq 0 $((i - 1))); do tee -a "$summary" < "$work/summary.$j.txt"; done
else
  for spec in "${specs[@]}"; do run_spec "$spec" "" 2>&1 | tee -a "$summary"; done
fi
