#!/usr/bin/env python3
"""Writes deploy/grafana/flashtick.json, the flashtick Grafana dashboard.

The dashboard is generated so that every panel follows one layout rule and every
query is in one readable list; tests/deploy/test_dashboard.py checks that the
committed JSON equals this script's output, that each query parses (promtool) and
that each metric it names is exported by flashtickd (or listed as planned in
tests/deploy/planned_metrics.txt). Usage: make_dashboard.py [--check] [OUT].
Latency quantiles use histogram_quantile over summed _bucket rates, so they
aggregate correctly across replicas (summaries would not).
"""
import json
import sys
from pathlib import Path

UID = "flashtick-overview"
RATE = "$__rate_interval"
MODEL = 'model=~"$model"'
EXP = 'experiment=~"$experiment"'


def q(expr, legend):
    return {"expr": expr, "legendFormat": legend}


def quantiles(metric, by, matcher, legend_prefix):
    """p50 and p99 of a histogram, aggregated over replicas, grouped by `by`."""
    group = ", ".join(by + ["le"])
    return [
        q(f"histogram_quantile({p}, sum by ({group}) "
          f"(rate({metric}_bucket{{{matcher}}}[{RATE}])))",
          f"{legend_prefix} p{int(p * 100)}")
        for p in (0.5, 0.99)
    ]


# (row title, [(panel title, unit, kind, [queries], description)])
ROWS = [
    ("Serving", [
        ("Request rate by method", "reqps", "timeseries",
         [q(f"sum by (method) (rate(flashtick_requests_total{{{MODEL}}}[{RATE}]))", "{{method}}")],
         "Requests per second, all status codes, summed over replicas."),
        ("Errors by method and code", "reqps", "timeseries",
         [q(f'sum by (method, code) (rate(flashtick_requests_total{{{MODEL},code!="OK"}}[{RATE}]))',
            "{{method}} {{code}}")],
         "Failed requests per second by gRPC status code."),
        ("Error ratio", "percentunit", "stat",
         [q(f'sum(rate(flashtick_requests_total{{{MODEL},code!="OK"}}[{RATE}])) / '
            f"sum(rate(flashtick_requests_total{{{MODEL}}}[{RATE}]))", "errors")],
         "Share of requests that returned a non-OK status (alert: 5% for 5 minutes)."),
        ("Latency p50 / p99 by method", "s", "timeseries",
         quantiles("flashtick_request_duration_seconds", ["method"], MODEL, "{{method}}"),
         "End-to-end server latency (queue + compute) by RPC method."),
        ("Queue and compute time p99", "s", "timeseries",
         [quantiles("flashtick_queue_duration_seconds", ["method"], MODEL, "queue {{method}}")[1],
          quantiles("flashtick_compute_duration_seconds", ["method"], MODEL, "compute {{method}}")[1]],
         "Where the time goes: waiting for a batch slot versus running the model."),
        ("Sequence length p50 / p99 (ticks)", "none", "timeseries",
         quantiles("flashtick_request_sequence_length", ["model"], MODEL, "{{model}}"),
         "Steps N per row of each inference request."),
        ("Ticks per second", "none", "timeseries",
         [q(f"sum by (model) (rate(flashtick_ticks_total{{{MODEL}}}[{RATE}]))", "{{model}}")],
         "Ticks processed per second, full-day requests and streams together."),
        ("Active streams", "none", "timeseries",
         [q(f"sum by (model) (flashtick_active_streams{{{MODEL}}})", "{{model}}")],
         "Open tick streams holding incremental state."),
        ("Per-tick stream latency p50 / p99", "s", "timeseries",
         quantiles("flashtick_stream_tick_duration_seconds", ["model"], MODEL, "{{model}}"),
         "Latency of one tick on a stream (alert: p99 over 1 ms)."),
        ("Batch size p50 / p99", "none", "timeseries",
         quantiles("flashtick_batch_size", ["model"], MODEL, "{{model}}"),
         "Requests merged into one forward pass."),
        ("Inference queue length", "none", "timeseries",
         [q("sum by (instance) (flashtick_inference_queue_length)", "{{instance}}")],
         "Inference requests queued for or running on a worker, per replica."),
        ("Loaded models and kernel path", "none", "table",
         [q(f"max by (instance, model, version, kernel_path, device) (flashtick_model_info{{{MODEL}}})",
            "{{instance}} {{model}}/{{version}} {{kernel_path}} {{device}}")],
         "Every loaded model version per replica, with the kernel path it runs "
         "(flash_cuda, cpu_reference, ...) and its device."),
    ]),
    ("GPU", [
        ("GPU memory used / total", "bytes", "timeseries",
         [q("sum by (instance, device) (flashtick_gpu_memory_used_bytes)", "used {{instance}} gpu{{device}}"),
          q("sum by (instance, device) (flashtick_gpu_memory_total_bytes)", "total {{instance}} gpu{{device}}")],
         "Device memory in use against the device total (alert: above 90%)."),
        ("Peak GPU memory per request p50 / p99", "bytes", "timeseries",
         quantiles("flashtick_request_gpu_peak_bytes", ["method"], MODEL, "{{method}}"),
         "Peak extra device memory of one request."),
    ]),
    ("Training and experiments", [
        ("Training loss per sweep arm", "none", "timeseries",
         [q(f"flashtick_train_loss{{{EXP}}}", "{{experiment}} {{arm}}")],
         "Latest training loss of every arm."),
        ("Step time p50 per sweep arm", "s", "timeseries",
         [q(f"histogram_quantile(0.5, sum by (experiment, arm, le) "
            f"(rate(flashtick_train_step_seconds_bucket{{{EXP}}}[{RATE}])))", "{{experiment}} {{arm}}")],
         "Median wall-clock time of one optimizer step."),
        ("Steps per second per arm", "none", "timeseries",
         [q(f"sum by (experiment, arm) (rate(flashtick_train_steps_total{{{EXP}}}[{RATE}]))",
            "{{experiment}} {{arm}}")],
         "Optimizer steps per second (alert: a running arm at 0 for 15 minutes)."),
        ("Peak GPU memory per training step", "bytes", "timeseries",
         [q(f"flashtick_train_gpu_peak_bytes{{{EXP}}}", "{{experiment}} {{arm}}")],
         "Peak device memory of one training step of each arm."),
        ("Experiments by state", "none", "bargauge",
         [q("sum by (state) (flashtick_experiments)", "{{state}}")],
         "Experiments queued, running, succeeded, failed, cancelled."),
        ("Running arms", "none", "table",
         [q(f"flashtick_train_arm_running{{{EXP}}} == 1", "{{experiment}} {{arm}}")],
         "Arms training now."),
    ]),
]


