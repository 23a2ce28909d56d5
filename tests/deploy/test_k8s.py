#!/usr/bin/env python3
"""Kubernetes manifest tests (deploy/k8s): the kustomize base and the A100 overlay
render (with `kubectl kustomize` where installed, and always with kustomize_lite,
which must agree with it), every built-in object validates against the Kubernetes
OpenAPI schema (kubernetes-validate, strict: unknown fields fail) for the oldest
and newest versions we support, and a structural check ties the objects together:
selectors match pod labels, probes are gRPC probes on the gRPC port, GPU requests,
drain timing, ConfigMap keys used by args exist, the PodMonitor finds the metrics
ports, the PrometheusRule equals deploy/prometheus/alerts.yml, the overlay pins
A100 nodes by the nvidia.com/gpu.product label, and the experiments coordinator runs
sweep arms as Kubernetes Jobs with a service account whose Role allows only batch/jobs,
reading pods and the headless Services of multi-pod arms, in its namespace, with the
ReadWriteMany claim at the experiments root (docs/deploy.md, "Sweep arms as Kubernetes
Jobs" and "Multi-pod arms").
"""
import json
import re
import shutil
import subprocess
import sys
import unittest

import yaml

import kustomize_lite
from deploy_lib import ALERTS, ROOT

K8S = ROOT / "deploy" / "k8s"
BASE, A100 = K8S / "base", K8S / "overlays" / "a100"
KUBECTL = shutil.which("kubectl")
# Oldest: Indexed Jobs with backoffLimitPerIndex (1.29, the arm Jobs flashtickd
# creates); newest: what the package has.
K8S_VERSIONS = ("1.29.0", "1.33.0")
NAMESPACE = "flashtick"


def render(directory):
    return kustomize_lite.build(directory)


def by_kind(objects):
    out = {}
    for o in objects:
        out.setdefault(o["kind"], {})[o["metadata"]["name"]] = o
    return out


def pod_spec(o):
    return o["spec"]["template"]["spec"]


def container_ports(o):
    return {p["name"]: p["containerPort"] for c in pod_spec(o)["containers"] for p in c.get("ports", [])}


def dockerfile_user():
    m = re.search(r"^USER\s+(\d+)(?::(\d+))?\s*$", (ROOT / "Dockerfile").read_text(), re.M)
    return (int(m.group(1)), int(m.group(2) or m.group(1))) if m else None


