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
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
JOBS = re.compile(r"^/apis/batch/v1/namespaces/([^/]+)/jobs(?:/([^/]+))?$")
PODS = re.compile(r"^/api/v1/namespaces/([^/]+)/pods$")
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


class FakeJob:
    """One Job: runs its indexes as local processes, keeps their pods' status."""

    def __init__(self, job, workdir, simulate_gpu):
        self.obj = job
        self.simulate_gpu = simulate_gpu
        self.name = job["metadata"]["name"]
        spec = job["spec"]
        self.completions = spec["completions"]
        self.parallelism = spec["parallelism"]
        self.backoff = spec.get("backoffLimitPerIndex", 0)
        self.container = spec["template"]["spec"]["containers"][0]
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
        return env

    def run_index(self, index):
        for attempt in range(self.backoff + 1):
            pod_name = "%s-%d-%s" % (self.name, index, "abcde"[attempt % 5] * 5)
            log_path = os.path.join(self.workdir, pod_name + ".log")
            with open(log_path, "w") as log:
                with self.lock:
                    if self.deleted:
                        return
                    proc = subprocess.Popen(self.command(), env=self.env_for(index, pod_name),
                                            stdout=log, stderr=subprocess.STDOUT)
                    self.running[index] = proc
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
            if done == self.completions:
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
                    jobs[key] = FakeJob(body, state["workdir"], state["simulate_gpu"])
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
                   "workdir": args.workdir, "jobs": {}, "jobs_lock": threading.Lock(),
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