def panel(pid, title, unit, kind, queries, description, x, y):
    targets = [dict(t, refId=chr(ord("A") + i),
                    datasource={"type": "prometheus", "uid": "${datasource}"})
               for i, t in enumerate(queries)]
    return {
        "id": pid, "type": kind, "title": title, "description": description,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "gridPos": {"h": 8, "w": 8, "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {}, "targets": targets,
    }


def variable(name, label, query):
    return {
        "name": name, "label": label, "type": "query",
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "query": {"query": query, "refId": f"{name}-var"},
        "definition": query, "refresh": 2, "includeAll": True, "multi": True,
        "allValue": ".*", "current": {"selected": True, "text": "All", "value": "$__all"},
        "sort": 1,
    }


def dashboard():
    panels, pid, y = [], 1, 0
    for title, row in ROWS:
        panels.append({"id": pid, "type": "row", "title": title, "collapsed": False,
                       "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})
        pid, y = pid + 1, y + 1
        for i, spec in enumerate(row):
            panels.append(panel(pid, *spec, x=(i % 3) * 8, y=y + (i // 3) * 8))
            pid += 1
        y += ((len(row) + 2) // 3) * 8
    return {
        "uid": UID, "title": "flashtick", "tags": ["flashtick"],
        "timezone": "utc", "schemaVersion": 39, "version": 1, "editable": True,
        "refresh": "10s", "time": {"from": "now-1h", "to": "now"},
        "templating": {"list": [
            {"name": "datasource", "label": "Data source", "type": "datasource",
             "query": "prometheus", "current": {}, "hide": 0},
            variable("model", "Model", "label_values(flashtick_requests_total, model)"),
            variable("experiment", "Experiment", "label_values(flashtick_train_loss, experiment)"),
        ]},
        "annotations": {"list": []},
        "panels": panels,
    }


def render():
    return json.dumps(dashboard(), indent=2, sort_keys=False) + "\n"


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    out = Path(args[0]) if args else Path(__file__).with_name("flashtick.json")
    text = render()
    if check:
        if out.read_text() != text:
            print(f"{out} differs from make_dashboard.py; run deploy/grafana/make_dashboard.py")
            return 1
        return 0
    out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
