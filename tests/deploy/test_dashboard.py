#!/usr/bin/env python3
"""Grafana dashboard tests (deploy/grafana/flashtick.json): the JSON parses and is
what make_dashboard.py writes; panels have unique ids, grid positions and targets;
every query is valid PromQL (promtool parses them as recording rules); the panels
the deployment promises exist (latency p50/p99 by method from _bucket rates,
request rate and errors, sequence lengths, active streams, GPU memory, loss and step
time per sweep arm, experiment states). Whether each named metric is really
exported is test_metrics_live.py's job (against a live flashtickd scrape).
"""
import json
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import yaml

import deploy_lib
from deploy_lib import DASHBOARD, ROOT

PROMTOOL = shutil.which("promtool")


def load():
    return json.loads(DASHBOARD.read_text())


def leaf_panels(d):
    out = []
    for p in d["panels"]:
        if p["type"] == "row":
            out.extend(p.get("panels", []))
        else:
            out.append(p)
    return out


OWN_PROCESS_METRICS = {"process_open_fds", "process_max_fds"}


class DashboardStructureTest(unittest.TestCase):
    def test_generated_file_is_current(self):
        r = subprocess.run([sys.executable, str(ROOT / "deploy/grafana/make_dashboard.py"), "--check"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_top_level(self):
        d = load()
        self.assertEqual(d["uid"], "flashtick-overview")
        self.assertIsInstance(d["schemaVersion"], int)
        names = [v["name"] for v in d["templating"]["list"]]
        self.assertIn("datasource", names)

    def test_panels(self):
        d = load()
        ids = [p["id"] for p in d["panels"]]
        self.assertEqual(len(ids), len(set(ids)), "duplicate panel ids")
        occupied = set()
        for p in leaf_panels(d):
            with self.subTest(panel=p["title"]):
                g = p["gridPos"]
                self.assertLessEqual(g["x"] + g["w"], 24)
                cells = {(x, y) for x in range(g["x"], g["x"] + g["w"])
                         for y in range(g["y"], g["y"] + g["h"])}
                self.assertFalse(cells & occupied, "panels overlap")
                occupied |= cells
                self.assertTrue(p["targets"], "panel without a query")
                self.assertEqual(p["datasource"]["uid"], "${datasource}")
                refs = [t["refId"] for t in p["targets"]]
                self.assertEqual(len(refs), len(set(refs)))
                self.assertTrue(p.get("description"))

    def test_promised_panels(self):
        exprs = [e for _, e in deploy_lib.dashboard_queries()]

        def has(pattern):
            return any(re.search(pattern, e) for e in exprs)

        bucket = r"flashtick_request_duration_seconds_bucket"
        for p in ("0.5", "0.99"):
            self.assertTrue(has(rf"histogram_quantile\({p}, sum by \(method, le\) \(rate\({bucket}"),
                            f"p{p} latency by method over summed _bucket rates")
        self.assertTrue(has(r"sum by \(method\) \(rate\(flashtick_requests_total"), "request rate")
        self.assertTrue(has(r'flashtick_requests_total\{[^}]*code!="OK"'), "errors")
        self.assertTrue(has(r"flashtick_request_sequence_length_bucket"), "sequence lengths")
        self.assertTrue(has(r"flashtick_active_streams"), "active streams")
        self.assertTrue(has(r"flashtick_gpu_memory_used_bytes"), "GPU memory")
        self.assertTrue(has(r"flashtick_train_loss"), "training loss per arm")
        self.assertTrue(has(r"sum by \(experiment, arm, le\) \(rate\(flashtick_train_step_seconds_bucket"),
                        "step time per arm")
        self.assertTrue(has(r"sum by \(state\) \(flashtick_experiments"), "experiment states")


class DashboardQueriesTest(unittest.TestCase):
    def test_queries_parse_with_promtool(self):
        self.assertIsNotNone(PROMTOOL, "promtool not found: run scripts/setup.sh")
        rules = [{"record": f"dashboard:query_{i}", "expr": deploy_lib.substitute_grafana(e)}
                 for i, (_, e) in enumerate(deploy_lib.dashboard_queries())]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "dashboard_queries.yml"
            path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
            r = subprocess.run([PROMTOOL, "check", "rules", str(path)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn(f"{len(rules)} rules found", r.stdout)

    def test_extractor_on_known_expressions(self):
        cases = {
            'sum by (a, b) (rate(foo_total{x="y",z=~"$m"}[5m])) / on (a) group_left (c) bar':
                {"foo_total", "bar"},
            "histogram_quantile(0.99, sum(rate(h_bucket[$__rate_interval])) by (le))": {"h_bucket"},
            '{__name__="weird"} offset 5m + count_values("x", m2) and topk(3, m3 @ 100)':
                {"weird", "m2", "m3"},
            "abs(x) == +Inf or y != NaN unless m:rec:1 > bool 1e3": {"x", "y", "m:rec:1"},
            "sum without (inst) (a) * ignoring (b) rate(c[1h30m])": {"a", "c"},
        }
        for expr, want in cases.items():
            self.assertEqual(deploy_lib.metric_names(expr), want, expr)

    def test_every_query_names_a_flashtick_metric(self):
        for where, expr in deploy_lib.all_queries():
            names = deploy_lib.metric_names(expr)
            with self.subTest(where=where):
                self.assertTrue(names, f"no metric in {expr!r}")
                for n in names:
                    # The standard process metrics flashtickd exports itself
                    # (server/metrics/process_collector.h) are its own too.
                    self.assertTrue(n.startswith("flashtick_") or n in OWN_PROCESS_METRICS,
                                    f"{n} in {expr!r}")

    def test_planned_list_is_used_and_printed(self):
        planned = deploy_lib.planned_metrics()
        used = deploy_lib.referenced_metrics()
        print(f"\nplanned (queried, not exported yet; {deploy_lib.PLANNED.name}): "
              f"{len(planned)} of {len(used)} metric names")
        for name, issue in sorted(planned.items()):
            print(f"  PLANNED {name:48s} {issue}")
        self.assertEqual(set(planned) - set(used), set(),
                         "planned_metrics.txt lists names no query uses: remove them")
        for name, issue in planned.items():
            self.assertTrue(issue, f"{name}: say which issue adds it")


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False, verbosity=2).result.wasSuccessful() else 1)
