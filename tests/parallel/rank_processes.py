"""What the multi-process tests share (multi_process_test.py here,
tests/sweep/run_arm_processes_test.py): the FAIL line that ends a test, and waiting for
a job's rank processes under one deadline, so a rank that hangs fails the test as a
hang instead of blocking it until ctest's timeout.

Import it after putting this folder on sys.path.
"""
import subprocess
import sys
import time


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def communicate_all(procs, timeout, start=None, only=None):
    """[(rc, out, err, seconds since start)] of the ranks in `only` (default: all), in
    rank order, all within `timeout` seconds of `start` (default: now). On a rank still
    running at the deadline every process is killed and the test fails naming it."""
    start = time.monotonic() if start is None else start
    results = []
    for r, p in enumerate(procs):
        if only is not None and r not in only:
            continue
        try:
            out, err = p.communicate(timeout=max(1, timeout - (time.monotonic() - start)))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            fail(f"rank {r} of {len(procs)} did not finish within {timeout} s (a hang)")
        results.append((p.returncode, out, err, time.monotonic() - start))
    return results
