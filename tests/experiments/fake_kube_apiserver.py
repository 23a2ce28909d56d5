"""A fake Kubernetes API server for flashtickd's Kubernetes arm runner (docs/deploy.md,
"Sweep arms as Kubernetes Jobs"), Python stdlib only, plain http on loopback.

It serves the calls server/experiments/k8s_arm_executor.cc makes and records every
request (method, path, headers including Authorization, JSON body) as one JSON line
in --log, so a test can check what the coordinator asked for:

  POST   /apis/batch/v1/namespaces/<ns>/jobs         validates the Job's shape (422 with
         a Status naming the field otherwise; 409 when the name exists), then RUNS it:
         each completion index's container command as a local process with
         JOB_COMPLETION_INDEX, POD_NAME and NODE_NAME (its downward-API env) set, at
         most spec.parallelism at once, an index retried up to backoffLimitPerIndex
  GET    /apis/batch/v1/namespaces/<ns>/jobs/<name>  the Job with status: active,
         succeeded, failed, completedIndexes, failedIndexes, conditions Complete/Failed
  DELETE /apis/batch/v1/namespaces/<ns>/jobs/<name>  SIGTERM to its running pods, gone
  GET    /api/v1/namespaces/<ns>/pods?labelSelector=batch.kubernetes.io/job-name=<name>
         its pods, with the completion-index annotation and terminated container state
  POST   /api/v1/namespaces/<ns>/services          a multi-pod arm's headless Service:
         validated (clusterIP None, a selector, ports; 422 otherwise; 409 when the
         name exists) and kept
  GET    /api/v1/namespaces/<ns>/services/<name>   it (404 when absent)
  DELETE /api/v1/namespaces/<ns>/services/<name>   gone (404 when absent)
  A Job whose pods name MASTER_ADDR as a cluster DNS name (`*.svc`: a multi-pod arm,
  docs/deploy.md "Multi-pod arms") is a gang: the fake stands in for cluster DNS, so
  each pod's MASTER_ADDR must be `<job>-0.<subdomain>.<ns>.svc` with `subdomain` a
  headless Service that exists and selects the pod's labels (else the pod fails as if
  the name did not resolve), and then runs with MASTER_ADDR=127.0.0.1 and MASTER_PORT
  a free loopback port of the Job. All of its indexes start at once (parallelism =
  completions); its pods are not retried: a failed pod beyond backoffLimit (the
  coordinator sets 0) fails the Job (BackoffLimitExceeded) and SIGTERMs the others.
  Every gang pod started is recorded in <workdir>/pods.jsonl (job, index, and its
  MASTER_ADDR, MASTER_PORT, WORLD_SIZE, JOB_COMPLETION_INDEX as given and as run).
  POST   /fake/simulate-gpu {"on": true}  (test control, not Kubernetes) from then on a
         pod that asks an nvidia.com/gpu runs with `--device cuda` replaced by cpu, as if
         it were on a GPU node, so a CUDA sweep can succeed on a CPU-only machine
Every request needs `Authorization: Bearer <--token>` (401 otherwise).

usage: fake_kube_apiserver.py --port-file F --log F --token T --workdir D
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
JOBS = re.compile(r"^/apis/batch/v1/namespaces/([^/]+)/jobs(?:/([^/]+))?$")
PODS = re.compile(r"^/api/v1/namespaces/([^/]+)/pods$")
SERVICES = re.compile(r"^/api/v1/namespaces/([^/]+)/services(?:/([^/]+))?$")
DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
RANK_ENV = ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "JOB_COMPLETION_INDEX")
MAX_BODY = 1 << 20


def status_obj(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
            "reason": reason, "message": message}


def validate_job(job, ns):
    """Returns why `job` is not a Job the fake can run, or None."""
    if job.get("apiVersion") != "batch/v1" or job.get("kind") != "Job":
        return "apiVersion/kind must be batch/v1 Job"
    meta = job.get("metadata") or {}
    if not DNS_LABEL.match(meta.get("name", "")):
        return "metadata.name must be a DNS-1123 label"
    if meta.get("namespace", ns) != ns:
        return "metadata.namespace does not match the path"
    spec = job.get("spec") or {}
    if spec.get("completionMode") != "Indexed":
        return "spec.completionMode must be Indexed"
    for key in ("completions", "parallelism"):
        if not isinstance(spec.get(key), int) or spec[key] < 1:
            return "spec.%s must be a positive integer" % key
    pod = (spec.get("template") or {}).get("spec") or {}
    if "backoffLimitPerIndex" in spec and pod.get("restartPolicy") != "Never":
        return "backoffLimitPerIndex needs template.spec.restartPolicy Never"
    containers = pod.get("containers") or []
    if len(containers) != 1:
        return "exactly one container expected"
    c = containers[0]
    if not c.get("image"):
        return "containers[0].image is empty"
    cmd = c.get("command")
    if not isinstance(cmd, list) or not cmd or not all(isinstance(a, str) for a in cmd):
        return "containers[0].command must be a non-empty list of strings"
    volumes = {v.get("name") for v in pod.get("volumes", [])}
    for m in c.get("volumeMounts", []):
        if m.get("name") not in volumes:
            return "volumeMount %s names no volume" % m.get("name")
    labels = meta.get("labels") or {}
    tlabels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not labels or labels != tlabels:
        return "the Job and its pod template must carry the same labels"
    return None


def validate_service(svc, ns):
    """Returns why `svc` is not a multi-pod arm's headless Service, or None."""
    if svc.get("apiVersion") != "v1" or svc.get("kind") != "Service":
        return "apiVersion/kind must be v1 Service"
    meta = svc.get("metadata") or {}
    if not DNS_1035.match(meta.get("name", "")):
        return "metadata.name must be a DNS-1035 label"
    if meta.get("namespace", ns) != ns:
        return "metadata.namespace does not match the path"
    spec = svc.get("spec") or {}
    if spec.get("clusterIP") != "None":
        return "spec.clusterIP must be None (headless)"
    if not isinstance(spec.get("selector"), dict) or not spec["selector"]:
        return "spec.selector must select the Job's pods"
    ports = spec.get("ports") or []
    if not ports or not all(isinstance(p.get("port"), int) and 0 < p["port"] < 65536
                            for p in ports):
        return "spec.ports must name ports 1..65535"
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FakeJob:
    """One Job: runs its indexes as local processes, keeps their pods' status."""

    def __init__(self, job, workdir, simulate_gpu, services=None, ns=""):
        self.obj = job
        self.services = services if services is not None else {}  # (ns, name) -> Service
        self.ns = ns
        self.simulate_gpu = simulate_gpu
        self.name = job["metadata"]["name"]
        spec = job["spec"]
        self.completions = spec["completions"]
        self.parallelism = spec["parallelism"]
        self.backoff = spec.get("backoffLimitPerIndex", 0)
        self.container = spec["template"]["spec"]["containers"][0]
        self.pod_spec = spec["template"]["spec"]
        self.pod_labels = (spec["template"].get("metadata") or {}).get("labels") or {}
        given = {e["name"]: e.get("value", "") for e in self.container.get("env", [])}
        # A gang: its ranks rendezvous at a cluster DNS name, which the fake stands in for.
        self.gang = given.get("MASTER_ADDR", "").endswith(".svc")
        self.backoff_limit = spec.get("backoffLimit", 6)  # the Kubernetes default
        self.gang_failed = False
        self.port = free_port() if self.gang else None
        self.workdir = workdir
        self.lock = threading.Lock()
        self.completed, self.failed_indexes = set(), set()
        self.failures = 0
        self.running = {}  # index -> Popen
        self.pods = []     # dicts as the API lists them
        self.deleted = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def env_for(self, index, pod_name):
        env = dict(os.environ)
        env["JOB_COMPLETION_INDEX"] = str(index)
        for e in self.container.get("env", []):
            path = ((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
            if path == "metadata.name":
                env[e["name"]] = pod_name
            elif path == "spec.nodeName":
                env[e["name"]] = "fake-node-%d" % (index % 2)
            elif "value" in e:
                env[e["name"]] = e["value"]
        if self.gang:
            env["MASTER_ADDR"], env["MASTER_PORT"] = "127.0.0.1", str(self.port)
        return env

    def resolve(self, index):
        """The fake's cluster DNS: why pod 0's name does not resolve, or None."""
        want = "%s-0.%s.%s.svc" % (self.name, self.pod_spec.get("subdomain"), self.ns)
        given = {e["name"]: e.get("value", "") for e in self.container.get("env", [])}
        if given.get("MASTER_ADDR") != want:
            return "MASTER_ADDR %s is not pod 0's name %s" % (given.get("MASTER_ADDR"), want)
        svc = self.services.get((self.ns, self.pod_spec.get("subdomain")))
        if svc is None:
            return "no Service %s (the pods' subdomain) in %s" % (
                self.pod_spec.get("subdomain"), self.ns)
        selector = svc["spec"]["selector"]
        if any(self.pod_labels.get(k) != v for k, v in selector.items()):
            return "Service %s selects %s, not the Job's pods" % (svc["metadata"]["name"], selector)
        return None

    def record_pod(self, index, pod_name, env):
        given = {e["name"]: e.get("value") for e in self.container.get("env", [])}
        with open(os.path.join(self.workdir, "pods.jsonl"), "a") as f:
            f.write(json.dumps({"job": self.name, "pod": pod_name, "index": index,
                                "given": {k: given.get(k) for k in RANK_ENV if k in given},
                                "ran": {k: env.get(k) for k in RANK_ENV}}) + "\n")

    def run_index(self, index):
        attempts = 1 if self.gang else self.backoff + 1
        for attempt in range(attempts):
            pod_name = "%s-%d-%s" % (self.name, index, "abcde"[attempt % 5] * 5)
            log_path = os.path.join(self.workdir, pod_name + ".log")
            with open(log_path, "w") as log:
                with self.lock:
                    # A gang's pods are all created at once, even when one fails first.
                    if self.deleted or (self.gang_failed and attempt > 0):
                        return
                    env = self.env_for(index, pod_name)
                    unresolved = self.resolve(index) if self.gang else None
                    if unresolved:  # the container would fail its rendezvous
                        log.write("fake DNS: %s\n" % unresolved)
                        log.flush()
                        cmd = [sys.executable, "-c", "raise SystemExit(1)"]
                    else:
                        cmd = self.command()
                    if self.gang:
                        self.record_pod(index, pod_name, env)
                    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
                    self.running[index] = proc
                    if self.gang_failed:
                        proc.send_signal(signal.SIGTERM)
                code = proc.wait()
            with self.lock:
                self.running.pop(index, None)
                pod = {"metadata": {"name": pod_name,
                                    "labels": {"batch.kubernetes.io/job-name": self.name},
                                    "annotations": {"batch.kubernetes.io/job-completion-index": str(index)}},
                       "status": {"phase": "Succeeded" if code == 0 else "Failed",
                                  "containerStatuses": [{"name": "arm", "state": {"terminated": {
                                      "exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                      "message": tail(log_path)}}}]}}
                self.pods.append(pod)
                if code == 0:
                    self.completed.add(index)
                    return
                self.failures += 1
                if self.gang and self.failures > self.backoff_limit and not self.gang_failed:
                    # The Job fails: Kubernetes terminates its other pods.
                    self.gang_failed = True
                    for other in self.running.values():
                        other.send_signal(signal.SIGTERM)
                if self.deleted:
                    return
        with self.lock:
            self.failed_indexes.add(index)

    def command(self):
        cmd = list(self.container["command"])
        gpu = "nvidia.com/gpu" in json.dumps(self.container.get("resources", {}))
        if self.simulate_gpu and gpu:
            cmd = ["cpu" if a == "cuda" and i > 0 and cmd[i - 1] == "--device" else a
                   for i, a in enumerate(cmd)]
        return cmd

    def run(self):
        threads = []
        for index in range(self.completions):
            while True:
                with self.lock:
                    busy = sum(1 for t in threads if t.is_alive())
                    if self.deleted:
                        return
                if busy < self.parallelism:
                    break
                time.sleep(0.02)
            t = threading.Thread(target=self.run_index, args=(index,), daemon=True)
            t.start()
            threads.append(t)
        for t in threads:
            t.join()

    def status(self):
        with self.lock:
            done = len(self.completed) + len(self.failed_indexes)
            st = {"active": len(self.running), "succeeded": len(self.completed),
                  "failed": self.failures,
                  "completedIndexes": ranges(self.completed),
                  "failedIndexes": ranges(self.failed_indexes)}
            if self.gang_failed:
                st.pop("failedIndexes")  # Kubernetes reports it with backoffLimitPerIndex only
                if not self.running:
                    st["conditions"] = [{"type": "Failed", "status": "True",
                                         "reason": "BackoffLimitExceeded",
                                         "message": "Job has reached the specified backoff limit"}]
            elif done == self.completions:
                if self.failed_indexes:
                    st["conditions"] = [{"type": "Failed", "status": "True", "reason": "FailedIndexes",
                                         "message": "Job has failed indexes"}]
                else:
                    st["conditions"] = [{"type": "Complete", "status": "True"}]
            return st

    def delete(self):
        with self.lock:
            self.deleted = True
            for proc in self.running.values():
                proc.send_signal(signal.SIGTERM)


def tail(path, n=300):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return ""


def ranges(indexes):
    out, run = [], []
    for i in sorted(indexes):
        if run and i == run[-1] + 1:
            run.append(i)
        else:
            if run:
                out.append(run)
            run = [i]
    if run:
        out.append(run)
    return ",".join(str(r[0]) if len(r) == 1 else "%d-%d" % (r[0], r[-1]) for r in out)


class Handler(BaseHTTPRequestHandler):
    server_version = "fake-kube-apiserver/1"

    def log_message(self, fmt, *args):  # quiet; the request log is the record
        pass

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self, method):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(min(length, MAX_BODY)) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = {"unparsed": raw.decode(errors="replace")}
        url = urllib.parse.urlsplit(self.path)
        state = self.server.state
        with state["log_lock"]:
            with open(state["log"], "a") as f:
                f.write(json.dumps({"method": method, "path": url.path, "query": url.query,
                                    "headers": dict(self.headers.items()), "body": body}) + "\n")
        if self.headers.get("Authorization") != "Bearer " + state["token"]:
            return self.reply(401, status_obj(401, "Unauthorized", "bad or missing bearer token"))
        m = JOBS.match(url.path)
        if m:
            ns, name = m.group(1), m.group(2)
            jobs = state["jobs"]
            if method == "POST" and name is None:
                if not isinstance(body, dict):
                    return self.reply(400, status_obj(400, "BadRequest", "body is not a JSON object"))
                why = validate_job(body, ns)
                if why:
                    return self.reply(422, status_obj(422, "Invalid", why))
                key = (ns, body["metadata"]["name"])
                with state["jobs_lock"]:
                    if key in jobs:
                        return self.reply(409, status_obj(409, "AlreadyExists", "jobs %s already exists" % key[1]))
                    jobs[key] = FakeJob(body, state["workdir"], state["simulate_gpu"],
                                        state["services"], ns)
                return self.reply(201, body)
            with state["jobs_lock"]:
                job = jobs.get((ns, name))
            if job is None:
                return self.reply(404, status_obj(404, "NotFound", "jobs %s not found" % name))
            if method == "GET":
                return self.reply(200, dict(job.obj, status=job.status()))
            if method == "DELETE":
                job.delete()
                with state["jobs_lock"]:
                    jobs.pop((ns, name), None)
                return self.reply(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})
        m = SERVICES.match(url.path)
        if m:
            ns, name = m.group(1), m.group(2)
            services = state["services"]
            if method == "POST" and name is None:
                if not isinstance(body, dict):
                    return self.reply(400, status_obj(400, "BadRequest", "not a JSON object"))
                why = validate_service(body, ns)
                if why:
                    return self.reply(422, status_obj(422, "Invalid", why))
                key = (ns, body["metadata"]["name"])
                with state["jobs_lock"]:
                    if key in services:
                        return self.reply(409, status_obj(409, "AlreadyExists",
                                                          "services %s already exists" % key[1]))
                    services[key] = body
                return self.reply(201, body)
            with state["jobs_lock"]:
                svc = services.get((ns, name))
                if svc is not None and method == "DELETE":
                    services.pop((ns, name))
            if svc is None:
                return self.reply(404, status_obj(404, "NotFound", "services %s not found" % name))
            if method == "GET":
                return self.reply(200, svc)
            if method == "DELETE":
                return self.reply(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})
        if url.path == "/fake/simulate-gpu" and method == "POST":
            state["simulate_gpu"] = bool((body or {}).get("on"))
            return self.reply(200, {"simulate_gpu": state["simulate_gpu"]})
        m = PODS.match(url.path)
        if m and method == "GET":
            selector = urllib.parse.parse_qs(url.query).get("labelSelector", [""])[0]
            want = selector.split("=", 1)[1] if selector.startswith("batch.kubernetes.io/job-name=") else None
            with state["jobs_lock"]:
                job = state["jobs"].get((m.group(1), want))
            items = []
            if job is not None:
                with job.lock:
                    items = list(job.pods)
            return self.reply(200, {"kind": "PodList", "apiVersion": "v1", "items": items})
        return self.reply(404, status_obj(404, "NotFound", "the fake serves no %s %s" % (method, url.path)))

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_DELETE(self):
        self.handle_any("DELETE")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--token", required=True)
    p.add_argument("--workdir", required=True)
    args = p.parse_args()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.state = {"log": args.log, "log_lock": threading.Lock(), "token": args.token,
                   "workdir": args.workdir, "jobs": {}, "services": {},
                   "jobs_lock": threading.Lock(),
                   "simulate_gpu": False}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(httpd.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    try:
        httpd.serve_forever()
    finally:
        with httpd.state["jobs_lock"]:
            for job in httpd.state["jobs"].values():
                job.delete()


if __name__ == "__main__":
    main()
