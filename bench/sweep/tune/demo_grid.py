#!/usr/bin/env python3
"""Grid over the demo preset's data and optimiser knobs, run as parallel CPU sweeps.

Why: the demo sweep (README's main command, tests/sweep/sweep_planted_test) must
show, on 2 CPU cores in about a minute per arm, that arm N calls the planted events
of the lag families it can see. Which signal density and step budget get there is
an empirical question; this grid answers it on a many-core machine (the GPU host's
16 cores) with one single-threaded flashtick_sweep per configuration, and prints
per arm the call-step accuracy per lag family, the daily Sharpe and the verdict.

  demo_grid.py --sweep BUILD/bench/sweep/flashtick_sweep --out DIR [--jobs 15]
"""
import argparse
import concurrent.futures as cf
import copy
import itertools
import json
import os
import re
import subprocess
import sys
import time


def base_config(sweep):
    text = subprocess.run([sweep, "--preset", "demo", "--dir", "/tmp/unused", "--print-config"],
                          check=True, capture_output=True, text=True).stdout
    return json.loads(text)


def variants(base):
    grid = {
        "events_per_lag_per_day": [24, 36],
        "tokens_per_step": [1024, 2048],
        "learning_rate": [0.003, 0.01],
        "first_fold_epochs": [40, 80],
    }
    keys = list(grid)
    for values in itertools.product(*(grid[k] for k in keys)):
        v = dict(zip(keys, values))
        c = copy.deepcopy(base)
        s = c["data"]["synthetic"]
        s.update(generator="planted_cue_tagged", motif_amplitude=1000.0, tag_ratio=0.1,
                 flow_noise=0.5, events_per_lag_per_day=v["events_per_lag_per_day"])
        c["optimizer"]["tokens_per_step"] = v["tokens_per_step"]
        c["optimizer"]["learning_rate"] = v["learning_rate"]
        c["training"]["first_fold_epochs"] = v["first_fold_epochs"]
        name = "e%d_t%d_lr%g_ep%d" % tuple(v[k] for k in keys)
        yield name, c


def run_one(sweep, out, name, config, timeout):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "config.json")
    with open(path, "w") as f:
        json.dump(config, f, indent=1)
    t0 = time.time()
    try:
        p = subprocess.run([sweep, "--config", path, "--dir", os.path.join(d, "work"),
                            "--device", "cpu", "--threads", "1"],
                           capture_output=True, text=True, timeout=timeout)
        log = p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        log = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        log += "\nTIMEOUT after %d s\n" % timeout
    with open(os.path.join(d, "log.txt"), "w") as f:
        f.write(log)
    arms = [l for l in log.splitlines() if l.startswith("arm ")]
    verdict = [l for l in log.splitlines() if l.startswith("verdict")]
    return name, time.time() - t0, arms, verdict


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweep", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=15)
    ap.add_argument("--timeout", type=int, default=420)
    a = ap.parse_args()
    base = base_config(a.sweep)
    runs = list(variants(base))
    print("%d configurations, %d at a time" % (len(runs), a.jobs), flush=True)
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        futures = [pool.submit(run_one, a.sweep, a.out, n, c, a.timeout) for n, c in runs]
        for f in cf.as_completed(futures):
            name, secs, arms, verdict = f.result()
            print("== %s (%.0f s)" % (name, secs))
            for l in arms:
                print("  " + re.sub(r"\s+", " ", l))
            for l in verdict:
                print("  " + l[:160])
            sys.stdout.flush()


if __name__ == "__main__":
    main()
