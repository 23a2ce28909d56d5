#!/usr/bin/env python3
"""Prometheus configuration tests: `promtool check config` on the compose scrape
config, `promtool check rules` on the alert rules, and `promtool test rules` on their
unit tests (deploy/prometheus/alerts_test.yml, where every alert has firing and
quiet cases). Also checks that each alert carries the labels and annotations the
runbook relies on. promtool comes from Debian's `prometheus` package (scripts/setup.sh).
"""
import shutil
import subprocess
import sys
import unittest

import yaml

from deploy_lib import ALERTS, ROOT

PROM = ROOT / "deploy" / "prometheus"
PROMTOOL = shutil.which("promtool")


def promtool(*args, cwd=PROM):
    r = subprocess.run([PROMTOOL, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


class PromtoolTest(unittest.TestCase):
    def setUp(self):
        # setup.sh installs it; a missing promtool is a broken setup, not a skip.
        self.assertIsNotNone(PROMTOOL, "promtool not found: run scripts/setup.sh "
                             "(Debian package prometheus)")

    def test_check_config(self):
        rc, out = promtool("check", "config", "prometheus.yml")
        self.assertEqual(rc, 0, out)
        self.assertIn("SUCCESS", out)

    def test_check_rules(self):
        rc, out = promtool("check", "rules", "alerts.yml")
        self.assertEqual(rc, 0, out)

    def test_rules_unit_tests(self):
        rc, out = promtool("test", "rules", "alerts_test.yml")
        self.assertEqual(rc, 0, out)
        self.assertIn("SUCCESS", out)

    def test_every_alert_has_a_unit_test(self):
        alerts = {r["alert"] for g in yaml.safe_load(ALERTS.read_text())["groups"]
                  for r in g["rules"] if "alert" in r}
        tests = yaml.safe_load((PROM / "alerts_test.yml").read_text())["tests"]
        firing = {t["alertname"] for case in tests for t in case.get("alert_rule_test", [])
                  if t.get("exp_alerts")}
        self.assertEqual(alerts - firing, set(), "alerts without a firing test case")
        self.assertGreaterEqual(len(alerts), 4)


class AlertShapeTest(unittest.TestCase):
    def test_labels_and_annotations(self):
        for g in yaml.safe_load(ALERTS.read_text())["groups"]:
            for r in g["rules"]:
                with self.subTest(alert=r.get("alert")):
                    self.assertIn(r["labels"]["severity"], {"page", "warn"})
                    self.assertTrue(r["annotations"]["summary"])
                    self.assertTrue(r["annotations"]["description"])
                    self.assertRegex(r.get("for", ""), r"^\d+[smh]$", "alerts need a for: duration")

    def test_required_alerts_exist(self):
        names = {r["alert"] for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]}
        for want in ("FlashtickHighErrorRate", "FlashtickInferP99OverBudget",
                     "FlashtickGpuMemoryNearLimit", "FlashtickExperimentStalled"):
            self.assertIn(want, names)


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False, verbosity=2).result.wasSuccessful() else 1)
