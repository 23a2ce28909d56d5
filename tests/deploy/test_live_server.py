#!/usr/bin/env python3
"""Live checks of the deployment against a real flashtickd (ctest: deploy_live_server).

1. Stages the runtime image's files with deploy/docker/stage-runtime.sh (the script
   the Dockerfile runs): binaries, libraries and the default model from
   flashtick_make_model.
2. Every flashtickd flag the Dockerfile, compose files and both Deployments (inference
   and the experiments coordinator with its --sweep-arm-runner=kubernetes and --k8s-*
   flags) pass is accepted by `flashtickd --help`, or listed in planned_flags.txt.
3. Starts the staged flashtickd with the Deployment's own arguments (ConfigMap
   values substituted; loopback ports, CPU device and the staged model swapped in),
   waits with the Dockerfile's HEALTHCHECK command, asks grpc.health.v1 for the
   service each Kubernetes probe names, sends ModelInfer (good and bad)
   through tritonclient, scrapes /metrics, and requires every metric the Grafana
   dashboard and the alert rules query to be exported, or listed in
   planned_metrics.txt (printed every run; entries now exported fail).
4. SIGTERM: flashtickd exits cleanly within its drain deadline, and the HEALTHCHECK
   command then fails.
Exits 77 (ctest SKIP, with the reason) when the binaries are not built yet.
"""
import argparse
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

import deploy_lib
import kustomize_lite
from deploy_lib import ROOT

SKIP = 77
PLANNED_FLAGS = ROOT / "tests" / "deploy" / "planned_flags.txt"
BINARIES = ("flashtickd", "flashtick", "flashtick_make_model", "flashtick_sweep")
failures = []


def fail(msg):
    failures.append(msg)
    print(f"FAIL {msg}")


def find_binary(build, name):
    for p in sorted(Path(build).rglob(name)):
        if p.is_file() and os.access(p, os.X_OK) and "CMakeFiles" not in p.parts:
            return p
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_planned_flags():
    out = {}
    for line in PLANNED_FLAGS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            flag, _, issue = line.partition(" ")
            out[flag] = issue.strip()
    return out


def deployment_objects():
    objs = kustomize_lite.build(ROOT / "deploy/k8s/base")
    get = lambda kind, name: next(o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name)
    return (get("Deployment", "flashtickd"), get("Deployment", "flashtickd-experiments"),
            get("ConfigMap", "flashtickd-flags"))


def deployment_flag_uses():
    """{source: [args]} for every place the deployment starts flashtickd."""
    deploy, experiments, _ = deployment_objects()
    dockerfile = (ROOT / "Dockerfile").read_text()
    cmd = json.loads(re.search(r"^CMD (\[.*\])$", dockerfile, re.M).group(1))
    compose = yaml.safe_load((ROOT / "deploy/compose/compose.yaml").read_text())
    gpu = yaml.safe_load((ROOT / "deploy/compose/compose.gpu.yaml").read_text())
    return {
        "Dockerfile CMD": cmd,
        "compose.yaml": compose["services"]["flashtickd"]["command"],
        "compose.gpu.yaml": gpu["services"]["flashtickd"]["command"],
        "k8s Deployment": deploy["spec"]["template"]["spec"]["containers"][0]["args"],
        "k8s experiments Deployment": experiments["spec"]["template"]["spec"]["containers"][0]["args"],
    }


def check_flags(flashtickd):
    help_text = subprocess.run([str(flashtickd), "--help"], capture_output=True, text=True,
                               timeout=60).stdout
    accepted = set(re.findall(r"(--[a-z][a-z0-9-]*)", help_text))
    if "--listen" not in accepted:
        fail(f"`flashtickd --help` lists no --listen flag; output was:\n{help_text}")
        return
    planned = read_planned_flags()
    used = {}
    for where, args in deployment_flag_uses().items():
        for a in args:
            used.setdefault(a.split("=", 1)[0], []).append(where)
    print(f"flags: {len(used)} used by the deployment, {len(planned)} planned ({PLANNED_FLAGS.name}):")
    for flag, issue in sorted(planned.items()):
        print(f"  PLANNED {flag:20s} {issue}")
    for flag, where in sorted(used.items()):
        if flag not in accepted and flag not in planned:
            fail(f"{flag} (used in {', '.join(where)}) is not a flashtickd flag")
    for flag in planned:
        if flag in accepted:
            fail(f"{flag} is now accepted by flashtickd: remove it from {PLANNED_FLAGS.name}")
        if flag not in used:
            fail(f"{flag} in {PLANNED_FLAGS.name} is not used by the deployment: remove it")


def server_args(models, grpc_port, metrics_port):
    """The Deployment's container args, made runnable on this machine."""
    deploy, _, cm = deployment_objects()
    args = []
    for a in deploy["spec"]["template"]["spec"]["containers"][0]["args"]:
        a = re.sub(r"\$\((\w+)\)", lambda m: cm["data"][m.group(1)], a)
        flag = a.split("=", 1)[0]
        a = {"--listen": f"--listen=127.0.0.1:{grpc_port}",
             "--metrics-port": f"--metrics-port={metrics_port}",
             "--model-repository": f"--model-repository={models}",
             "--device": "--device=cpu",
             "--threads": "--threads=2",
             "--shutdown-grace-seconds": "--shutdown-grace-seconds=5"}.get(flag, a)
        args.append(a)
    return args


def healthcheck_command(grpc_port):
    m = re.search(r"^\s*CMD (\[.*\])\s*$", (ROOT / "Dockerfile").read_text().split("HEALTHCHECK", 1)[1], re.M)
    cmd = json.loads(m.group(1))
    return [c.replace("127.0.0.1:8001", f"127.0.0.1:{grpc_port}") for c in cmd]


