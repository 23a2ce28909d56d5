#!/usr/bin/env python3
"""Ours, cuDNN through flashtick, auto, and PyTorch side by side, from bench_attention
--impl flash,cudnn,auto and torch_attention.py JSON lines.

Usage: merge_cudnn.py ours.jsonl torch.jsonl
Per (d, op, N), milliseconds of: ours (flashtick_flash_cuda), cuDNN through flashtick
(flashtick_cudnn), auto (flashtick_auto), PyTorch SDPA flash and PyTorch cuDNN; then
  auto/best = min(ours, cudnn) ms / auto ms   (1.0: auto ran the faster one at full speed)
  ours/cudnn = cudnn ms / ours ms             (> 1: ours is faster)
and auto's kernel. The bar of docs/kernels/cudnn.md: auto/best >= 0.98 on every row.
With --impl flash_sm90a rows too (ours, the forward on the Hopper wgmma kernel), two more
columns: its ms and sm90a/cudnn = cudnn ms / sm90a ms (the bar of docs/kernels/hopper.md:
>= 1.1 for the forward and for forward+backward at N >= 8,192).
With bench_attention --rounds R, a shape has R rows per implementation (the order rotated
each round); its figure is their median.
"""
import json
import statistics
import sys


def load(path):
    rows = {}
    try:
        f = open(path)
    except OSError:
        return rows
    with f:
        for raw in f:
            raw = raw.strip()
            if not raw.startswith("{"):
                continue
            try:
                r = json.loads(raw)
            except ValueError:
                continue
            if r.get("bench") == "attention":
                rows.setdefault((r["impl"], r["op"], r["d"], r["N"]), []).append(r)
    return rows


def ms(rows, impl, op, d, n):
    """The median over rounds of one implementation's ms at a shape (None: not measured)."""
    times = [r["ms"] for r in rows.get((impl, op, d, n), []) if r.get("ms") is not None]
    return statistics.median(times) if times else None


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = load(sys.argv[1])
    rows.update(load(sys.argv[2]))
    keys = sorted({(op, d, n) for (impl, op, d, n) in rows if impl.startswith("flashtick_")},
                  key=lambda k: (k[1], k[0], k[2]))
    print(f"{'d':>4} {'op':>8} {'N':>7} {'ours':>9} {'cudnn':>9} {'auto':>9} {'sdpa':>9}"
          f" {'torchcud':>9} {'auto/best':>9} {'ours/cudnn':>10} {'sm90a':>9} {'sm90a/cud':>9}  auto kernel")
    worst = None
    for op, d, n in keys:
        o, c, a = (ms(rows, i, op, d, n) for i in ("flashtick_flash_cuda", "flashtick_cudnn", "flashtick_auto"))
        s, tc = ms(rows, "torch_sdpa_flash", op, d, n), ms(rows, "torch_cudnn", op, d, n)
        h = ms(rows, "flashtick_flash_sm90a", op, d, n)
        r_hc = c / h if h and c else None
        best = min(x for x in (o, c) if x) if (o or c) else None
        r_auto = best / a if best and a else None
        r_oc = c / o if o and c else None
        if r_auto is not None:
            worst = r_auto if worst is None else min(worst, r_auto)
        kernel = rows.get(("flashtick_auto", op, d, n), [{}])[-1].get("kernel", "-")
        print(f"{d:>4} {op:>8} {n:>7} {fmt(o, '9.3f')} {fmt(c, '9.3f')} {fmt(a, '9.3f')} {fmt(s, '9.3f')}"
              f" {fmt(tc, '9.3f')} {fmt(r_auto, '9.3f')} {fmt(r_oc, '10.2f')} {fmt(h, '9.3f')}"
              f" {fmt(r_hc, '9.2f')}  {kernel}")
    if worst is not None:
        verdict = "meets" if worst >= 0.98 else "misses"
        print(f"worst auto/best: {worst:.3f} ({verdict} the 0.98 bar)")


if __name__ == "__main__":
    main()
