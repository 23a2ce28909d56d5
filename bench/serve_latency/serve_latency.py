#!/usr/bin/env python3
"""Serving latency benchmark (docs/serving.md): flashtickd over loopback gRPC, flashtick in
process and the PyTorch twin, measured in ONE run on the same model and shapes.

1. flashtick_make_model writes the model (or --model-dir names one);
2. flashtickd serves it; this client times ModelInfer ([1, N, F] per request,
   raw bytes, answer [1, N, 3]) at each N and number of concurrent clients
   (each client sends --reps requests back to back; throughput = requests/s of the
   whole run), and TickStream per-tick latency (send one feature row, wait for its
   prediction, incremental K/V state on the server) over a --ticks-step day;
3. serve_latency_inproc times Transformer::Predict / Step without gRPC;
4. torch_serve.py (any Python with torch: --torch-python) times the same weights in
   PyTorch eager (and torch.compile with --compile), checked against our output.
Prints the table (latency_table.py) and writes results.jsonl + table.md to --out.

With --server HOST:PORT it does step 2 only, against a flashtickd that is already
running (--model names the served model; nothing is made or started): the gRPC rows.
bench/scripts/gpu_serve.sh uses it so, on the server it started itself on the GPU
machine, and gets the in-process and PyTorch rows from gpu_serve_latency.sh.

usage: serve_latency.py --flashtickd BIN --make-model BIN --inproc BIN --out DIR
       [--n 512,2048] [--clients 1,8] [--reps 20] [--ticks 1024] [--threads 2]
       [--width 32 --layers 2 --heads 2] [--torch-python PY] [--compile]
       serve_latency.py --server HOST:PORT [--model NAME] --out DIR [--n ...] [--clients ...]
"""
import argparse
import concurrent.futures
import json
import os
import queue
import re
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e"))
import latency_table  # noqa: E402
from flashtickd_client import infer_request, queued, tick_stream  # noqa: E402

READY_RE = re.compile(r"flashtickd ready grpc=(\S+):(\d+) metrics=(-?\d+)")
MODEL = "flashtick-bench"  # the served model's name; --model changes it


def percentiles(ms):
    ms = sorted(ms)

    def rank(q):
        return ms[min(len(ms) - 1, max(0, int(np.ceil(q * len(ms))) - 1))]

    return {"samples": len(ms), "p50_ms": rank(0.5), "p99_ms": rank(0.99),
            "p999_ms": rank(0.999), "mean_ms": float(np.mean(ms))}


def start_server(args, models, workdir):
    log_path = os.path.join(workdir, "flashtickd.log")
    log = open(log_path, "w")
    cmd = [args.flashtickd, "--listen", "127.0.0.1:0", "--metrics-port", "-1",
           "--model-repository", models, "--device", args.device, "--threads", str(args.threads),
           "--max-queue", "1024", "--batch-max-delay-us", str(args.batch_max_delay_us)]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        m = READY_RE.search(open(log_path).read())
        if m:
            return proc, "127.0.0.1:%s" % m.group(2), log_path
        if proc.poll() is not None:
            raise RuntimeError("flashtickd exited: " + open(log_path).read())
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("flashtickd not ready: " + open(log_path).read())


def bench_model_infer(stub, n, clients, reps, warmup, features, last_only=False):
    """ModelInfer latency of `clients` synchronous callers, each sending `reps` requests
    (last_only: each asks for the last step's probabilities only, the next call)."""
    rng = np.random.default_rng(n)
    reqs = [infer_request(MODEL, rng.normal(size=(1, n, features)).astype(np.float32), last_only)
            for _ in range(clients)]
    for _ in range(warmup):
        stub.ModelInfer(reqs[0], timeout=3600)
    lat = []
    lock = threading.Lock()

    def client(i):
        mine = []
        for _ in range(reps):
            t0 = time.perf_counter()
            r = stub.ModelInfer(reqs[i], timeout=3600)
            mine.append(1000 * (time.perf_counter() - t0))
            assert len(r.raw_output_contents[0]) == (1 if last_only else n) * 3 * 4
        with lock:
            lat.extend(mine)

    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    wall = time.perf_counter() - t0
    rec = {"impl": "flashtickd_grpc", "what": "forward_last" if last_only else "forward", "N": n,
           "B": 1, "clients": clients}
    rec.update(percentiles(lat))
    rec["requests_per_s"] = len(lat) / wall
    return rec


def bench_stream(channel, ticks, features):
    Req, call = tick_stream(channel)
    outbox = queue.Queue()
    opening = Req()
    opening.open.model_name = MODEL
    opening.open.instrument = "BENCH"
    opening.open.date = "2026-01-02"
    outbox.put(opening)
    replies = call(queued(outbox), timeout=3600)
    opened = next(replies).opened
    rows = np.random.default_rng(3).normal(size=(ticks, features)).astype(np.float32)
    lat = []
    for t in range(ticks):
        msg = Req()
        msg.features.step = t
        msg.features.values.extend(rows[t].tolist())
        t0 = time.perf_counter()
        outbox.put(msg)
        reply = next(replies)
        lat.append(1000 * (time.perf_counter() - t0))
        assert reply.prediction.step == t
    outbox.put(None)
    list(replies)
    rec = {"impl": "flashtickd_grpc", "what": "tick", "N": ticks, "B": 1, "clients": 1,
           "state_mode": opened.state_mode, "kernel_path": opened.kernel_path, "device": opened.device}
    rec.update(percentiles(lat))
    return rec