def wait_healthy(cmd, env, deadline_s=90):
    end = time.time() + deadline_s
    while time.time() < end:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=30)
        if r.returncode == 0:
            return True, r.stdout + r.stderr
        time.sleep(0.5)
    return False, r.stdout + r.stderr


def check_probes(grpc_port):
    """Each gRPC probe of the Deployment asks for a service the server reports SERVING."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    deploy, _, _ = deployment_objects()
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            service = container[probe]["grpc"].get("service", "")
            try:
                status = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status
            except grpc.RpcError as e:
                fail(f"{probe} asks grpc.health.v1 for {service!r}: {e.code().name} {e.details()}")
                continue
            if status != health_pb2.HealthCheckResponse.SERVING:
                fail(f"{probe} asks for {service!r}: {health_pb2.HealthCheckResponse.ServingStatus.Name(status)}")
            else:
                print(f"{probe}: grpc.health.v1 {service or '(server)'!s} SERVING")


def send_traffic(grpc_port, models_dir):
    """ModelMetadata, a good ModelInfer and a bad one (wrong rank) per staged model."""
    import numpy as np
    import tritonclient.grpc as tc
    client = tc.InferenceServerClient(url=f"127.0.0.1:{grpc_port}")
    names = sorted(p.name for p in Path(models_dir).iterdir() if p.is_dir())
    if not names:
        fail(f"stage-runtime.sh staged no model under {models_dir}")
    for name in names:
        meta = client.get_model_metadata(name, as_json=True)
        shape = [int(d) for d in meta["inputs"][0]["shape"]]
        features = shape[-1] if shape[-1] > 0 else 4
        ticks = np.random.default_rng(0).standard_normal((1, 64, features)).astype(np.float32)
        inp = tc.InferInput(meta["inputs"][0]["name"], list(ticks.shape), "FP32")
        inp.set_data_from_numpy(ticks)
        client.infer(name, [inp])
        bad = tc.InferInput(meta["inputs"][0]["name"], [64, features], "FP32")
        bad.set_data_from_numpy(ticks[0])
        try:
            client.infer(name, [bad])
            fail(f"model {name}: a rank-2 input was accepted")
        except tc.InferenceServerException:
            pass
    return names


def check_metrics(exposition):
    exported = deploy_lib.exported_names(exposition)
    used = deploy_lib.referenced_metrics()
    planned = deploy_lib.planned_metrics()
    live = sorted(n for n in used if n in exported)
    print(f"metrics: {len(used)} queried by the dashboard and alerts; {len(live)} exported now:")
    for n in live:
        print(f"  EXPORTED {n}")
    print(f"planned, not exported yet ({deploy_lib.PLANNED.name}): {len(planned)}")
    for n, issue in sorted(planned.items()):
        print(f"  PLANNED  {n:48s} {issue}")
    for n in sorted(set(used) - exported - set(planned)):
        fail(f"{n} is queried ({'; '.join(used[n])}) but flashtickd does not export it")
    for n in sorted(set(planned) & exported):
        fail(f"{n} is exported now: remove it from {deploy_lib.PLANNED.name}")
    if not live:
        fail("no queried metric is exported at all")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    args = ap.parse_args()

    bins = {b: find_binary(args.build_dir, b) for b in BINARIES}
    missing = [b for b, p in bins.items() if p is None]
    if missing:
        print(f"SKIP: not built yet under {args.build_dir}: {', '.join(missing)} "
              f"(the live scrape needs flashtickd, the flashtick CLI, flashtick_make_model "
              f"and flashtick_sweep, which stage-runtime.sh stages)")
        return SKIP

    with tempfile.TemporaryDirectory(prefix="flashtick-deploy-") as tmp:
        stage = Path(tmp) / "stage"
        r = subprocess.run(["bash", str(ROOT / "deploy/docker/stage-runtime.sh"), args.build_dir, str(stage)],
                           capture_output=True, text=True, timeout=300)
        print(r.stdout + r.stderr)
        if r.returncode != 0:
            fail("deploy/docker/stage-runtime.sh failed")
            return 1
        flashtickd = stage / "usr/local/bin/flashtickd"
        env = dict(os.environ, PATH=f"{stage / 'usr/local/bin'}:{os.environ['PATH']}",
                   LD_LIBRARY_PATH=str(stage / "opt/flashtick/lib"))

        check_flags(flashtickd)

        grpc_port, metrics_port = free_port(), free_port()
        cmd = [str(flashtickd)] + server_args(stage / "models", grpc_port, metrics_port)
        print("starting:", shlex.join(cmd))
        log = open(Path(tmp) / "flashtickd.log", "w+")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            hc = healthcheck_command(grpc_port)
            ok, out = wait_healthy(hc, env)
            if not ok:
                log.seek(0)
                fail(f"HEALTHCHECK {shlex.join(hc)} never passed: {out}\nserver log:\n{log.read()}")
                return 1
            print(f"healthcheck passed: {shlex.join(hc)}")
            check_probes(grpc_port)
            models = send_traffic(grpc_port, stage / "models")
            print(f"traffic sent to models {models}")
            with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as resp:
                check_metrics(resp.read().decode())
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                rc = proc.wait(timeout=30)
                if rc != 0:
                    fail(f"flashtickd exited {rc} after SIGTERM")
            except subprocess.TimeoutExpired:
                proc.kill()
                fail("flashtickd did not exit within 30 s of SIGTERM (drain deadline 5 s)")
        r = subprocess.run(healthcheck_command(grpc_port), capture_output=True, text=True, env=env, timeout=30)
        if r.returncode == 0:
            fail("the HEALTHCHECK command passes with no server running")

    print(f"{'FAILED' if failures else 'PASSED'}: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
