#!/usr/bin/env bash
# AdamW against Sophia-H in wall-clock to a target validation loss, on the GPU machine
# (docs/benchmarks.md, "Optimizers: wall-clock to a target loss"). Each config of
# bench/sweep/optimizer_race/ is one optimizer and learning rate at one N on the planted
# keyed-cue days, one fold, three seeds training side by side; the configs run one after
# the other, so every optimizer has the GPU to itself under the same sharing. Per config
# $OUT/<name>/ gets report.json, run.log and each arm's state.json (its validation curve,
# steps and training seconds), all packed into $OUT/race_results.tgz at the end;
# bench/sweep/optimizer_race/race_table.py turns them into the table and the plot. Builds flashtick_sweep with cuDNN first (gpu_cudnn.sh) unless it is
# there. Every limit comes from one deadline (RACE_BUDGET seconds, default 570).
# Usage (repository root): OUT=dir bench/scripts/gpu_optimizer_race.sh CONFIG...
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source scripts/device_env.sh
out=${OUT:?set OUT to the results folder}
deadline=$(( $(date +%s) + ${RACE_BUDGET:-570} ))
left() { echo $(( deadline - $(date +%s) )); }
build=build/gpu-kernels
use_cudnn_wheel_libs  # scripts/device_env.sh
if [ ! -x $build/bench/sweep/flashtick_sweep ]; then
  CUDNN_TARGETS="flashtick_sweep train_step_bench" CUDNN_DEADLINE=$(( $(left) - 60 )) OUT=$out \
    bench/scripts/gpu_cudnn.sh build > $out/build.log 2>&1 || { tail -20 $out/build.log; exit 1; }
  echo "build done, $(left) s left"
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
for c in "$@"; do
  n=$(basename "$c" .json)
  limit=$(( $(left) - 5 ))
  if [ "$limit" -lt 30 ]; then echo "$n: skipped, $limit s left" | tee -a $out/race.txt; continue; fi
  dir=build/race/$n; rm -rf $dir; mkdir -p $dir $out/$n
  start=$(date +%s)
  timeout $limit $build/bench/sweep/flashtick_sweep --config "$c" --dir $dir --device cuda \
    --plot-script "" > $out/$n/run.log 2>&1
  rc=$?
  echo "$n: exit $rc in $(( $(date +%s) - start )) s" | tee -a $out/race.txt
  cp $dir/report.json $out/$n/ 2>/dev/null
  for s in $dir/arms/*/state.json; do
    [ -f "$s" ] && cp "$s" $out/$n/$(basename "$(dirname "$s")").state.json
  done
done
# One archive: the device tool returns a bounded number of files per call.
( cd $out && tar czf race_results.tgz race_* && rm -rf $(ls -d race_*/ ) )
