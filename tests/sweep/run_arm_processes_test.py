#!/usr/bin/env python3
"""One sweep arm trained data-parallel over processes (docs/multi_gpu.md, "One sweep arm
over processes"): real `flashtick_sweep --run-arm` processes on the CPU, one per rank,
meeting through rank 0's store on a free port, configured the way a Kubernetes
Indexed Job of W pods configures them (--world-size W; RANK or JOB_COMPLETION_INDEX,
MASTER_ADDR, MASTER_PORT from the environment; the arm from --arm-index or
FLASHTICK_ARM_INDEX).

  equal    the arm over 2 processes sharing the arm directory equals, bit for bit, the
           same arm trained in one process with replicas_per_arm 2 (state.json less its
           timings, the exported model and the checkpoint); so does the run where rank 1
           is given a directory of its own, which it must leave untouched (only rank 0
           writes), with nothing left in its TMPDIR; an arm that stops early (its
           decision agreed by the ranks) equals its in-process twin and stops at the
           same step; replicas_per_arm 1 trains the same;
           replicas_per_arm 4 over 2 processes is refused with INVALID_ARGUMENT, and so
           is a batch that does not split over 2 (every rank says so); over
           processes JOB_COMPLETION_INDEX is the rank, never the arm: without
           --arm-index or FLASHTICK_ARM_INDEX a rank exits 2 saying so.
  failure  SIGTERM to rank 1 alone mid-run: both ranks stop together at a checkpoint
           (state "cancelled", exit 1), and a second launch resumes the arm to the
           in-process run's result bit for bit; SIGKILL of rank 1 mid-run: rank 0 exits
           non-zero within seconds naming rank 1; SIGKILL of rank 0 (the store): rank 1
           exits naming rank 0. A time budget (max_train_seconds, on each rank's clock)
           ends the folds on both ranks at the same step: both exit 0, stopped early.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "parallel"))
from rank_processes import communicate_all, fail  # noqa: E402

ARM = 0  # the one N of the config below
GROUP_ENV = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK",
             "JOB_COMPLETION_INDEX", "FLASHTICK_ARM_INDEX")
TIMINGS = ("train_seconds", "plain_step_seconds", "refresh_step_seconds", "eval_seconds",
           "ran_on")


def config(replicas=2, epochs=2):
    return {
        "name": "rank-arm", "contexts": [8], "seeds": [1], "replicas_per_arm": replicas,
        "model": {"width": 8, "layers": 1, "heads": 2, "kv_heads": 2, "mlp_ratio": 2},
        "optimizer": {"learning_rate": 0.003, "warmup_steps": 2, "tokens_per_step": 256},
        "training": {"first_fold_epochs": epochs, "epochs_per_fold": 1,
                     "checkpoint_every_steps": 5},
        "data": {"synthetic": {"generator": "planted_cue", "seed": 3, "days": 6,
                               "steps_per_day": 256, "lags": [6, 24],
                               "events_per_lag_per_day": 6, "drift_bps": 1.0}},
        "labels": {"horizon": 2},
        "walk_forward": {"train_days": 3, "test_days": 1},
        "device": "cpu", "cpu_threads": 1}


def sweep_dir(root, name, cfg):
    d = os.path.join(root, name)
    os.makedirs(d)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    return d


def clean_env(**more):
    env = {k: v for k, v in os.environ.items() if k not in GROUP_ENV}
    env.update({k: str(v) for k, v in more.items()})
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def in_process(binary, d):
    """The reference: the arm in one process, replicas_per_arm replicas on threads."""
    p = subprocess.run([binary, "--run-arm", "--dir", d, "--arm-index", str(ARM),
                        "--threads", "2"], env=clean_env(), capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        fail(f"in-process run in {d} exited {p.returncode}:\n{p.stdout}{p.stderr}")


def start_ranks(binary, dirs, tmpdirs=None):
    """Two ranks as two pods of an Indexed Job would run: rank 0 by RANK and --arm-index,
    rank 1 by JOB_COMPLETION_INDEX and FLASHTICK_ARM_INDEX."""
    port = free_port()
    common = dict(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    envs = [clean_env(RANK=0, **common),
            clean_env(JOB_COMPLETION_INDEX=1, FLASHTICK_ARM_INDEX=ARM, **common)]
    procs = []
    for r in range(2):
        if tmpdirs and tmpdirs[r]:
            envs[r]["TMPDIR"] = tmpdirs[r]
        cmd = [binary, "--run-arm", "--dir", dirs[r], "--world-size", "2", "--threads", "1",
               "--rendezvous-timeout", "30", "--collective-timeout", "30"] + (["--arm-index", str(ARM)] if r == 0 else [])
        procs.append(subprocess.Popen(cmd, env=envs[r], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    return procs


def finish(procs, timeout=120):
    """[(rc, out, err, seconds since finish was called)] of every rank."""
    return communicate_all(procs, timeout)


def run_ranks(binary, dirs, tmpdirs=None):
    results = finish(start_ranks(binary, dirs, tmpdirs))
    for r, (rc, o, e, _) in enumerate(results):
        if rc != 0:
            fail(f"rank {r} exited {rc}:\nstdout:\n{o}\nstderr:\n{e}")
    return results


def arm_dir(d):
    return os.path.join(d, "arms", "n8")


def state(d):
    with open(os.path.join(arm_dir(d), "state.json")) as f:
        return json.load(f)


def files(d):
    out = {}
    for root, _, names in os.walk(d):
        for n in names:
            path = os.path.join(root, n)
            with open(path, "rb") as f:
                out[os.path.relpath(path, d)] = f.read()
    return out


def expect_same_arm(ref, got, what):
    a, b = state(ref), state(got)
    if a["state"] != "done" or b["state"] != "done":
        fail(f"{what}: states {a['state']} / {b['state']}, both should be done")
    for k in sorted(set(a) | set(b)):
        if k not in TIMINGS and a.get(k) != b.get(k):
            fail(f"{what}: state.json field {k} differs: in-process {str(a.get(k))[:300]} vs "
                 f"over processes {str(b.get(k))[:300]}")
    fa, fb = files(arm_dir(ref)), files(arm_dir(got))
    if sorted(fa) != sorted(fb):
        fail(f"{what}: the arm directories hold {sorted(fa)} vs {sorted(fb)}")
    for name in fa:
        if name != "state.json" and not name.endswith("manifest.json") and fa[name] != fb[name]:
            fail(f"{what}: {name} differs from the in-process run's")
    print(f"{what}: equal to the in-process replicas_per_arm 2 run bit for bit "
          f"({b['step']} steps, loss {b['loss']!r}, {len(b['days'])} test days, "
          f"{len(fa)} files)", flush=True)


def check_equal(binary, root):
    ref = sweep_dir(root, "in-process", config())
    in_process(binary, ref)

    shared = sweep_dir(root, "shared", config())
    results = run_ranks(binary, [shared, shared])
    for r, (_, o, _, _) in enumerate(results):
        if f"arm n8 as rank {r} of 2: done" not in o:
            fail(f"rank {r} did not report the arm done:\n{o}")
    if "train fold" in results[1][1]:
        fail(f"rank 1 printed progress; only rank 0 reports:\n{results[1][1]}")
    expect_same_arm(ref, shared, "2 processes, one shared arm directory")

    # Rank 1 given a directory of its own: it must write nothing there, nor leave its
    # private copy of the model behind.
    own0 = sweep_dir(root, "rank0", config())
    own1 = sweep_dir(root, "rank1", config())
    tmp1 = os.path.join(root, "rank1-tmp")
    os.makedirs(tmp1)
    run_ranks(binary, [own0, own1], [None, tmp1])
    expect_same_arm(ref, own0, "2 processes, rank 0's directory")
    left = sorted(files(own1))
    if left != ["config.json"]:
        fail(f"rank 1 wrote into its directory: {left}")
    if os.listdir(tmp1):
        fail(f"rank 1 left files in its TMPDIR: {os.listdir(tmp1)}")
    print("rank 1 wrote nothing (its directory holds only config.json; its TMPDIR is empty)",
          flush=True)

    # Early stopping (a validation day held out, patience 1): its decision is agreed by
    # the ranks every step; the arm still equals the in-process one and stops early.
    es_cfg = config(epochs=8)
    es_cfg["training"].update({"validation_days": 1, "validate_every_steps": 2,
                               "validation_batches": 1, "patience": 1})
    es_ref = sweep_dir(root, "es-ref", es_cfg)
    in_process(binary, es_ref)
    es = sweep_dir(root, "es", es_cfg)
    run_ranks(binary, [es, es])
    expect_same_arm(es_ref, es, "early stopping over 2 processes")
    why = state(es).get("stop_reason", "")
    if "patience" not in why and "early" not in why:
        fail(f"the early-stopping case did not stop early (stop_reason {why!r})")
    print(f"early stopping over 2 processes stopped as in one: {why}", flush=True)

    one = sweep_dir(root, "replicas1", config(replicas=1))
    run_ranks(binary, [one, one])
    expect_same_arm(ref, one, "replicas_per_arm 1 over 2 processes")

    bad = sweep_dir(root, "replicas4", config(replicas=4))
    for r, (rc, o, e, secs) in enumerate(finish(start_ranks(binary, [bad, bad]), timeout=60)):
        if rc == 0 or "INVALID_ARGUMENT" not in e or "replicas_per_arm is 4" not in e:
            fail(f"replicas_per_arm 4 over 2 processes: rank {r} exited {rc}:\n{o}{e}")
    print(f"replicas_per_arm 4 over 2 processes: {e.strip().splitlines()[-1]}", flush=True)

    # A batch of 3 sequences (24 tokens of N = 8) does not split over 2: found only once
    # the days are loaded, after the rendezvous, and still every rank says why.
    odd_cfg = config(replicas=1)
    odd_cfg["optimizer"]["tokens_per_step"] = 24
    odd = sweep_dir(root, "odd_batch", odd_cfg)
    for r, (rc, o, e, secs) in enumerate(finish(start_ranks(binary, [odd, odd]), timeout=60)):
        if rc == 0 or "INVALID_ARGUMENT" not in e or "does not split" not in e:
            fail(f"a batch of 3 over 2 processes: rank {r} exited {rc}:\n{o}{e}")
    print(f"a batch of 3 over 2 processes: {e.strip().splitlines()[-1]}", flush=True)

    p = subprocess.run([binary, "--run-arm", "--dir", bad, "--world-size", "2"],
                       env=clean_env(JOB_COMPLETION_INDEX=1, MASTER_PORT=free_port()),
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 2 or "FLASHTICK_ARM_INDEX" not in p.stderr:
        fail(f"over processes without an arm index: exit {p.returncode}:\n{p.stdout}{p.stderr}")
    print(f"no arm index over processes: exit 2: {p.stderr.strip()}", flush=True)


def wait_for_step(procs, d, step, timeout=60):
    """Waits until rank 0 has checkpointed past `step` (state.json)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        for r, p in enumerate(procs):
            if p.poll() is not None:
                fail(f"rank {r} exited {p.returncode} early: {p.communicate()}")
        try:
            s = state(d)
            if s["step"] >= step:
                return s
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.02)
    for p in procs:
        p.kill()
    fail(f"the arm did not reach step {step} within {timeout} s")


