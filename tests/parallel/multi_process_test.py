#!/usr/bin/env python3
"""Multi-process data parallelism on the CPU (docs/multi_gpu.md, multi-process).

Launches real processes of bench/data_parallel/data_parallel_rank, one per rank, that
meet through rank 0's TCP store (port 0: rank 0 picks a free port and writes it to a
file, so parallel ctest runs never collide) and sum gradients over the TCP all-reduce.

  equal W...   for each W: the W ranks' per-step losses and final weight hashes must
               equal, bit for bit, the in-process run over W threads (HostReduceGroup),
               on every rank; and the losses must follow the 1-replica run closely.
  failure      3 ranks; rank 2 SIGKILLs itself at step 2: ranks 0 and 1 must exit
               non-zero within a few seconds saying which rank closed its connection.
               Then 2 ranks, rank 1 hangs at step 1: rank 0 must exit non-zero with
               DeadlineExceeded after its 1 s collective timeout, naming rank 1; rank 0
               (which also serves the store) killed: rank 1 exits naming it; and rank 0
               alone of 2: the rendezvous times out naming the missing rank 1.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rank_processes import communicate_all, fail  # noqa: E402

TINY = ["--n", "16", "--width", "16", "--heads", "2", "--layers", "1", "--bucket-kib", "1",
        "--rendezvous-timeout", "20"]


def parse_lines(text, who):
    steps, weights = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        if "error" in rec:
            fail(f"{who} reported an error: {rec['error']}")
        if "step" in rec:
            steps[rec["step"]] = rec["loss"]
        if "weights_fnv1a" in rec:
            weights = rec["weights_fnv1a"]
    return [steps[k] for k in sorted(steps)], weights


def run_reference(binary, replicas, extra):
    p = subprocess.run([binary, "--world-size", "1", "--replicas", str(replicas)] + TINY + extra,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail(f"in-process run with {replicas} replicas exited {p.returncode}: {p.stdout}{p.stderr}")
    return parse_lines(p.stdout, f"in-process R={replicas}")


def launch(binary, world, extra, per_rank_extra=None, timeout=60, wait_for=None):
    """Starts the ranks (rank 0 first; it picks the port); returns [(rc, out, err, secs)]
    of the ranks in wait_for (default: all), killing the others once those have ended."""
    per_rank_extra = per_rank_extra or {}
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK",
                        "JOB_COMPLETION_INDEX")}
    with tempfile.TemporaryDirectory() as tmp:
        port_file = os.path.join(tmp, "port")
        procs = []
        start = time.monotonic()

        def spawn(rank, port, more):
            # WORLD_SIZE and MASTER_ADDR through the environment, rank and port as flags:
            # both paths of the configuration are exercised.
            e = dict(env, WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1")
            cmd = [binary, "--rank", str(rank), "--master-port", str(port)] + TINY + extra + more
            return subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)

        procs.append(spawn(0, 0, ["--port-file", port_file] + per_rank_extra.get(0, [])))
        while not os.path.exists(port_file):
            if procs[0].poll() is not None:
                fail(f"rank 0 exited before listening: {procs[0].communicate()}")
            if time.monotonic() - start > 20:
                procs[0].kill()
                fail("rank 0 did not write its port within 20 s")
            time.sleep(0.01)
        port = int(open(port_file).read())
        for r in range(1, world):
            procs.append(spawn(r, port, per_rank_extra.get(r, [])))
        results = communicate_all(procs, timeout, start=start, only=wait_for)
        for p in procs:  # a rank left hanging on purpose
            if p.poll() is None:
                p.kill()
                p.communicate()
        return results


def check_equal(binary, worlds):
    extra = ["--steps", "4", "--optimizer", "adamw", "--batch", "4"]
    single, _ = run_reference(binary, 1, extra)
    for world in worlds:
        ref_losses, ref_weights = run_reference(binary, world, extra)
        results = launch(binary, world, extra)
        for r, (rc, out, err, secs) in enumerate(results):
            if rc != 0:
                fail(f"W={world}: rank {r} exited {rc}\nstdout:\n{out}\nstderr:\n{err}")
            losses, weights = parse_lines(out, f"W={world} rank {r}")
            if losses != ref_losses:
                fail(f"W={world}: rank {r} losses {losses} != in-process {world}-thread run "
                     f"{ref_losses}")
            if weights != ref_weights:
                fail(f"W={world}: rank {r} final weights hash {weights} != in-process "
                     f"{world}-thread run's {ref_weights}")
        worst = max(abs(a - b) for a, b in zip(ref_losses, single))
        if len(ref_losses) != len(single) or worst > 1e-6:
            fail(f"W={world}: losses {ref_losses} do not follow the 1-replica run {single}")
        print(f"W={world}: {world} processes == {world} threads bit for bit "
              f"({len(ref_losses)} steps, weights {ref_weights}); "
              f"|loss - 1-replica| <= {worst:.2e}", flush=True)
    # Sophia-H too (its Hessian-vector product is summed the same way), at W=2.
    extra = ["--steps", "3", "--optimizer", "sophia_h", "--hessian-interval", "2", "--batch", "4"]
    ref = run_reference(binary, 2, extra)
    for r, (rc, out, err, _) in enumerate(launch(binary, 2, extra)):
        if rc != 0:
            fail(f"Sophia-H W=2: rank {r} exited {rc}: {out}{err}")
        if parse_lines(out, f"Sophia-H rank {r}") != ref:
            fail(f"Sophia-H W=2: rank {r} differs from the 2-thread run {ref}: {out}")
    print("Sophia-H W=2: 2 processes == 2 threads bit for bit", flush=True)


def check_failure(binary):
    world, victim = 3, 2
    extra = ["--steps", "6", "--collective-timeout", "30", "--batch", "3"]
    results = launch(binary, world, extra, {victim: ["--die-at-step", "2"]}, timeout=60)
    rc, out, err, secs = results[victim]
    if rc != -9:
        fail(f"rank {victim} was to kill itself (SIGKILL) but exited {rc}: {out}{err}")
    named = False
    for r, (rc, out, err, secs) in enumerate(results):
        if r == victim:
            continue
        if rc == 0:
            fail(f"rank {r} exited 0 although rank {victim} died mid-run:\n{out}")
        if secs > 10:
            fail(f"rank {r} took {secs:.1f} s to give up after rank {victim} died")
        done = sum(1 for line in out.splitlines() if '"step"' in line)
        if done != 2:
            fail(f"rank {r} finished {done} steps; rank {victim} was to die at step 2:\n{out}")
        if "closed its connection" not in out + err:
            fail(f"rank {r}'s error does not say a peer closed its connection:\n{out}{err}")
        named |= f"rank {victim} closed its connection" in out + err
        print(f"rank {r}: exit {rc} after {secs:.2f} s: {err.strip().splitlines()[-1]}", flush=True)
    if not named:
        fail(f"no surviving rank named rank {victim} as the one that closed its connection")

    # A hung rank: the other gives up after --collective-timeout, never hangs.
    extra = ["--steps", "4", "--collective-timeout", "1", "--batch", "2"]
    procs = launch(binary, 2, extra, {1: ["--stall-at-step", "1"]}, timeout=30, wait_for=[0])
    rc, out, err, secs = procs[0]
    if rc == 0:
        fail(f"rank 0 exited 0 although rank 1 hung:\n{out}")
    if secs > 10:
        fail(f"rank 0 took {secs:.1f} s to give up on a hung rank 1 (collective timeout 1 s)")
    if "DEADLINE_EXCEEDED" not in out or "rank 1" not in out:
        fail(f"rank 0's error is not a deadline naming rank 1:\n{out}{err}")
    print(f"rank 0: exit {rc} after {secs:.2f} s: {err.strip().splitlines()[-1]}", flush=True)

    # Rank 0 dies: it is also the store, so this is the other special case.
    procs = launch(binary, 2, ["--steps", "4", "--batch", "2"], {0: ["--die-at-step", "1"]})
    if procs[0][0] != -9:
        fail(f"rank 0 was to kill itself but exited {procs[0][0]}")
    rc, out, err, secs = procs[1]
    if rc == 0 or secs > 10 or "rank 0 closed its connection" not in out:
        fail(f"rank 1 after rank 0 died: exit {rc} after {secs:.1f} s:\n{out}{err}")
    print(f"rank 1: exit {rc} after {secs:.2f} s: {err.strip().splitlines()[-1]}", flush=True)

    # Rank 1 never starts: rank 0's rendezvous names it.
    p = subprocess.run([binary, "--world-size", "2", "--rank", "0", "--master-port", "0",
                        "--rendezvous-timeout", "1"] + TINY[:-2],  # TINY less its timeout
                       capture_output=True, text=True, timeout=30)
    want = "rendezvous timed out after 1 s: 1 of 2 ranks joined (missing: 1)"
    if p.returncode == 0 or want not in p.stdout:
        fail(f"rank 0 alone: exit {p.returncode}, expected '{want}':\n{p.stdout}{p.stderr}")
    print(f"rank 0 alone: exit {p.returncode}: {want}", flush=True)


def main():
    if len(sys.argv) < 3:
        fail("usage: multi_process_test.py BINARY equal W... | failure")
    binary, mode = sys.argv[1], sys.argv[2]
    if mode == "equal":
        check_equal(binary, [int(w) for w in sys.argv[3:]] or [2, 4])
    elif mode == "failure":
        check_failure(binary)
    else:
        fail(f"unknown mode {mode}")
    print("PASS", flush=True)


if __name__ == "__main__":
    main()
