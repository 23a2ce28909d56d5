"""Overload and graceful shutdown of a real flashtickd over loopback (docs/reliability.md).

Capacity is made small on purpose (--workers 1 --max-queue 4) and measured: the
service time S of one request alone gives a capacity of 1/S requests a second. Then:
  1. overload: an open-loop client offers 10x that rate for LOAD_SECONDS. Every
     answer is OK or RESOURCE_EXHAUSTED (nothing else, no hang); refusals come
     quickly (p99 under REFUSE_P99_S); admitted requests keep a latency bound
     derived from the queue bound, (max_queue + workers) / workers * S, with slack;
     the server still completes work at about its capacity; its RSS stays flat
     (last third of the run vs the first third).
  2. recovery: right after the load stops, sequential requests all succeed at
     about the unloaded latency.
  3. graceful shutdown: with long requests (8x the calibrated length) queued and running
     and a TickStream open, SIGTERM; every in-flight request completes OK, the open
     stream keeps answering during the grace period and ends OK, and flashtickd exits 0
     ("flashtickd stopped") within the grace period.
Every wait is bounded; the server is killed and its directory removed whatever happens.

usage: run_overload.py --flashtickd BIN --make-model BIN
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import grpc
import numpy as np
from tritonclient.grpc import service_pb2_grpc as pb_grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from e2e_server import ServerProcess  # noqa: E402
from flashtickd_client import Checks, infer_request, queued, tick_stream  # noqa: E402

MODEL = "overload"
FEATURES = 6
WORKERS = 1
MAX_QUEUE = 4
LOAD_FACTOR = 10
LOAD_SECONDS = 12.0
REFUSE_P99_S = 0.25
GRACE_S = 60


def percentile(xs, q):
    return float(np.percentile(np.asarray(xs), q)) if xs else float("nan")


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def make_request(steps, seed=0):
    x = np.random.default_rng(seed).normal(0, 1, (1, steps, FEATURES)).astype(np.float32)
    return infer_request(MODEL, x, last_only=True)


def timed_call(stub, req, timeout=60):
    t0 = time.monotonic()
    try:
        stub.ModelInfer(req, timeout=timeout)
        code = grpc.StatusCode.OK
    except grpc.RpcError as e:
        code = e.code()
    return code, time.monotonic() - t0


def calibrate(stub):
    """Picks a sequence length whose service time is 20-80 ms; returns (req, S p50, S p99)."""
    steps = 256
    while True:
        req = make_request(steps)
        times = []
        for _ in range(12):
            code, dt = timed_call(stub, req)
            if code != grpc.StatusCode.OK:
                raise RuntimeError("calibration request failed: %s" % code)
            times.append(dt)
        p50 = percentile(times[2:], 50)
        if p50 >= 0.02 or steps >= 16384:
            return req, steps, p50, percentile(times[2:], 99)
        steps *= 2


def overload(server, stub, req, service_s, checks):
    rate = LOAD_FACTOR * WORKERS / service_s
    print("offering %.0f requests/s for %.0f s (capacity %.1f/s, service time %.1f ms)"
          % (rate, LOAD_SECONDS, WORKERS / service_s, service_s * 1e3), flush=True)
    results = []  # (code, latency, start offset)
    lock = threading.Lock()
    pending = []
    rss = []  # (offset, KiB)
    start = time.monotonic()

    def done_cb(fut, t0):
        try:
            fut.result()
            code = grpc.StatusCode.OK
        except grpc.RpcError as e:
            code = e.code()
        with lock:
            results.append((code, time.monotonic() - t0, t0 - start))

    n = 0
    next_rss = start
    while True:
        now = time.monotonic()
        if now - start >= LOAD_SECONDS:
            break
        if now >= next_rss:
            rss.append((now - start, rss_kib(server.proc.pid)))
            next_rss = now + 0.25
        due = start + n / rate
        if due > now:
            time.sleep(min(due - now, 0.01))
            continue
        t0 = time.monotonic()
        fut = stub.ModelInfer.future(req, timeout=60)
        fut.add_done_callback(lambda f, t0=t0: done_cb(f, t0))
        pending.append(fut)
        n += 1
    deadline = time.monotonic() + 90
    for f in pending:
        try:
            f.result(timeout=max(0.1, deadline - time.monotonic()))
        except grpc.RpcError:
            pass
        except grpc.FutureTimeoutError:
            break
    time.sleep(0.2)
    with lock:
        res = list(results)
    codes = {}
    for c, _, _ in res:
        codes[c.name] = codes.get(c.name, 0) + 1
    ok_lat = [dt for c, dt, _ in res if c == grpc.StatusCode.OK]
    ex_lat = [dt for c, dt, _ in res if c == grpc.StatusCode.RESOURCE_EXHAUSTED]
    print("sent %d, answered %d: %s" % (n, len(res), codes), flush=True)
    print("admitted latency p50 %.0f ms p99 %.0f ms max %.0f ms; refusal p50 %.1f ms p99 %.1f ms"
          % (percentile(ok_lat, 50) * 1e3, percentile(ok_lat, 99) * 1e3,
             max(ok_lat or [0]) * 1e3, percentile(ex_lat, 50) * 1e3,
             percentile(ex_lat, 99) * 1e3), flush=True)
    checks.check(len(res) == n, "every request answered (%d of %d)" % (len(res), n))
    checks.check(set(codes) <= {"OK", "RESOURCE_EXHAUSTED"},
                 "only OK and RESOURCE_EXHAUSTED under overload: %s" % codes)
    checks.check(len(ex_lat) >= n // 2, "most of the 10x excess refused (%d of %d)"
                 % (len(ex_lat), n))
    checks.check(percentile(ex_lat, 99) < REFUSE_P99_S,
                 "refusals are quick: p99 %.1f ms < %.0f ms"
                 % (percentile(ex_lat, 99) * 1e3, REFUSE_P99_S * 1e3))
    bound = (MAX_QUEUE + WORKERS) / WORKERS * service_s * 2.0 + 0.25
    checks.check(bool(ok_lat) and max(ok_lat) <= bound,
                 "admitted requests within the queue bound: max %.0f ms <= %.0f ms"
                 % (max(ok_lat or [0]) * 1e3, bound * 1e3))
    goodput = len(ok_lat) / LOAD_SECONDS
    checks.check(goodput >= 0.5 * WORKERS / service_s,
                 "still serving at capacity: %.1f OK/s (capacity %.1f/s)"
                 % (goodput, WORKERS / service_s))
    third = LOAD_SECONDS / 3
    first = [k for t, k in rss if t < third]
    last = [k for t, k in rss if t >= 2 * third]
    if first and last:
        growth = max(last) - max(first)
        print("RSS KiB: first third max %d, last third max %d (samples %d)"
              % (max(first), max(last), len(rss)), flush=True)
        checks.check(growth <= max(32 * 1024, 0.10 * max(first)),
                     "RSS flat under overload: +%d KiB from the first to the last third" % growth)
    return {"sent": n, "codes": codes, "rate": rate}


def recovery(stub, req, service_p50, checks):
    times = []
    codes = set()
    for _ in range(20):
        code, dt = timed_call(stub, req)
        codes.add(code.name)
        times.append(dt)
    p50 = percentile(times, 50)
    checks.check(codes == {"OK"}, "after the load: 20 sequential requests all OK (%s)" % codes)
    checks.check(p50 <= 2.0 * service_p50 + 0.02,
                 "after the load: latency back to normal, p50 %.1f ms (unloaded %.1f ms)"
                 % (p50 * 1e3, service_p50 * 1e3))


def graceful_shutdown(server, channel, stub, long_steps, checks):
    """Long requests in flight and a stream open, then SIGTERM."""
    Req, call = tick_stream(channel)
    import queue
    outbox = queue.Queue()
    replies = call(queued(outbox), timeout=120)
    o = Req()
    o.open.model_name = MODEL
    o.open.instrument = "SYNTH"
    o.open.date = "2026-01-02"
    outbox.put(o)
    rng = np.random.default_rng(4)

    def row(step):
        r = Req()
        r.features.step = step
        r.features.values.extend(rng.normal(0, 1, FEATURES).astype(np.float32).tolist())
        return r

    opened = next(replies)
    checks.check(opened.HasField("opened"), "stream opened before SIGTERM")
    for t in range(5):
        outbox.put(row(t))
        next(replies)
    # Long requests (8x the calibrated length, about 8 S each, so a slow sanitizer build
    # still drains within the grace period): the worker runs one, the rest wait.
    long_req = make_request(long_steps, seed=9)
    futures = [stub.ModelInfer.future(long_req, timeout=120) for _ in range(3)]
    time.sleep(0.3)
    t_term = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    # The open stream keeps answering during the grace period.
    streamed_after = 0
    try:
        for t in range(5, 10):
            outbox.put(row(t))
            r = next(replies)
            if r.HasField("prediction") and r.prediction.step == t:
                streamed_after += 1
        outbox.put(None)  # half-close: the server ends the stream
        rest = list(replies)
        stream_code = replies.code()
    except grpc.RpcError as e:
        rest, stream_code = [], e.code()
    checks.check(streamed_after == 5, "open stream answered %d of 5 steps after SIGTERM"
                 % streamed_after)
    checks.check(stream_code == grpc.StatusCode.OK,
                 "stream ended OK after SIGTERM (%s)" % stream_code)
    codes = []
    for f in futures:
        try:
            f.result(timeout=120)
            codes.append("OK")
        except grpc.RpcError as e:
            codes.append(e.code().name)
    checks.check(codes == ["OK"] * 3, "in-flight requests drained OK after SIGTERM: %s" % codes)
    try:
        rc = server.proc.wait(timeout=GRACE_S + 30)
    except subprocess.TimeoutExpired:
        rc = None
    drain_s = time.monotonic() - t_term
    log = server.log()
    checks.check(rc == 0 and "flashtickd stopped" in log and drain_s < GRACE_S,
                 "flashtickd exited 0 after draining, within the %d s grace (rc %s, %.1f s after "
                 "SIGTERM)" % (GRACE_S, rc, drain_s))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--flashtickd", required=True)
    parser.add_argument("--make-model", required=True)
    args = parser.parse_args()
    # Under AddressSanitizer (the sanitizer stage) freed memory waits in a 256 MB
    # quarantine, which reads as RSS growth; a small one keeps the RSS check meaningful.
    os.environ["ASAN_OPTIONS"] = ":".join(
        x for x in (os.environ.get("ASAN_OPTIONS", ""), "quarantine_size_mb=4") if x)
    workdir = tempfile.mkdtemp(prefix="flashtick_overload_")
    server = None
    checks = Checks()
    try:
        models = os.path.join(workdir, "models")
        subprocess.run([args.make_model, "--out", models, "--name", MODEL, "--version", "1",
                        "--seed", "3", "--width", "32", "--layers", "2", "--heads", "2",
                        "--max-context", "16384"], check=True, timeout=300,
                       stdout=subprocess.DEVNULL)
        server = ServerProcess(args.flashtickd, models, workdir,
                               ["--threads", "1", "--workers", str(WORKERS),
                                "--max-queue", str(MAX_QUEUE),
                                "--shutdown-grace-seconds", str(GRACE_S)])
        server.start(timeout_s=120)
        channel = grpc.insecure_channel(server.address, options=[
            ("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)])
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        req, steps, s50, s99 = calibrate(stub)
        print("calibrated: N = %d steps, service time p50 %.1f ms p99 %.1f ms"
              % (steps, s50 * 1e3, s99 * 1e3), flush=True)
        overload(server, stub, req, s50, checks)
        recovery(stub, req, s50, checks)
        checks.check(server.alive(), "flashtickd alive after the overload")
        graceful_shutdown(server, channel, stub, min(8 * steps, 16384), checks)
        channel.close()
    except Exception as e:  # noqa: BLE001 - any error is a failure with its reason
        checks.unexpected(e)
    finally:
        checks.kill_server(server)
        shutil.rmtree(workdir, ignore_errors=True)
    print("overload: %d checks failed" % len(checks.failures))
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.exit(main())
