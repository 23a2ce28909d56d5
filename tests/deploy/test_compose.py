#!/usr/bin/env python3
"""Compose stack tests (deploy/compose): the files parse; flashtickd, Prometheus and
Grafana are wired to each other (the scrape target is the flashtickd service on
the port it serves metrics on, the Grafana data source is the Prometheus service,
the dashboard provider reads the directory the dashboard is mounted into, the rule
files Prometheus loads are mounted); every bind-mounted file exists; the GPU
override reserves an NVIDIA GPU. No Docker engine runs in CI, so `docker compose
config` cannot be the check; this is the structural equivalent.
"""
import sys
import unittest
from pathlib import PurePosixPath

import yaml

from deploy_lib import ROOT

COMPOSE = ROOT / "deploy" / "compose"


def load(name):
    return yaml.safe_load((COMPOSE / name).read_text())


def flag(args, name):
    for a in args:
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
    return None


def bind_mounts(service):
    """[(host path, container path)] of a service's bind mounts."""
    out = []
    for v in service.get("volumes", []):
        src, dst = v.split(":")[:2]
        if src.startswith((".", "/")):
            out.append(((COMPOSE / src).resolve(), dst))
    return out


class ComposeTest(unittest.TestCase):
    def setUp(self):
        self.c = load("compose.yaml")
        self.s = self.c["services"]

    def test_services(self):
        self.assertEqual(set(self.s), {"flashtickd", "prometheus", "grafana"})

    def test_flashtickd_build_and_ports(self):
        f = self.s["flashtickd"]
        ctx = (COMPOSE / f["build"]["context"]).resolve()
        self.assertEqual(ctx, ROOT)
        self.assertTrue((ctx / f["build"]["dockerfile"]).is_file())
        args = f["command"]
        grpc = flag(args, "listen").rsplit(":", 1)[1]
        metrics = flag(args, "metrics-port")
        self.assertIn(f"{grpc}:{grpc}", f["ports"])
        self.assertIn(f"{metrics}:{metrics}", f["ports"])
        self.assertEqual((grpc, metrics), ("8001", "8002"))

    def test_bind_mounts_exist(self):
        for name, svc in self.s.items():
            for src, _ in bind_mounts(svc):
                self.assertTrue(src.exists(), f"{name}: {src} does not exist")

    def test_named_volumes_declared(self):
        for name, svc in self.s.items():
            for v in svc.get("volumes", []):
                src = v.split(":")[0]
                if not src.startswith((".", "/")):
                    self.assertIn(src, self.c["volumes"], f"{name}: volume {src}")

    def test_prometheus_scrapes_flashtickd_and_loads_rules(self):
        mounts = dict((dst, src) for src, dst in bind_mounts(self.s["prometheus"]))
        cfg_path = "/etc/prometheus/prometheus.yml"
        self.assertIn(f"--config.file={cfg_path}", self.s["prometheus"]["command"])
        cfg = yaml.safe_load(mounts[cfg_path].read_text())
        targets = [t for j in cfg["scrape_configs"] if j["job_name"] == "flashtick"
                   for sc in j["static_configs"] for t in sc["targets"]]
        metrics = flag(self.s["flashtickd"]["command"], "metrics-port")
        self.assertEqual(targets, [f"flashtickd:{metrics}"])
        for rule in cfg["rule_files"]:
            path = str(PurePosixPath(cfg_path).parent / rule)
            self.assertIn(path, mounts, f"rule file {rule} is not mounted at {path}")

    def test_grafana_provisioning(self):
        mounts = dict((dst, src) for src, dst in bind_mounts(self.s["grafana"]))
        prov = mounts["/etc/grafana/provisioning"]
        ds = yaml.safe_load((prov / "datasources" / "prometheus.yaml").read_text())["datasources"]
        self.assertEqual([d["type"] for d in ds], ["prometheus"])
        self.assertEqual(ds[0]["url"], "http://prometheus:9090")
        self.assertIn("9090:9090", self.s["prometheus"]["ports"])
        providers = yaml.safe_load((prov / "dashboards" / "flashtick.yaml").read_text())["providers"]
        path = providers[0]["options"]["path"]
        dash = [dst for dst, src in mounts.items() if src == ROOT / "deploy/grafana/flashtick.json"]
        self.assertEqual(len(dash), 1, "the dashboard JSON is mounted once")
        self.assertEqual(str(PurePosixPath(dash[0]).parent), path)

    def test_gpu_override(self):
        gpu = load("compose.gpu.yaml")["services"]["flashtickd"]
        devices = gpu["deploy"]["resources"]["reservations"]["devices"]
        self.assertEqual(devices[0]["driver"], "nvidia")
        self.assertIn("gpu", devices[0]["capabilities"])
        self.assertEqual(flag(gpu["command"], "device"), "cuda")
        base = self.s["flashtickd"]["command"]
        # The override replaces the command: it must keep every other flag.
        self.assertEqual({a.split("=")[0] for a in gpu["command"]}, {a.split("=")[0] for a in base})


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False, verbosity=2).result.wasSuccessful() else 1)