def check_failure(binary, root):
    long_cfg = config(epochs=60)
    ref = sweep_dir(root, "in-process", long_cfg)
    in_process(binary, ref)
    total = state(ref)["total_steps"]

    # SIGTERM reaches one pod only: both ranks must stop, together, at a checkpoint.
    d = sweep_dir(root, "cancelled", long_cfg)
    procs = start_ranks(binary, [d, d])
    wait_for_step(procs, d, 10)
    procs[1].send_signal(signal.SIGTERM)
    results = finish(procs, timeout=30)
    for r, (rc, o, e, secs) in enumerate(results):
        if rc != 1 or f"arm n8 as rank {r} of 2: cancelled" not in o:
            fail(f"SIGTERM to rank 1: rank {r} exited {rc} after {secs:.1f} s:\n{o}{e}")
        if secs > 10:
            fail(f"SIGTERM to rank 1: rank {r} took {secs:.1f} s to stop")
    s = state(d)
    if s["state"] != "cancelled" or not 10 <= s["step"] < total:
        fail(f"after SIGTERM to rank 1: state {s['state']} at step {s['step']} of {total}")
    print(f"SIGTERM to rank 1: both ranks stopped at step {s['step']} of {total} "
          f"(state cancelled, exit 1)", flush=True)
    run_ranks(binary, [d, d])  # the Job's next pods resume the arm
    expect_same_arm(ref, d, "cancelled at one rank, then resumed over 2 processes")

    # The time budget: each rank's clock crosses it at its own step; the ranks agree.
    budget = config(epochs=60)
    budget["training"].update(max_train_seconds=0.02, min_steps_per_fold=3)
    d = sweep_dir(root, "budget", budget)
    run_ranks(binary, [d, d])
    s = state(d)
    if s["state"] != "done" or "time budget" not in s["stop_reason"] or s["skipped_steps"] <= 0:
        fail(f"time budget over 2 processes: state {s['state']} at step {s['step']} of "
             f"{s['total_steps']}, stop reason '{s['stop_reason']}'")
    print(f"time budget over 2 processes: both ranks done, {s['skipped_steps']} of "
          f"{s['total_steps']} steps skipped ({s['stop_reason']})", flush=True)

    for victim in (1, 0):
        d = sweep_dir(root, f"killed{victim}", long_cfg)
        procs = start_ranks(binary, [d, d])
        wait_for_step(procs, d, 10)
        procs[victim].send_signal(signal.SIGKILL)
        other = 1 - victim
        rc, o, e, secs = finish(procs, timeout=30)[other]
        if rc == 0 or secs > 10 or f"rank {victim} closed its connection" not in e:
            fail(f"rank {victim} killed: rank {other} exited {rc} after {secs:.1f} s:\n{o}{e}")
        print(f"rank {victim} killed: rank {other} exit {rc} after {secs:.2f} s: "
              f"{e.strip().splitlines()[-1]}", flush=True)


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("equal", "failure"):
        fail("usage: run_arm_processes_test.py FLASHTICK_SWEEP equal|failure")
    binary, mode = sys.argv[1], sys.argv[2]
    root = tempfile.mkdtemp(prefix="run-arm-processes-")
    try:
        (check_equal if mode == "equal" else check_failure)(binary, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("PASS", flush=True)


if __name__ == "__main__":
    main()
