#!/usr/bin/env python3
"""Side-by-side latency table of bench/serve_latency results (JSON lines from
serve_latency.py's gRPC client, load_gen --tick-stream, serve_latency_inproc and
torch_serve.py).

Rows: what (forward: one [B, N, F] request; forward_last: the same asking for the last
step only; tick: one streamed step with incremental state), N, and B (rows per request) or clients (concurrent gRPC
clients, each sending B = 1). Columns: p50 / p99 / p99.9 in ms per implementation,
plus throughput (requests/s for gRPC, rows/s in process). Also prints the checks
(Step vs forward, torch vs flashtick). usage: latency_table.py FILE.jsonl...
"""
import json
import sys

# load_gen_grpc: the same server through load_gen, a C++ client (tick rows from
# --tick-stream, forward rows from --clients: closed loop, one connection a client);
# load_gen_grpc_graphs: the same client against a server run with --decode-graphs.
IMPLS = [("flashtickd_grpc", "flashtickd gRPC"), ("load_gen_grpc", "flashtickd gRPC, C++ client"),
         ("load_gen_grpc_graphs", "C++ client, --decode-graphs"),
         ("flashtick_inproc", "flashtick in-process"),
         ("torch_eager", "PyTorch eager"), ("torch_compile", "torch.compile")]


def load(paths):
    recs = []
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    recs.append(json.loads(line))
    return recs


def cell(rec):
    if rec is None:
        return "—"
    if "error" in rec:
        return "error: " + rec["error"][:40]
    return " / ".join(("%.0f" if v >= 100 else "%.3g") % v
                      for v in (rec["p50_ms"], rec["p99_ms"], rec["p999_ms"]))


def table(recs):
    rows = {}
    for r in recs:
        if r.get("what") not in ("forward", "forward_last", "tick"):
            continue
        key = (r["what"], r["N"], r.get("B", 1), r.get("clients", 1))
        rows.setdefault(key, {})[r["impl"]] = r
    lines = ["| what | N | B | clients | " + " | ".join(name + " p50/p99/p99.9 ms" for _, name in IMPLS)
             + " | gRPC req/s | in-process rows/s | eager ÷ in-process (p50) |",
             "|---|---|---|---|" + "---|" * len(IMPLS) + "---|---|---|"]
    for key in sorted(rows, key=lambda k: (k[0], k[1], k[2], k[3])):
        by = rows[key]
        grpc = by.get("flashtickd_grpc", {})
        inproc = by.get("flashtick_inproc", {})
        eager = by.get("torch_eager", {})
        ratio = ("%.2f×" % (eager["p50_ms"] / inproc["p50_ms"])
                 if "p50_ms" in eager and "p50_ms" in inproc else "—")
        lines.append("| %s | %d | %d | %d | %s | %s | %s | %s |" % (
            key[0], key[1], key[2], key[3], " | ".join(cell(by.get(i)) for i, _ in IMPLS),
            "%.3g" % grpc["requests_per_s"] if "requests_per_s" in grpc else "—",
            "%.3g" % inproc["rows_per_s"] if "rows_per_s" in inproc else "—", ratio))
    lines.append("")  # the notes below are a paragraph, not table rows
    checks = [r for r in recs if "max_abs_diff" in r]
    for r in checks:
        lines.append("check %s %s N=%d: max |diff| %.3g%s" % (
            r["impl"], r["what"], r["N"], r["max_abs_diff"],
            " (tol %.0e, %s)" % (r["tol"], "ok" if r["ok"] else "FAIL") if "tol" in r else ""))
    for r in recs:
        if "error" in r and r.get("what") not in ("forward", "forward_last", "tick"):
            lines.append("error %s: %s" % (r.get("impl"), r["error"]))
    for r in recs:
        if r.get("what") == "run":
            lines.append("run: %s, commit %s, %s CPUs, load average %s, threads %s" % (
                r["date"], r["commit"], r["host_cpus"],
                " ".join("%.1f" % v for v in r["load_average"]), r["threads"]))
    devices = sorted({"%s %s %s" % (r.get("impl"), r.get("device"), r.get("kernel_path", r.get("dtype", "")))
                      for r in recs if "device" in r})
    lines.append("devices: " + "; ".join(devices))
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(load(sys.argv[1:])))
