#!/usr/bin/env python3
"""GPU utilisation of one sweep's arms (bench/scripts/gpu_sweep.sh): each arm's training
tokens/s beside train_step_bench's tokens/s for the same model, N and batch measured in
the same call, and the GPU's busy share from nvidia-smi's 1-second samples.

Usage: utilisation.py RESULTS_DIR SWEEP_DIR
  RESULTS_DIR holds config.json, bench.jsonl, nvidia_smi.csv; SWEEP_DIR the arms/.
Arms that share the GPU (arms_per_gpu > 1) each see part of it: their sum is the
figure to hold against the bench."""
import glob
import json
import os
import re
import sys


def compact_stop_reason(reason):
    """Consecutive folds with the same stop words as one entry ("folds 1–19 ... each"), as
    the report does (research/report/stop_reason_text.h)."""
    out, run = [], None  # run: [first fold, last fold, words]
    def flush():
        if run:
            out.append("fold %d %s" % (run[0], run[2]) if run[0] == run[1] else
                       "folds %d–%d %s" % (run[0], run[1], re.sub(r" steps\)$", " steps each)", run[2])))
    for part in [p for p in reason.split("; ") if p]:
        m = re.match(r"fold (\d+) (.+)$", part)
        if m and run and int(m.group(1)) == run[1] + 1 and m.group(2) == run[2]:
            run[1] += 1
            continue
        flush()
        run = [int(m.group(1)), int(m.group(1)), m.group(2)] if m else None
        if not m:
            out.append(part)
    flush()
    return "; ".join(out)


def main(results, sweep):
    cfg = json.load(open(os.path.join(results, "config.json")))
    tokens = cfg["optimizer"]["tokens_per_step"]
    bench = {}
    path = os.path.join(results, "bench.jsonl")
    if os.path.exists(path):
        for line in open(path):
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if j.get("bench") == "train_step" and "tokens_per_s" in j:
                bench[j["N"]] = j["tokens_per_s"]
    print("| arm | N | batch | tokens/s | bench tokens/s | ratio | s/epoch | peak MiB | "
          "stopped |")
    print("|---|---|---|---|---|---|---|---|---|")
    total = {}
    for state in sorted(glob.glob(os.path.join(sweep, "arms", "*", "state.json"))):
        a = json.load(open(state))
        n, secs = a["context"], a.get("train_seconds", 0)
        tps = a["tokens"] / secs if secs > 0 else 0
        total[n] = total.get(n, 0) + tps
        ref = bench.get(n)
        ratio = "%.2f" % (tps / ref) if ref else "n/a"
        print("| %s | %d | %d | %.0f | %s | %s | %s | %.0f | %s |" % (
            a["arm_id"], n, max(1, tokens // n), tps, "%.0f" % ref if ref else "n/a", ratio,
            "%.2f" % (secs / (a["tokens"] / max(1, a["train_samples"])))
            if a["tokens"] else "n/a",
            a.get("peak_memory_bytes", 0) / 2**20, compact_stop_reason(a.get("stop_reason", "")) or "no"))
    smi = os.path.join(results, "nvidia_smi.csv")
    if os.path.exists(smi):
        util = []
        for line in open(smi):
            parts = [p.strip() for p in line.split(",")]
            if len(parts) >= 2 and parts[1].endswith("%"):
                util.append(float(parts[1].rstrip(" %")))
        if util:
            busy = sum(u > 0 for u in util) / len(util)
            print("\nnvidia-smi over the sweep: %d samples, mean utilisation %.0f%%, GPU busy in "
                  "%.0f%% of them." % (len(util), sum(util) / len(util), 100 * busy))
    print("\nArms of one N that trained at the same time share the GPU; per N, the arms' "
          "summed tokens/s: " + ", ".join("N=%d %.0f" % (n, t) for n, t in sorted(total.items())))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