class RenderTest(unittest.TestCase):
    def test_lite_resolver_matches_kubectl(self):
        if KUBECTL is None:
            self.skipTest("kubectl not installed: kustomize_lite alone renders the manifests")
        for d in (BASE, A100):
            r = subprocess.run([KUBECTL, "kustomize", str(d)], capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            theirs = {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load_all(r.stdout) if o}
            mine = {(o["kind"], o["metadata"]["name"]): o for o in render(d)}
            self.assertEqual(sorted(mine), sorted(theirs), d)
            for key in mine:
                self.assertEqual(mine[key], theirs[key], f"{d}: {key} differs from kubectl kustomize")

    def test_kinds(self):
        for d in (BASE, A100):
            kinds = by_kind(render(d))
            for kind, names in {"Namespace": [NAMESPACE],
                                "Deployment": ["flashtickd", "flashtickd-experiments"],
                                "Service": ["flashtickd", "flashtickd-experiments"],
                                "ConfigMap": ["flashtickd-flags"],
                                "PersistentVolumeClaim": ["flashtick-store"],
                                "ServiceAccount": ["flashtick-experiments"],
                                "Role": ["flashtick-sweep-arms"], "RoleBinding": ["flashtick-sweep-arms"],
                                "PodMonitor": ["flashtick"], "PrometheusRule": ["flashtick-alerts"]}.items():
                for n in names:
                    self.assertIn(n, kinds.get(kind, {}), f"{d}: missing {kind}/{n}")

    def test_namespace_and_labels(self):
        for o in render(A100):
            with self.subTest(obj=(o["kind"], o["metadata"]["name"])):
                if o["kind"] != "Namespace":
                    self.assertEqual(o["metadata"].get("namespace"), NAMESPACE)
                self.assertEqual(o["metadata"]["labels"]["app.kubernetes.io/part-of"], "flashtick")


class SchemaTest(unittest.TestCase):
    def test_builtin_objects_validate_strictly(self):
        import kubernetes_validate
        for d in (BASE, A100):
            for o in render(d):
                if o["apiVersion"].startswith("monitoring.coreos.com/"):
                    continue  # CRDs: checked structurally in MonitoringTest
                for v in K8S_VERSIONS:
                    with self.subTest(dir=d.name, obj=(o["kind"], o["metadata"]["name"]), k8s=v):
                        try:
                            kubernetes_validate.validate(o, v, strict=True)
                        except kubernetes_validate.ValidationError as e:
                            self.fail(f"{e.path}: {e.message}")


class WorkloadTest(unittest.TestCase):
    def setUp(self):
        self.kinds = by_kind(render(A100))
        self.deploy = self.kinds["Deployment"]["flashtickd"]
        self.experiments = self.kinds["Deployment"]["flashtickd-experiments"]

    def test_selector_matches_pod_labels(self):
        sel = self.deploy["spec"]["selector"]["matchLabels"]
        labels = self.deploy["spec"]["template"]["metadata"]["labels"]
        self.assertLessEqual(sel.items(), labels.items())

    def test_gpu_requests(self):
        for o in (self.deploy,):
            c = pod_spec(o)["containers"][0]
            self.assertEqual(int(c["resources"]["limits"]["nvidia.com/gpu"]), 1, o["kind"])
            self.assertEqual(int(c["resources"]["requests"]["nvidia.com/gpu"]), 1, o["kind"])
            self.assertIn("memory", c["resources"]["limits"])
            self.assertIn("cpu", c["resources"]["requests"])

    def test_grpc_probes_on_grpc_port(self):
        c = pod_spec(self.deploy)["containers"][0]
        grpc_port = container_ports(self.deploy)["grpc"]
        self.assertEqual(grpc_port, 8001)
        self.assertEqual(container_ports(self.deploy)["metrics"], 8002)
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            self.assertEqual(c[probe]["grpc"]["port"], grpc_port, probe)
        self.assertIn(f"--listen=0.0.0.0:{grpc_port}", c["args"])
        self.assertIn(f"--metrics-port={container_ports(self.deploy)['metrics']}", c["args"])

    def test_drain_fits_in_grace_period(self):
        spec = pod_spec(self.deploy)
        c = spec["containers"][0]
        cmd = c["lifecycle"]["preStop"]["exec"]["command"]
        self.assertEqual(cmd[0], "sleep")
        pre_stop = int(cmd[1])
        flags = self.kinds["ConfigMap"]["flashtickd-flags"]["data"]
        grace = float(flags["FLASHTICK_SHUTDOWN_GRACE_SECONDS"])
        self.assertIn("--shutdown-grace-seconds=$(FLASHTICK_SHUTDOWN_GRACE_SECONDS)", c["args"])
        self.assertGreater(spec["terminationGracePeriodSeconds"], pre_stop + grace,
                           "the kubelet would kill flashtickd before its drain deadline")
        strategy = self.deploy["spec"]["strategy"]["rollingUpdate"]
        self.assertEqual(strategy["maxUnavailable"], 0)

    def test_args_use_only_configmap_keys(self):
        c = pod_spec(self.deploy)["containers"][0]
        cm_name = c["envFrom"][0]["configMapRef"]["name"]
        data = self.kinds["ConfigMap"][cm_name]["data"]
        used = set()
        for a in c["args"]:
            used |= set(re.findall(r"\$\((\w+)\)", a))
        self.assertEqual(used - set(data), set(), "args reference keys the ConfigMap lacks")
        self.assertEqual(set(data) - used, set(), "ConfigMap keys no arg uses")

    def test_non_root_matches_image(self):
        user = dockerfile_user()
        self.assertIsNotNone(user, "Dockerfile has no numeric USER")
        for o in (self.deploy, self.experiments):
            sc = pod_spec(o)["securityContext"]
            self.assertTrue(sc["runAsNonRoot"])
            self.assertEqual((sc["runAsUser"], sc["runAsGroup"]), user, o["kind"])
            csc = pod_spec(o)["containers"][0]["securityContext"]
            self.assertFalse(csc["allowPrivilegeEscalation"])
            self.assertTrue(csc["readOnlyRootFilesystem"])

    def test_volumes_reference_existing_objects(self):
        for o in (self.deploy, self.experiments):
            spec = pod_spec(o)
            names = {v["name"] for v in spec["volumes"]}
            for c in spec["containers"]:
                for m in c.get("volumeMounts", []):
                    self.assertIn(m["name"], names)
            for v in spec["volumes"]:
                if "persistentVolumeClaim" in v:
                    self.assertIn(v["persistentVolumeClaim"]["claimName"], self.kinds["PersistentVolumeClaim"])
                if "configMap" in v:
                    self.assertIn(v["configMap"]["name"], self.kinds["ConfigMap"])

    @staticmethod
    def flags(o):
        return dict(a.split("=", 1) for a in pod_spec(o)["containers"][0]["args"] if "=" in a)

    def test_experiments_coordinator_runs_arms_as_jobs(self):
        flags = self.flags(self.experiments)
        self.assertEqual(flags["--sweep-arm-runner"], "kubernetes")
        self.assertEqual(self.experiments["spec"]["replicas"], 1, "one writer of the SQLite store")
        self.assertEqual(self.experiments["spec"]["strategy"]["type"], "Recreate")
        # The arm pods mount the claim where the coordinator does, holding --experiment-dir.
        claim = flags["--k8s-pvc"]
        pvc = self.kinds["PersistentVolumeClaim"][claim]
        self.assertEqual(pvc["spec"]["accessModes"], ["ReadWriteMany"])
        spec = pod_spec(self.experiments)
        vol = next(v["name"] for v in spec["volumes"]
                   if v.get("persistentVolumeClaim", {}).get("claimName") == claim)
        mount = next(m["mountPath"] for m in spec["containers"][0]["volumeMounts"] if m["name"] == vol)
        self.assertEqual(flags["--k8s-pvc-mount-path"], mount)
        self.assertTrue(flags["--experiment-dir"].startswith(mount + "/"))
        self.assertEqual(flags["--k8s-image"], spec["containers"][0]["image"])
        self.assertNotIn("nvidia.com/gpu", json.dumps(spec["containers"][0]["resources"]),
                         "the coordinator trains nothing itself")
        self.assertEqual(flags["--device"], "cpu", "a GPU-less pod cannot start with --device=cuda")
        self.assertEqual(flags["--k8s-arm-device"], "cuda", "arm pods of 'auto' sweeps ask a GPU")
        port = int(flags["--k8s-rendezvous-port"])  # a multi-pod arm's MASTER_PORT
        self.assertTrue(1024 <= port < 65536, "an unprivileged port: the pods run as non-root")

    def test_experiments_service_account_may_only_run_jobs(self):
        sa = pod_spec(self.experiments)["serviceAccountName"]
        self.assertIn(sa, self.kinds["ServiceAccount"])
        self.assertNotIn("ClusterRole", self.kinds)
        self.assertNotIn("ClusterRoleBinding", self.kinds)
        binding = self.kinds["RoleBinding"]["flashtick-sweep-arms"]
        self.assertEqual(binding["roleRef"]["kind"], "Role")
        self.assertEqual(binding["subjects"], [{"kind": "ServiceAccount", "name": sa, "namespace": NAMESPACE}])
        role = self.kinds["Role"][binding["roleRef"]["name"]]
        rules = {(g, r): sorted(rule["verbs"]) for rule in role["rules"]
                 for g in rule["apiGroups"] for r in rule["resources"]}
        self.assertEqual(rules, {("batch", "jobs"): sorted(["create", "get", "list", "watch", "delete"]),
                                 ("", "pods"): ["get", "list"],
                                 # a multi-pod arm's headless Service: made, read, removed
                                 ("", "services"): sorted(["create", "get", "delete"])})
        self.assertFalse(pod_spec(self.deploy).get("serviceAccountName"),
                         "inference pods need no API access")


class ServiceTest(unittest.TestCase):
    def test_headless_service_selects_inference_pods(self):
        kinds = by_kind(render(A100))
        svc, deploy = kinds["Service"]["flashtickd"], kinds["Deployment"]["flashtickd"]
        self.assertEqual(svc["spec"]["clusterIP"], "None", "headless, for client-side gRPC balancing")
        labels = deploy["spec"]["template"]["metadata"]["labels"]
        self.assertLessEqual(svc["spec"]["selector"].items(), labels.items())
        ports = container_ports(deploy)
        for p in svc["spec"]["ports"]:
            self.assertIn(p["targetPort"], ports)
            self.assertEqual(p["port"], ports[p["targetPort"]])
        self.assertIn("grpc", [p.get("appProtocol") for p in svc["spec"]["ports"]])


class MonitoringTest(unittest.TestCase):
    def test_podmonitor_scrapes_inference_and_experiments_pods(self):
        kinds = by_kind(render(A100))
        pm = kinds["PodMonitor"]["flashtick"]
        self.assertEqual(pm["apiVersion"], "monitoring.coreos.com/v1")
        sel = pm["spec"]["selector"]["matchLabels"]
        ports = {e["port"] for e in pm["spec"]["podMetricsEndpoints"]}
        for o in (kinds["Deployment"]["flashtickd"], kinds["Deployment"]["flashtickd-experiments"]):
            labels = o["spec"]["template"]["metadata"]["labels"]
            self.assertLessEqual(sel.items(), labels.items(), o["kind"])
            self.assertTrue(ports & set(container_ports(o)), f"{o['kind']} exposes no scraped port")
        for e in pm["spec"]["podMetricsEndpoints"]:
            self.assertRegex(e["interval"], r"^\d+s$")

    def test_prometheusrule_is_the_alerts_file(self):
        r = subprocess.run([sys.executable, str(ROOT / "deploy/prometheus/render_prometheusrule.py"), "--check"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        rule = by_kind(render(BASE))["PrometheusRule"]["flashtick-alerts"]
        self.assertEqual(rule["apiVersion"], "monitoring.coreos.com/v1")
        self.assertEqual(rule["spec"]["groups"], yaml.safe_load(ALERTS.read_text())["groups"])


class A100OverlayTest(unittest.TestCase):
    @staticmethod
    def gpu_products(o):
        aff = pod_spec(o).get("affinity", {}).get("nodeAffinity", {})
        terms = aff.get("requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms", [])
        values = []
        for t in terms:
            for e in t.get("matchExpressions", []):
                if e["key"] == "nvidia.com/gpu.product":
                    assert e["operator"] == "In", e
                    values += e["values"]
        return values

    def test_overlay_pins_a100(self):
        kinds = by_kind(render(A100))
        for o in (kinds["Deployment"]["flashtickd"],):
            values = self.gpu_products(o)
            self.assertTrue(values, f"{o['kind']}: no nvidia.com/gpu.product affinity")
            for v in values:
                self.assertRegex(v, r"^NVIDIA-A100-", v)

    @staticmethod
    def arm_node_selector(o):
        env = {e["name"]: e.get("value") for c in pod_spec(o)["containers"] for e in c.get("env", [])}
        args = [a for c in pod_spec(o)["containers"] for a in c.get("args", [])]
        assert "--k8s-node-selector=$(FLASHTICK_ARM_NODE_SELECTOR)" in args, args
        return env["FLASHTICK_ARM_NODE_SELECTOR"]

    def test_overlay_pins_arm_pods_to_a100(self):
        coordinator = by_kind(render(A100))["Deployment"]["flashtickd-experiments"]
        self.assertRegex(self.arm_node_selector(coordinator),
                         r"^nvidia\.com/gpu\.product=NVIDIA-A100-")

    def test_base_is_gpu_model_neutral(self):
        kinds = by_kind(render(BASE))
        for o in (kinds["Deployment"]["flashtickd"],):
            self.assertEqual(self.gpu_products(o), [])
            self.assertIn("nvidia.com/gpu", [t["key"] for t in pod_spec(o)["tolerations"]])
        self.assertEqual(self.arm_node_selector(kinds["Deployment"]["flashtickd-experiments"]), "")


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False, verbosity=2).result.wasSuccessful() else 1)
