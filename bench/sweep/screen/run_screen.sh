#!/usr/bin/env bash
# A screen on the GPU machine: each config of bench/sweep/screen/ (one N = 32,768 arm
# per training seed) trains at the same time as the others on the one GPU, then per config the
# call-step accuracy per lag. Builds flashtick_sweep with cuDNN first (gpu_cudnn.sh build)
# unless it is there. Every limit comes from one deadline (SCREEN_BUDGET seconds from
# the start, default 570), so a 600 s device call still writes $OUT/screen.txt.
# Usage: OUT=dir bench/sweep/screen/run_screen.sh [CONFIG...]
set -uo pipefail
cd "$(dirname "$0")/../../.."
source scripts/device_env.sh
deadline=$(( $(date +%s) + ${SCREEN_BUDGET:-570} ))
left() { echo $(( deadline - $(date +%s) )); }
build=build/gpu-kernels
use_cudnn_wheel_libs  # scripts/device_env.sh
if [ ! -x $build/bench/sweep/flashtick_sweep ]; then
  CUDNN_TARGETS="flashtick_sweep train_step_bench" CUDNN_DEADLINE=$(( $(left) - 60 )) OUT=$OUT \
    bench/scripts/gpu_cudnn.sh build > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
  echo "build done, $(left) s left"
fi
cfgs=("$@"); [ ${#cfgs[@]} -eq 0 ] && cfgs=(bench/sweep/screen/*.json)
limit=$(( $(left) - 20 )); [ -n "${SCREEN_LIMIT:-}" ] && [ "$SCREEN_LIMIT" -lt "$limit" ] && limit=$SCREEN_LIMIT
echo "training for at most $limit s"
for c in "${cfgs[@]}"; do
  n=$(basename $c .json); rm -rf build/screen/$n; mkdir -p build/screen/$n
  timeout $limit $build/bench/sweep/flashtick_sweep --config $c --dir build/screen/$n \
    --device cuda --plot-script "" > build/screen/$n.log 2>&1 &
done
wait
for c in "${cfgs[@]}"; do
  n=$(basename $c .json)
  python3 - "$n" <<'PY'
import glob, json, sys
for p in sorted(glob.glob("build/screen/%s/arms/*/state.json" % sys.argv[1])):
    a = json.load(open(p))
    arm = p.split("/")[-2]  # the arm folder: its N and training seed
    ev = " ".join("L%d:%.2f(%d)" % (e["lag"], e["hits"] / max(1, e["events"]), e["events"]) for e in a["events"])
    print("%-14s %-10s %s steps %d/%d %.0f s tok/s %.0f %s | %s" % (sys.argv[1], arm, a["state"], a["step"], a["total_steps"],
          a["train_seconds"], a["tokens"] / max(1e-9, a["train_seconds"]), ev, a.get("stop_reason", "")))
    # Where the call step looks (fold_evaluator.h): per family and layer, the most any
    # head puts on the cue, and that head's weight on the call step itself; then the
    # call step's attention rollout onto the cue.
    for e in a["events"]:
        cue, me = e.get("cue_weight", []), e.get("self_weight", [])
        if not cue: continue
        h = json.load(open("build/screen/%s/config.json" % sys.argv[1]))["model"]["heads"]
        cells = []
        for l in range(len(cue) // h):
            b = max(range(l * h, (l + 1) * h), key=lambda i: cue[i])
            cells.append("layer %d: cue %.3f (h%d) self %.3f" % (l, cue[b], b - l * h, me[b]))
        if "cue_rollout" in e:  # the flow from the cue through every layer (attention_rollout.h)
            cells.append("rollout onto the cue %.3f" % e["cue_rollout"])
        print("    L%d attention over %d events: %s" % (e["lag"], e["attention_events"], "; ".join(cells)))
PY
done | tee $OUT/screen.txt
tar czf $OUT/screen_logs.tgz build/screen/*.log build/screen/*/report.md 2>/dev/null
