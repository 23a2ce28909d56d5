#!/usr/bin/env python3
"""Ratio table from bench_attention and torch_attention.py JSON lines.

Usage: merge_ratios.py ours.jsonl torch.jsonl
Prints, per (d, op, N): our ms and TFLOP/s, SDPA flash and cuDNN TFLOP/s, and the
ratios ours/sdpa_flash and ours/cudnn as throughput ratios (their ms / our ms; > 1
means we are faster), plus our peak extra memory over PyTorch's flash backend. Lines
that are not measurements (oom, error) show as '-'. The issue's first bar: both
ratios to SDPA flash >= 1.0 at every N >= 8192.
"""
import json
import sys


def load(path):
    rows = {}
    with open(path) as f:
        for raw in f:
            raw = raw.strip()
            if not raw.startswith("{"):
                continue
            r = json.loads(raw)
            if r.get("bench") != "attention":
                continue
            rows[(r["impl"], r["op"], r["d"], r["N"])] = r
    return rows


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = load(sys.argv[1])
    rows.update(load(sys.argv[2]))
    keys = sorted({(op, d, n) for (impl, op, d, n) in rows if impl == "flashtick_flash_cuda"},
                  key=lambda k: (k[1], k[0], k[2]))
    print(f"{'d':>4} {'op':>8} {'N':>7} {'ours ms':>9} {'TFLOP/s':>8} {'sdpa':>8} {'cudnn':>8}"
          f" {'/sdpa':>6} {'/cudnn':>6} {'mem/sdpa':>8}")
    worst = None
    for op, d, n in keys:
        ours = rows[("flashtick_flash_cuda", op, d, n)]
        sdpa = rows.get(("torch_sdpa_flash", op, d, n), {})
        cudnn = rows.get(("torch_cudnn", op, d, n), {})
        ms = ours.get("ms")
        r_sdpa = sdpa["ms"] / ms if ms and sdpa.get("ms") else None
        r_cudnn = cudnn["ms"] / ms if ms and cudnn.get("ms") else None
        mem = (ours["peak_extra_bytes"] / sdpa["peak_extra_bytes"]
               if ours.get("peak_extra_bytes") and sdpa.get("peak_extra_bytes") else None)
        if n >= 8192 and r_sdpa is not None:
            worst = r_sdpa if worst is None else min(worst, r_sdpa)
        print(f"{d:>4} {op:>8} {n:>7} {fmt(ms, '9.3f')} {fmt(ours.get('tflops'), '8.1f')}"
              f" {fmt(sdpa.get('tflops'), '8.1f')} {fmt(cudnn.get('tflops'), '8.1f')}"
              f" {fmt(r_sdpa, '6.2f')} {fmt(r_cudnn, '6.2f')} {fmt(mem, '8.2f')}")
    if worst is not None:
        verdict = "meets" if worst >= 1.0 else "misses"
        print(f"worst ours/sdpa_flash at N >= 8192: {worst:.2f} ({verdict} the 1.0 bar)")


if __name__ == "__main__":
    main()
