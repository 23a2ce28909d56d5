#!/usr/bin/env python3
"""Where a request's server time goes, from two scrapes of flashtickd's /metrics.

Usage: metrics_split.py BEFORE.txt AFTER.txt [--method ModelInfer]

Between the scrapes, per (method, model): requests, and the mean of
flashtick_request_duration_seconds (arrival to Finish), of
flashtick_queue_duration_seconds (waiting for a worker), of
flashtick_compute_duration_seconds (the forward or decode step) and what is left of
the request after queue and compute (validation, copies, serialising the answer).
A client's latency minus the request's is gRPC transport and the client itself
(docs/serving.md, "Where a request's bytes go"). Stdlib only: it runs on the GPU
machine's Python as it is.
"""
import argparse
import re
import sys

FAMILIES = ("request", "queue", "compute")
SAMPLE = re.compile(r'^flashtick_(request|queue|compute)_duration_seconds_(sum|count)\{([^}]*)\}\s+(\S+)')


def read(path):
    """{(family, kind, method, model): value} of one scrape."""
    out = {}
    with open(path) as f:
        for line in f:
            m = SAMPLE.match(line)
            if not m:
                continue
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(3)))
            key = (m.group(1), m.group(2), labels.get("method", ""), labels.get("model", ""))
            out[key] = float(m.group(4))
    return out


def split(before, after, method=None):
    """Rows (method, model, requests, request_ms, queue_ms, compute_ms, other_ms)."""
    pairs = sorted({(k[2], k[3]) for k in after if k[0] == "request"})
    rows = []
    for meth, model in pairs:
        if method and meth != method:
            continue
        delta = {}
        for fam in FAMILIES:
            for kind in ("sum", "count"):
                key = (fam, kind, meth, model)
                delta[fam, kind] = after.get(key, 0.0) - before.get(key, 0.0)
        n = delta["request", "count"]
        if n <= 0:
            continue
        mean = {}
        for fam in FAMILIES:
            c = delta[fam, "count"]
            mean[fam] = 1e3 * delta[fam, "sum"] / c if c > 0 else 0.0
        other = mean["request"] - mean["queue"] - mean["compute"]
        rows.append((meth, model, int(n), mean["request"], mean["queue"], mean["compute"], other))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--method", help="only this method (e.g. ModelInfer)")
    args = ap.parse_args()
    rows = split(read(args.before), read(args.after), args.method)
    if not rows:
        print("metrics split: no requests between the scrapes")
        return 0
    print("| method | model | requests | request ms (mean) | queue ms | compute ms | rest ms |")
    print("|---|---|---|---|---|---|---|")
    for meth, model, n, req, queue, compute, other in rows:
        print(f"| {meth} | {model} | {n} | {req:.3f} | {queue:.3f} | {compute:.3f} | {other:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
