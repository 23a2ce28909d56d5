#!/usr/bin/env python3
"""Plots of a flashtick sweep report (research/report/sweep_report.h).

    plot_report.py REPORT_JSON OUT_DIR

Reads report.json and writes four PNGs into OUT_DIR, printing "wrote <name>" for
each: cost_vs_n.png (seconds per epoch, tokens per second and peak memory against
N), benefit_vs_n.png (accuracy, macro-F1 and daily Sharpe against N, with the
lag-family event accuracy on planted data), daily_returns.png (cumulative net
daily strategy return per arm over the test days) and loss_curves.png (training
loss per arm). Exit code 3 means matplotlib is missing (the server says so in the
report); anything else non-zero is a bug here.
"""
import json
import sys
from pathlib import Path

try:
    import matplotlib

    matplotlib.use("Agg")  # no display on a server
    import matplotlib.pyplot as plt
except ImportError as e:  # the server reports this in report.md
    print(f"matplotlib is not importable: {e}")
    sys.exit(3)


def by_context(arms):
    """Arms that finished, grouped by N (several seeds average)."""
    groups = {}
    for a in arms:
        if a.get("benefit"):
            groups.setdefault(a["context"], []).append(a)
    return sorted(groups.items())


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def save(fig, out_dir, name):
    fig.tight_layout()
    fig.savefig(Path(out_dir) / name, dpi=110)
    plt.close(fig)
    print(f"wrote {name}")


def cost_plot(report, out_dir):
    groups = by_context(report["arms"])
    if not groups:
        return
    ns = [n for n, _ in groups]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    series = [("seconds_per_epoch", "wall-clock per epoch (s)"),
              ("tokens_per_second", "training tokens per second"),
              ("peak_memory_bytes", "peak memory (MiB)")]
    for ax, (key, title) in zip(axes, series):
        ys = [mean(a["cost"][key] for a in arms) for _, arms in groups]
        if key == "peak_memory_bytes":
            ys = [y / 2**20 for y in ys]
        ax.plot(ns, ys, "o-")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("context N")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    fig.suptitle(f"{report['name']}: cost vs N ({report['backend']})")
    save(fig, out_dir, "cost_vs_n.png")


def benefit_plot(report, out_dir):
    groups = by_context(report["arms"])
    if not groups:
        return
    ns = [n for n, _ in groups]
    has_events = any(a["events"] for _, arms in groups for a in arms)
    fig, axes = plt.subplots(1, 3 if has_events else 2, figsize=(13 if has_events else 9, 3.8))
    ax = axes[0]
    for key in ("accuracy", "macro_f1"):
        ax.plot(ns, [mean(a["benefit"][key] for a in arms) for _, arms in groups], "o-", label=key)
    ax.set_title("out of sample, pooled test days")
    ax.legend()
    ax = axes[1]
    ax.plot(ns, [mean(a["benefit"]["sharpe"] for a in arms) for _, arms in groups], "o-")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_title(f"daily Sharpe, net of {report['config']['cost_bps']} bp/trade")
    if has_events:
        ax = axes[2]
        lags = [e["lag"] for e in groups[0][1][0]["events"]]
        for i, lag in enumerate(lags):
            ax.plot(ns, [mean(a["events"][i]["rate"] for a in arms) for _, arms in groups], "o-",
                    label=f"lag {lag}")
        ax.axhline(0.5, color="k", lw=0.8, ls=":")
        ax.set_ylim(0, 1.05)
        ax.set_title("accuracy at planted call steps")
        ax.legend()
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("context N")
        ax.grid(alpha=0.3)
    verdict = report.get("verdict")
    head = "no verdict" if not verdict else ("PASS" if verdict["passed"] else "FAIL")
    fig.suptitle(f"{report['name']}: benefit vs N (verdict: {head})")
    save(fig, out_dir, "benefit_vs_n.png")


def returns_plot(report, out_dir):
    arms = [a for a in report["arms"] if a["days"]]
    if not arms:
        return
    fig, ax = plt.subplots(figsize=(9, 4))
    for a in arms:
        total, ys = 0.0, []
        for d in a["days"]:
            total += d["daily_return"]
            ys.append(total)
        ax.plot(range(1, len(ys) + 1), ys, marker="." if len(ys) <= 60 else None,
                label=a["arm_id"])
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xlabel("test day")
    ax.set_ylabel("cumulative net daily return")
    ax.set_title(f"{report['name']}: per-day strategy returns (net of cost)")
    ax.legend()
    ax.grid(alpha=0.3)
    save(fig, out_dir, "daily_returns.png")


def loss_plot(report, out_dir):
    arms = [a for a in report["arms"] if a["loss_curve"]]
    if not arms:
        return
    # The validation checks get a panel of their own when there are any: with
    # validate_on "calls" a family being learned is a step down there, while the
    # training loss over every step barely moves (docs/sweeps/keyed.md).
    validated = [a for a in arms if a.get("validation_curve")]
    panels = 2 if validated else 1
    fig, axes = plt.subplots(1, panels, figsize=(9 * panels, 4), squeeze=False)
    ax = axes[0][0]
    for a in arms:
        pts = [(s, l) for s, l in a["loss_curve"] if l is not None]
        ax.plot([s for s, _ in pts], [l for _, l in pts], label=a["arm_id"])
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("training loss (cross-entropy)")
    ax.set_title(f"{report['name']}: loss curves")
    ax.legend()
    ax.grid(alpha=0.3)
    if validated:
        calls = report.get("config", {}).get("training", {}).get("validate_on") == "calls"
        ax = axes[0][1]
        for a in validated:
            pts = [(s, l) for s, l in a["validation_curve"] if l is not None]
            line = ax.plot([s for s, _ in pts], [l for _, l in pts], label=a["arm_id"])[0]
            # training.stall_restarts: the first fold's starts that were not kept, dotted
            # in the arm's colour (each from its own step 0; the solid line is the kept one).
            for st in a.get("stall_starts") or []:
                pts = [(s, l) for s, l in st["validation_curve"] if l is not None]
                ax.plot([s for s, _ in pts], [l for _, l in pts], linestyle=":",
                        color=line.get_color(), label=f"{a['arm_id']} start {st['start']} (dropped)")
        ax.set_xlabel("optimizer step")
        ax.set_ylabel(("call-step " if calls else "") + "validation loss")
        ax.set_title("validation checks (first fold)")
        ax.legend()
        ax.grid(alpha=0.3)
    save(fig, out_dir, "loss_curves.png")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    report = json.loads(Path(sys.argv[1]).read_text())
    out_dir = sys.argv[2]
    cost_plot(report, out_dir)
    benefit_plot(report, out_dir)
    returns_plot(report, out_dir)
    loss_plot(report, out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
