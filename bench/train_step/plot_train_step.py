#!/usr/bin/env python3
"""Tables and the loss-curve plot of the train_step benchmark from its JSON lines.

Usage: plot_train_step.py RESULTS.jsonl OUTDIR
Writes OUTDIR/train_step_ratios.txt: per optimizer and N, ours (flashtick_*) beside
PyTorch (torch_sdpa for AdamW, torch_math for Sophia-H): ms, tokens/s, peak GiB, and
the ratios speed = torch_ms / ours_ms and memory = torch_peak / ours_peak (OOM where a
side ran out of memory); Sophia-H's rows are amortised over the Hessian interval, and a
"sophia_refresh" row per N compares the refresh step alone (the exact HVP: ours through
backward-over-backward, PyTorch's through the math path), time and peak; and OUTDIR/train_step_loss_curves.png: ours and PyTorch's loss
per step for each optimizer on the same data from the same initial weights.
"""
import json
import sys
from collections import defaultdict


def main():
    path, out = sys.argv[1], sys.argv[2]
    rows = [json.loads(line) for line in open(path) if line.strip()]
    timing = defaultdict(dict)
    curves = defaultdict(list)
    for r in rows:
        if r.get("bench") != "train_step":
            continue
        side = "ours" if str(r.get("impl", "")).startswith("flashtick") else "torch"
        if r["op"] == "loss_curve":
            if "loss" in r:
                curves[(r["optimizer"], side)].append((r["step"], r["loss"]))
        else:
            timing[(r["op"], r["N"])][side] = r
            if r["op"] == "sophia_h" and r.get("ms_refresh"):
                timing[("sophia_refresh", r["N"])][side] = dict(
                    r, ms=r["ms_refresh"], tokens_per_s=r["N"] * r.get("B", 1) / (r["ms_refresh"] * 1e-3),
                    peak_bytes=r.get("peak_bytes_refresh") or r["peak_bytes"])
            elif r["op"] == "sophia_h" and r.get("oom"):
                timing[("sophia_refresh", r["N"])][side] = r
    gib = 1024.0 ** 3
    lines = [f"{'optimizer':14} {'N':>6} | {'ours ms':>9} {'tok/s':>9} {'GiB':>6} | {'torch ms':>9} "
             f"{'tok/s':>9} {'GiB':>6} | {'speed':>6} {'memory':>6}"]

    def cell(r):
        if r is None:
            return f"{'-':>9} {'-':>9} {'-':>6}"
        if r.get("oom"):
            return f"{'OOM':>9} {'':>9} {'':>6}"
        if "ms" not in r:
            return f"{'ERROR':>9} {'':>9} {'':>6}"
        return f"{r['ms']:9.1f} {r['tokens_per_s']:9.0f} {r['peak_bytes'] / gib:6.2f}"

    for (op, n) in sorted(timing):
        o, t = timing[(op, n)].get("ours"), timing[(op, n)].get("torch")
        speed = mem = "-"
        if o and t and "ms" in o and "ms" in t:
            speed, mem = f"{t['ms'] / o['ms']:6.2f}", f"{t['peak_bytes'] / o['peak_bytes']:6.2f}"
        elif o and "ms" in o and t and t.get("oom"):
            speed = mem = "  torch OOM"
        lines.append(f"{op:14} {n:6d} | {cell(o)} | {cell(t)} | {speed:>6} {mem:>6}")
    for r in rows:
        if r.get("error") and not r.get("oom"):
            lines.append(f"error: {r.get('impl')} {r.get('op')} N={r.get('N')}: {r['error']}")
    open(f"{out}/train_step_ratios.txt", "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    if curves:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        kinds = sorted({k for k, _ in curves})
        fig, axes = plt.subplots(1, len(kinds), figsize=(6 * len(kinds), 4), squeeze=False)
        for ax, kind in zip(axes[0], kinds):
            for side, style in (("ours", "-"), ("torch", "--")):
                pts = sorted(curves.get((kind, side), []))
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=f"{side}")
            ax.set_title(f"{kind}: training loss")
            ax.set_xlabel("step")
            ax.set_ylabel("mean cross-entropy")
            ax.legend()
        fig.tight_layout()
        fig.savefig(f"{out}/train_step_loss_curves.png", dpi=120)


if __name__ == "__main__":
    main()
