#!/usr/bin/env python3
"""AdamW against Sophia-H: wall-clock to a target validation loss, from the arms'
state.json files that bench/scripts/gpu_optimizer_race.sh keeps (one folder per config,
<arm>.state.json inside, or the sweep's own folder with arms/<arm>/state.json).

Per arm the validation curve is (step, call-step validation loss) every
validate_every_steps; the time of a step is step x (training seconds / steps trained),
which is exact for AdamW (every step alike) and exact to within one Hessian refresh for
Sophia-H (a refresh every k steps, spread evenly). Training seconds are the arm's own
step times (validation and batch sampling excluded, the same for every optimizer).

Prints a markdown table (per config: seeds that reached the target, the median time and
step to reach it, the best loss within the budget, ms per step) and draws the curves
against seconds (median over seeds per config) when --plot is given.

Usage: race_table.py --target 0.45 [--plot out.png] DIR...
"""
import argparse
import glob
import json
import os
import statistics


def load_arm(path):
    a = json.load(open(path))
    trained = a["tokens"] / (a["batch"] * a["context"])  # steps actually taken
    sec_per_step = a["train_seconds"] / trained if trained else float("nan")
    curve = [(p[0] * sec_per_step, p[0], p[1]) for p in a["validation_curve"]]
    return {"seed": a["seed"], "context": a["context"], "trained": trained,
            "sec_per_step": sec_per_step, "curve": curve}


def first_at(curve, target):
    for t, step, loss in curve:
        if loss <= target:
            return t, step
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", type=float, required=True)
    ap.add_argument("--plot")
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    rows, curves = [], {}
    for d in args.dirs:
        paths = sorted(glob.glob(os.path.join(d, "*.state.json")) or  # the script's copies
                       glob.glob(os.path.join(d, "arms", "*", "state.json")))  # a sweep dir
        arms = [load_arm(p) for p in paths]
        if not arms:
            continue
        name = os.path.basename(os.path.normpath(d))
        cfg = json.load(open(os.path.join(d, "report.json")))["config"]["optimizer"]
        hits = [first_at(a["curve"], args.target) for a in arms]
        reached = [h for h in hits if h]
        best = [min(l for _, _, l in a["curve"]) for a in arms]
        rows.append({
            "config": name, "N": arms[0]["context"], "optimizer": cfg["name"],
            "lr": cfg["learning_rate"], "seeds": len(arms), "reached": len(reached),
            "median_s": statistics.median(t for t, _ in reached) if len(reached) * 2 > len(arms) else None,
            "median_step": statistics.median(s for _, s in reached) if len(reached) * 2 > len(arms) else None,
            "times": [round(h[0], 1) if h else None for h in hits],
            "best": statistics.median(best),
            "ms_per_step": 1e3 * statistics.median(a["sec_per_step"] for a in arms),
        })
        curves[name] = arms
    print("| N | optimizer | lr | seeds reaching %.2f | median seconds to it | median steps | each seed (s) | median best loss | ms / step |" % args.target)
    print("|---|---|---|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: (r["N"], r["optimizer"], r["lr"])):
        med = "%.1f" % r["median_s"] if r["median_s"] is not None else "— (not a majority)"
        stp = "%d" % r["median_step"] if r["median_step"] is not None else "—"
        each = ", ".join("%s" % t if t is not None else "never" for t in r["times"])
        print("| %d | %s | %g | %d of %d | %s | %s | %s | %.3f | %.1f |" % (
            r["N"], r["optimizer"], r["lr"], r["reached"], r["seeds"], med, stp, each,
            r["best"], r["ms_per_step"]))
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        ns = sorted({a[0]["context"] for a in curves.values()})
        fig, axes = plt.subplots(1, len(ns), figsize=(6 * len(ns), 4.2), squeeze=False)
        for ax, n in zip(axes[0], ns):
            for name, arms in sorted(curves.items()):
                if arms[0]["context"] != n:
                    continue
                opt = "Sophia-H" if "sophia" in name else "AdamW"
                lr = name.split("_lr")[-1]
                style = "-" if opt == "AdamW" else "--"
                for i, a in enumerate(arms):
                    ts = [t for t, _, _ in a["curve"]]
                    ls = [l for _, _, l in a["curve"]]
                    ax.plot(ts, ls, style, lw=1, alpha=0.8,
                            color={"AdamW": "C0", "Sophia-H": "C3"}[opt] if lr == "3e-3" else
                            {"AdamW": "C2", "Sophia-H": "C1"}[opt],
                            label="%s lr %s" % (opt, lr) if i == 0 else None)
            ax.axhline(args.target, color="k", lw=0.8, ls=":")
            ax.set_title("N = %d: call-step validation loss (3 seeds each)" % n)
            ax.set_xlabel("training seconds (H200, three arms sharing the GPU)")
            ax.set_ylabel("validation loss")
            ax.set_ylim(0, 1.0)
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)


if __name__ == "__main__":
    main()
