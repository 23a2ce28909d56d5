"""e2e_load_gen: the open-loop load generator (bench/load_gen) against a real flashtickd.

Makes a tiny model, starts flashtickd on the CPU on a free loopback port, and runs
load_gen at two low rates (far below what the tiny model serves on one loaded core)
for 1.5 s each after 0.5 s of warmup. Checks the JSON lines: a meta line, one line
per rate and a summary; every request answered OK; achieved throughput within 15% of
the arrivals really offered; those arrivals within the Poisson spread of the target
rate; p50 <= p99 <= p99.9 <= max, all positive; no knee. Also: --help exits 0, bad
flags and an unknown model fail with a message naming the problem. Bounds are loose
on purpose (2 shared cores, other builds beside it): the SLO is 2 s and the
generator's send-lag limit 100 ms, so only a broken generator or server fails.

Then --clients 1,2: closed loop for 1 s each: one line per client count, every request
answered, throughput and percentiles consistent with the answers, each in
latency_table.py's C++ client column; --clients with --rates is refused.

Then --tick-stream: a day of TICKS feature rows over TickStream (the first two not
recorded): a meta line and one tick line, every tick answered, the recorded ones
counted, percentiles in order, the server's compute no more than the latency, and
bench/serve_latency/latency_table.py putting it in its own column; a day longer than
the session's limit fails naming the limit, and --tick-warmup must be below --ticks.

usage: run_load_gen.py --load-gen BIN --flashtickd BIN --make-model BIN
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "serve_latency"))
import latency_table  # noqa: E402
from e2e_server import ServerProcess  # noqa: E402

MODEL = "loadgen"
RATES = [20.0, 60.0]
DURATION_S = 1.5
TICKS = 100
MAX_CONTEXT = 256


def fail(msg, server=None):
    print("FAIL: " + msg, flush=True)
    if server is not None:
        print("--- flashtickd log ---\n" + server.log()[-3000:], flush=True)
    sys.exit(1)


def run(cmd, timeout=60):
    print("$ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def check_cli_errors(load_gen, address):
    r = run([load_gen, "--help"])
    if r.returncode != 0 or "--rates" not in r.stdout or "--slo-ms" not in r.stdout:
        fail("--help: exit %d, output:\n%s%s" % (r.returncode, r.stdout, r.stderr))
    r = run([load_gen, "--server", address, "--model", MODEL, "--rates", "abc"])
    if r.returncode == 0 or "--rates" not in r.stderr:
        fail("--rates abc should fail naming --rates: exit %d\n%s" % (r.returncode, r.stderr))
    r = run([load_gen, "--server", address, "--model", MODEL, "--rates", "50,20"])
    if r.returncode == 0 or "ascending" not in r.stderr:
        fail("--rates 50,20 should fail (not ascending): exit %d\n%s" % (r.returncode, r.stderr))
    r = run([load_gen, "--server", address, "--model", "no-such-model", "--rates", "10"])
    if r.returncode == 0 or "no-such-model" not in r.stderr:
        fail("an unknown model should fail naming it: exit %d\n%s" % (r.returncode, r.stderr))


def check_lines(lines):
    if not lines or lines[0].get("bench") != "meta":
        fail("the first JSON line is not the meta line: %s" % lines[:1])
    rates = [l for l in lines if l.get("bench") == "load_gen" and "offered_rps" in l]
    summary = [l for l in lines if l.get("what") == "summary"]
    if len(rates) != len(RATES) or len(summary) != 1:
        fail("expected %d rate lines and a summary, got %d and %d" % (len(RATES), len(rates), len(summary)))
    for line in rates:
        tag = "rate %g: " % line["offered_rps"]
        for key in ("gpu", "commit", "N", "B", "model", "server_device"):
            if key not in line:
                fail(tag + "no %r field" % key)
        if line["errors"] or line["error_count"] != 0:
            fail(tag + "errors %s" % line["errors"])
        if line["ok"] != line["scheduled"] or line["samples"] != line["ok"]:
            fail(tag + "ok %d, samples %d of %d sent" % (line["ok"], line["samples"], line["scheduled"]))
        # Poisson: the count in the window has sd sqrt(rate * T); 5 sd is never by chance
        # (and the seed is fixed).
        expect = line["offered_rps"] * DURATION_S
        if abs(line["scheduled"] - expect) > 5 * math.sqrt(expect):
            fail(tag + "%d arrivals in %.1f s, expected about %.0f" % (line["scheduled"], DURATION_S, expect))
        if abs(line["achieved_rps"] - line["scheduled_rps"]) > 0.15 * line["scheduled_rps"]:
            fail(tag + "achieved %.1f/s of %.1f/s offered" % (line["achieved_rps"], line["scheduled_rps"]))
        p = [line[k] for k in ("min_ms", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms")]
        if not (0 < p[0] and all(a <= b for a, b in zip(p, p[1:]))):
            fail(tag + "percentiles out of order: min/p50/p90/p99/p99.9/max = %s" % p)
        if line["knee"] or line["generator_behind"]:
            fail(tag + "past the knee (%s) at a low rate" % line["knee_reason"])
        if not 0 <= line["generator_cpu_cores"] < 2:
            fail(tag + "generator_cpu_cores %s" % line["generator_cpu_cores"])
        print("%s achieved %.1f/s of %.1f/s sent; p50 %.2f ms, p99 %.2f ms, max %.2f ms; send lag p99 "
              "%.3f ms; generator %.3f cores" % (tag, line["achieved_rps"], line["scheduled_rps"],
                                                 line["p50_ms"], line["p99_ms"], line["max_ms"],
                                                 line["send_lag_p99_ms"], line["generator_cpu_cores"]))
    if summary[0]["knee_rps"] is not None or summary[0]["max_sustained_rps"] != RATES[-1]:
        fail("summary: %s" % summary[0])


def check_closed_loop(load_gen, address, work, server):
    out = os.path.join(work, "closed.jsonl")
    r = run([load_gen, "--server", address, "--model", MODEL, "--n", "64", "--clients", "1,2",
             "--duration-s", "1", "--warmup-s", "0.3", "--last-only", "--json", out,
             "--gpu", "none", "--commit", "test"])
    print(r.stdout + r.stderr, flush=True)
    if r.returncode != 0:
        fail("load_gen --clients exit %d" % r.returncode, server)
    with open(out) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    runs = [l for l in lines if l.get("op") == "model_infer_closed"]
    if not lines or lines[0].get("bench") != "meta" or [l["clients"] for l in runs] != [1, 2]:
        fail("--clients 1,2: expected a meta line and lines for 1 and 2 clients, got %s" % lines)
    for line in runs:
        tag = "%d clients: " % line["clients"]
        if line["error_count"] != 0 or line["ok"] < 1 or line["samples"] != line["ok"]:
            fail(tag + "ok %d, samples %d, errors %s" % (line["ok"], line["samples"], line["errors"]))
        if abs(line["throughput_rps"] - line["ok"] / line["window_s"]) > 1e-6 or not line["last_only"]:
            fail(tag + "throughput %s of %d answers in %s s" % (line["throughput_rps"], line["ok"], line["window_s"]))
        p = [line[k] for k in ("min_ms", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms")]
        if not (0 < p[0] and all(a <= b for a, b in zip(p, p[1:]))):
            fail(tag + "percentiles out of order: min/p50/p90/p99/p99.9/max = %s" % p)
        # A closed-loop client has one request out at a time: its answers in the window
        # cannot outnumber window / fastest answer (plus the one sent at the window's end).
        if line["ok"] > line["clients"] * (line["window_s"] * 1000.0 / line["min_ms"] + 1):
            fail(tag + "%d answers in %s s at min %.3f ms each" % (line["ok"], line["window_s"], line["min_ms"]))
        print("%s%.1f answers/s; p50 %.2f ms, p99 %.2f ms" % (tag, line["throughput_rps"], line["p50_ms"],
                                                             line["p99_ms"]), flush=True)
    for line in runs:
        row = [l for l in latency_table.table(lines).splitlines()
               if l.startswith("| forward_last | 64 | 1 | %d |" % line["clients"])]
        if len(row) != 1 or "| %s |" % latency_table.cell(line) not in row[0]:
            fail("latency_table.py does not show the %d-client line: %s" % (line["clients"], row))
    r = run([load_gen, "--server", address, "--model", MODEL, "--clients", "1", "--rates", "10"])
    if r.returncode != 2 or "--clients" not in r.stderr:
        fail("--clients with --rates should be refused naming them: exit %d\n%s" % (r.returncode, r.stderr))


def check_tick_stream(load_gen, address, work, server):
    out = os.path.join(work, "ticks.jsonl")
    r = run([load_gen, "--server", address, "--model", MODEL, "--tick-stream", "--ticks", str(TICKS),
             "--tick-warmup", "2", "--json", out, "--gpu", "none", "--commit", "test"])
    print(r.stdout + r.stderr, flush=True)
    if r.returncode != 0:
        fail("load_gen --tick-stream exit %d" % r.returncode, server)
    with open(out) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    if len(lines) != 2 or lines[0].get("bench") != "meta":
        fail("--tick-stream: expected a meta line and one tick line, got %s" % lines)
    t = lines[1]
    for key, want in (("what", "tick"), ("impl", "load_gen_grpc"), ("op", "tick_stream"), ("N", TICKS),
                      ("answered", TICKS), ("samples", TICKS - 2), ("state_mode", "incremental"),
                      ("device", "cpu"), ("commit", "test")):
        if t.get(key) != want:
            fail("--tick-stream: %s is %r, expected %r (line %s)" % (key, t.get(key), want, t))
    p = [t[k] for k in ("min_ms", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms")]
    if not (0 < p[0] and all(a <= b for a, b in zip(p, p[1:]))):
        fail("--tick-stream: percentiles out of order: min/p50/p90/p99/p99.9/max = %s" % p)
    if not 0 < t["compute_mean_ms"] <= t["mean_ms"]:
        fail("--tick-stream: server compute %.4f ms a tick, latency %.4f ms" % (t["compute_mean_ms"], t["mean_ms"]))
    row = [l for l in latency_table.table(lines).splitlines() if l.startswith("| tick | %d |" % TICKS)]
    if len(row) != 1 or "| %s |" % latency_table.cell(t) not in row[0]:
        fail("latency_table.py does not show the tick line: %s" % row)
    r = run([load_gen, "--server", address, "--model", MODEL, "--tick-stream", "--ticks", str(MAX_CONTEXT + 1)])
    if r.returncode == 0 or "limit of %d steps" % MAX_CONTEXT not in r.stderr:
        fail("a day past the session's limit should fail naming it: exit %d\n%s" % (r.returncode, r.stderr))
    r = run([load_gen, "--server", address, "--model", MODEL, "--tick-stream", "--ticks", "5",
             "--tick-warmup", "5"])
    if r.returncode != 2 or "--tick-warmup" not in r.stderr:
        fail("--tick-warmup 5 of --ticks 5 should fail naming it: exit %d\n%s" % (r.returncode, r.stderr))
    print("tick stream: %d ticks, p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms; server compute mean %.4f ms"
          % (t["samples"], t["p50_ms"], t["p99_ms"], t["p999_ms"], t["compute_mean_ms"]), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--load-gen", required=True)
    ap.add_argument("--flashtickd", required=True)
    ap.add_argument("--make-model", required=True)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="e2e_load_gen.")
    server = None
    try:
        models = os.path.join(work, "models")
        r = run([args.make_model, "--out", models, "--name", MODEL, "--width", "16", "--heads", "2",
                 "--layers", "1", "--max-context", str(MAX_CONTEXT), "--force"])
        if r.returncode != 0:
            fail("flashtick_make_model: " + r.stderr)
        server = ServerProcess(args.flashtickd, models, work, extra_args=["--threads", "1"])
        server.start()
        check_cli_errors(args.load_gen, server.address)
        out = os.path.join(work, "load.jsonl")
        r = run([args.load_gen, "--server", server.address, "--model", MODEL, "--n", "64",
                 "--rates", ",".join("%g" % x for x in RATES), "--duration-s", str(DURATION_S),
                 "--warmup-s", "0.5", "--slo-ms", "2000", "--max-send-lag-ms", "100",
                 "--json", out, "--gpu", "none", "--commit", "test"])
        print(r.stdout + r.stderr, flush=True)
        if r.returncode != 0:
            fail("load_gen exit %d" % r.returncode, server)
        with open(out) as f:
            check_lines([json.loads(l) for l in f if l.strip()])
        check_closed_loop(args.load_gen, server.address, work, server)
        check_tick_stream(args.load_gen, server.address, work, server)
        code = server.stop()
        server = None
        if code != 0:
            fail("flashtickd exit %s after SIGTERM" % code)
        print("PASS", flush=True)
    finally:
        if server is not None:
            server.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