def find_torch_python(requested):
    candidates = [requested] if requested else [sys.executable, "/usr/bin/python3", "python3"]
    for py in candidates:
        if py and subprocess.run([py, "-c", "import torch"], capture_output=True).returncode == 0:
            return py
    return None


def run_lines(cmd, sink, timeout, threads):
    print("$ " + " ".join(cmd), flush=True)
    # OpenMP threads = --threads: on a shared machine spinning extra threads cost torch 10×.
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    recs = [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]
    if out.returncode != 0:
        print(out.stderr[-2000:], file=sys.stderr)
    for r in recs:
        sink(r)
    return recs


def main():
    global MODEL
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flashtickd", help="flashtickd binary to start (unless --server)")
    ap.add_argument("--server", help="HOST:PORT of a running flashtickd: gRPC rows only")
    ap.add_argument("--model", default=MODEL, help="served model name (with --server)")
    ap.add_argument("--commit", default=os.environ.get("FLASHTICK_COMMIT", ""),
                    help="recorded in the run line (default $FLASHTICK_COMMIT, else git)")
    ap.add_argument("--make-model")
    ap.add_argument("--inproc", help="serve_latency_inproc binary (in-process column)")
    ap.add_argument("--model-dir", help="an existing <name>/<version> dir instead of making one")
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--n", default="512,2048")
    ap.add_argument("--clients", default="1,8")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--ticks", type=int, default=1024)
    ap.add_argument("--last-only", action="store_true",
                    help="also each ModelInfer row with last_only (the next step's call only)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--width", type=int, default=32)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--batch-max-delay-us", type=int, default=250)
    ap.add_argument("--torch-python", default="")
    ap.add_argument("--compile", action="store_true", help="also torch.compile")
    args = ap.parse_args()
    if not args.server and not args.flashtickd:
        ap.error("give --flashtickd BIN (start one) or --server HOST:PORT (use a running one)")
    MODEL = args.model
    os.makedirs(args.out, exist_ok=True)
    results = os.path.join(args.out, "results.jsonl")
    open(results, "w").close()

    def sink(rec):
        with open(results, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print(json.dumps(rec), flush=True)

    commit = args.commit or subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                                           capture_output=True, text=True).stdout.strip() or "unknown"
    sink({"what": "run", "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
          "commit": commit, "host_cpus": os.cpu_count(), "load_average": os.getloadavg(),
          "threads": args.threads, "argv": sys.argv[1:]})
    if args.server:
        measure_grpc(args, args.server, sink)
    else:
        run_all(args, sink)
    text = latency_table.table(latency_table.load([results]))
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(text + "\n")
    print(text)
    return 0


def measure_grpc(args, address, sink):
    """The gRPC rows: ModelInfer at each N and client count, then one streamed day."""
    channel = grpc.insecure_channel(address, options=[("grpc.max_send_message_length", -1),
                                                      ("grpc.max_receive_message_length", -1)])
    stub = pb_grpc.GRPCInferenceServiceStub(channel)
    features = 6
    for n in [int(v) for v in args.n.split(",") if v]:  # --n "": ticks only
        for c in [int(v) for v in args.clients.split(",")]:
            sink(bench_model_infer(stub, n, c, args.reps, args.warmup, features))
            if args.last_only:
                sink(bench_model_infer(stub, n, c, args.reps, args.warmup, features, True))
    if args.ticks > 0:
        sink(bench_stream(channel, args.ticks, features))
    channel.close()


def run_all(args, sink):
    workdir = tempfile.mkdtemp(prefix="serve_latency_")
    proc = None
    try:
        models = os.path.join(workdir, "models")
        if args.model_dir:
            os.makedirs(models)
            shutil.copytree(args.model_dir, os.path.join(models, MODEL, "1"))
        else:
            subprocess.run([args.make_model, "--out", models, "--name", MODEL, "--seed", "5",
                            "--width", str(args.width), "--layers", str(args.layers),
                            "--heads", str(args.heads), "--max-context", "32768"],
                           check=True, timeout=300, capture_output=True)
        model_dir = os.path.join(models, MODEL, "1")
        proc, address, log_path = start_server(args, models, workdir)
        measure_grpc(args, address, sink)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
        proc = None

        # In process and PyTorch after the server stopped: each owns the cores alone.
        # B = max clients: the batched forward the server runs for concurrent clients.
        batches = ",".join(str(b) for b in sorted({1, max(int(v) for v in args.clients.split(","))}))
        common = ["--model-dir", model_dir, "--device", args.device, "--n", args.n,
                  "--batch", batches, "--reps", str(args.reps), "--warmup", str(args.warmup),
                  "--ticks", str(args.ticks), "--threads", str(args.threads)]
        dump = os.path.join(workdir, "check")
        if args.inproc:
            run_lines([args.inproc] + common + ["--check-steps", "256", "--dump", dump], sink, 7200,
                      args.threads)
        torch_py = find_torch_python(args.torch_python)
        if torch_py is None:
            sink({"impl": "torch_eager", "what": "setup", "error": "no Python with torch found "
                  "(--torch-python; Debian: apt-get install python3-torch)"})
        else:
            cmd = [torch_py, os.path.join(HERE, "torch_serve.py")] + common
            if args.inproc:
                cmd += ["--compare", dump]
            if args.compile:
                cmd += ["--compile"]
            run_lines(cmd, sink, 7200, args.threads)
    finally:
        if proc is not None:
            proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
