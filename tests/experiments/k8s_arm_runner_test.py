"""flashtickd --sweep-arm-runner=kubernetes against a fake Kubernetes API server
(fake_kube_apiserver.py, which runs each Job index's `flashtick_sweep --run-arm` as a
local process), docs/deploy.md "Sweep arms as Kubernetes Jobs":

  1. A tiny CPU sweep (2 N x 2 seeds, 2 pods at a time) SUCCEEDS through one Indexed
     Job; its verdict and every arm's results (steps, per-day metrics, pooled metrics,
     loss curve) equal those of the local runner (flashtick_sweep, the same engine
     training the arms in threads) on the same config; report.json and report.md say
     which pod and node each arm ran on.
  2. The recorded requests: POST to the --k8s-namespace's jobs path with the bearer
     token of --k8s-token-file on every request; completions = the 4 arms,
     parallelism 2, the experiment's labels, the claim mounted at the experiments
     root, POD_NAME/NODE_NAME from the downward API, no GPU for a CPU sweep.
  3. A sweep whose device is "auto" trains on --k8s-arm-device (default cuda, though
     flashtickd itself runs --device cpu): its Job asks one nvidia.com/gpu per pod and
     tolerates GPU taints; its pods fail on this CPU machine, so the experiment FAILS
     with the pod's termination (exit code) as the reason.
  4. Cancel of a running sweep issues DELETE of its Job with propagationPolicy
     Background and the experiment ends CANCELLED.
  5. A Job of the experiment's name left by an earlier run (409 on create) is deleted
     with propagationPolicy Foreground and waited for, then the Job is created again
     and the sweep SUCCEEDS.
  6. A CUDA sweep whose pods succeed (the fake runs them as if on GPU nodes) SUCCEEDS:
     the precision check after the arms runs on the coordinator's own device (cpu),
     not on the arms' CUDA, which the coordinator does not have.
  7. Multi-pod arms (docs/deploy.md, "Multi-pod arms"): a tiny CPU sweep with
     replicas_per_arm = 2 makes one headless Service and then one gang Job per arm
     (completions = parallelism = 2, `--arm-index K --world-size 2`, the pods'
     subdomain = the Service, MASTER_ADDR = pod 0's cluster DNS name, MASTER_PORT =
     --k8s-rendezvous-port, WORLD_SIZE = 2, backoffLimit 0), at most max_parallel_arms
     arms at once, each Service deleted when its Job ends; the fake runs each arm's 2
     pods at once with the rendezvous rewritten to loopback. When flashtick_sweep
     accepts `--run-arm --world-size`, the sweep SUCCEEDS with a verdict and arm
     results equal to the local runner's (which trains the replicas in-process; the
     multi-process run is bit-for-bit equal on the CPU), and a cancel deletes the
     running arms' Jobs and Services. A Service of an arm's name left by an earlier
     run (409) is deleted and created again before the arm's Job, whose pods then
     resolve rank 0 through the new one. When it does not yet, the arms' pods fail, the
     experiment FAILS naming the failed pod (the gang failure path), and the rest is
     SKIPPED: the test then exits 77, which ctest reports as skipped, never as passed.
  The Jobs (one-pod and multi-pod) and the Service validate strictly against the
  Kubernetes OpenAPI schema of 1.29 and 1.33 (kubernetes-validate, as in
  tests/deploy/test_k8s.py).

usage: k8s_arm_runner_test.py --flashtickd BIN --flashtick-sweep BIN
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
from e2e_server import ServerProcess  # noqa: E402
from flashtickd_client import ExperimentsClient, wait_for  # noqa: E402

NAMESPACE = "flashtick-ci"
TOKEN = "fake-sa-token-7f3a"
PVC = "flashtick-store"
RENDEZVOUS_PORT = 29611
SKIPPED = 77  # ctest SKIP_RETURN_CODE


def sweep(name, days=8, device="cpu", epochs=2, replicas=1):
    return {"replicas_per_arm": replicas,
        "name": name, "contexts": [8, 32], "seeds": [1, 2], "max_parallel_arms": 2,
        "model": {"width": 8, "layers": 1, "heads": 2, "kv_heads": 2, "mlp_ratio": 2},
        "optimizer": {"learning_rate": 0.003, "warmup_steps": 2, "tokens_per_step": 256},
        "training": {"first_fold_epochs": epochs, "epochs_per_fold": 1, "checkpoint_every_steps": 5},
        "data": {"synthetic": {"generator": "planted_cue", "seed": 3, "days": days,
                               "steps_per_day": 256, "lags": [6, 24],
                               "events_per_lag_per_day": 6, "drift_bps": 1.0}},
        "labels": {"horizon": 2},
        "walk_forward": {"train_days": 3, "test_days": 1},
        "gates": {"pbo_blocks": 4},
        "device": device, "cpu_threads": 1}


class Checks:
    def __init__(self):
        self.failed = 0
        self.skipped = []

    def skip(self, what, why):
        print("SKIP %s: %s" % (what, why), flush=True)
        self.skipped.append(what)

    def check(self, ok, what):
        print("%s %s" % ("ok  " if ok else "FAIL", what), flush=True)
        self.failed += 0 if ok else 1
        return ok


def requests(log):
    try:
        with open(log) as f:
            return [json.loads(line) for line in f if line.strip()]
    except OSError:
        return []


def arm_results(report):
    """What training and testing produced, per arm: everything but timing and place."""
    out = {}
    for a in report["arms"]:
        out[a["arm_id"]] = {k: a.get(k) for k in ("state", "context", "seed", "steps", "total_steps",
                                                   "folds", "evaluated_folds", "benefit", "days",
                                                   "events", "kernel_path", "backend")}
    return out


def load_json(path):
    with open(path) as f:
        return json.load(f)


def runner_takes_world_size(sweep_bin):
    """Whether flashtick_sweep --run-arm trains one arm over --world-size processes."""
    out = subprocess.run([sweep_bin, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=60, text=True).stdout
    return "--world-size" in out


def local_report(args, work, name, config):
    """report.json of `config` run to its end by the local runner (flashtick_sweep in this
    process, work/local-<name>): what the Kubernetes run must equal."""
    local_dir = os.path.join(work, "local-" + name)
    cfg_path = os.path.join(work, name + ".json")
    with open(cfg_path, "w") as f:
        json.dump(config, f)
    subprocess.run([args.flashtick_sweep, "--config", cfg_path, "--dir", local_dir,
                    "--plot-script", ""], check=True, timeout=300, stdout=subprocess.DEVNULL)
    return load_json(os.path.join(local_dir, "report.json"))


def wait_done(client, exp_id, what, timeout=300):
    return wait_for(lambda: (lambda e: e if client.State(e) in ("SUCCEEDED", "FAILED", "CANCELLED")
                             else None)(client.Get(exp_id)), timeout, what)


def validate_schema(checks, objects):
    """The coordinator's objects against the Kubernetes OpenAPI schema, strictly (unknown
    fields fail), for the oldest and newest versions tests/deploy/test_k8s.py supports."""
    try:
        import kubernetes_validate
    except ImportError:
        checks.skip("the Job and Service validate against the Kubernetes schema",
                    "kubernetes-validate is not installed (scripts/setup.sh)")
        return
    for o in objects:
        for version in ("1.29.0", "1.33.0"):
            try:
                kubernetes_validate.validate(o, version, strict=True)
                ok, why = True, ""
            except kubernetes_validate.ValidationError as e:
                ok, why = False, "%s: %s" % (list(e.path), e.message)
            checks.check(ok, "%s %s validates against Kubernetes %s %s"
                         % (o["kind"], o["metadata"]["name"], version, why))


def api_post(port, path, obj):
    r = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), method="POST",
                               data=json.dumps(obj).encode(),
                               headers={"Authorization": "Bearer " + TOKEN,
                                        "Content-Type": "application/json"})
    return urllib.request.urlopen(r, timeout=10).status


def multi_pod_arms(client, checks, args, log, work, jobs_path, port):
    """Case 7: replicas_per_arm = 2 through the kubernetes runner."""
    services_path = "/api/v1/namespaces/%s/services" % NAMESPACE
    pods_log = os.path.join(work, "pods.jsonl")
    supported = runner_takes_world_size(args.flashtick_sweep)
    n_before, pods_before = len(requests(log)), len(requests(pods_log))
    config = sweep("k8s-dp", replicas=2)
    x = client.Submit(json.dumps(config))
    done = wait_done(client, x.id, "the multi-pod sweep to end")
    reqs = requests(log)[n_before:]
    jobs = [r for r in reqs if r["method"] == "POST" and r["path"] == jobs_path]
    svcs = [r for r in reqs if r["method"] == "POST" and r["path"] == services_path]
    arm_ids = ["n8-s1", "n8-s2", "n32-s1", "n32-s2"]  # planned order: --arm-index 0..3
    names = ["flashtick-arm-%s-%s" % (x.id, a) for a in arm_ids]
    checks.check(sorted(j["body"]["metadata"]["name"] for j in jobs) == sorted(names),
                 "one Job per arm: %s" % [j["body"]["metadata"]["name"] for j in jobs])
    checks.check(sorted(v["body"]["metadata"]["name"] for v in svcs) == sorted(names),
                 "one Service per arm, named as its Job: %s"
                 % [v["body"]["metadata"]["name"] for v in svcs])
    by_name = {j["body"]["metadata"]["name"]: j["body"] for j in jobs}
    svc_by_name = {v["body"]["metadata"]["name"]: v["body"] for v in svcs}
    for k, name in enumerate(names):
        job, svc = by_name.get(name), svc_by_name.get(name)
        if job is None or svc is None:
            checks.check(False, "arm %s: a Job and a Service" % arm_ids[k])
            continue
        spec, pod = job["spec"], job["spec"]["template"]["spec"]
        c = pod["containers"][0]
        cmd = c["command"]
        env = {e["name"]: e.get("value") for e in c["env"]}
        checks.check(spec["completionMode"] == "Indexed" and spec["completions"] == 2
                     and spec["parallelism"] == 2 and spec.get("backoffLimit") == 0
                     and "backoffLimitPerIndex" not in spec,
                     "%s: Indexed, completions = parallelism = 2, backoffLimit 0" % name)
        checks.check(cmd[cmd.index("--arm-index") + 1] == str(k)
                     and cmd[cmd.index("--world-size") + 1] == "2" and "--arm-indexes" not in cmd,
                     "%s: --arm-index %d --world-size 2: %s" % (name, k, cmd[1:]))
        checks.check(pod.get("subdomain") == name, "%s: the pods' subdomain is its Service" % name)
        checks.check(env.get("MASTER_ADDR") == "%s-0.%s.%s.svc" % (name, name, NAMESPACE)
                     and env.get("MASTER_PORT") == str(RENDEZVOUS_PORT)
                     and env.get("WORLD_SIZE") == "2",
                     "%s: MASTER_ADDR pod 0's DNS name, MASTER_PORT, WORLD_SIZE: %s"
                     % (name, {v: env.get(v) for v in ("MASTER_ADDR", "MASTER_PORT",
                                                       "WORLD_SIZE")}))
        sspec = svc["spec"]
        tlabels = job["spec"]["template"]["metadata"]["labels"]
        selects = all(tlabels.get(a) == b for a, b in sspec["selector"].items())
        checks.check(sspec.get("clusterIP") == "None"
                     and sspec.get("publishNotReadyAddresses") is True
                     and sspec["selector"] and selects
                     and [p_["port"] for p_ in sspec["ports"]] == [RENDEZVOUS_PORT],
                     "%s: a headless Service selecting the Job's pods on the rendezvous port: %s"
                     % (name, sspec))
        posts = [i for i, r in enumerate(reqs) if r["method"] == "POST" and
                 (r["body"] or {}).get("metadata", {}).get("name") == name]
        checks.check(len(posts) == 2 and reqs[posts[0]]["path"] == services_path
                     and reqs[posts[1]]["path"] == jobs_path,
                     "%s: the Service before the Job" % name)
        dels = [r for r in reqs
                if r["method"] == "DELETE" and r["path"] == services_path + "/" + name]
        checks.check(len(dels) == 1, "%s: its Service deleted once its Job ended" % name)
    # At most max_parallel_arms (2) arms at once: the third arm's Job after a Service's end.
    job_posts = [i for i, r in enumerate(reqs) if r["method"] == "POST" and r["path"] == jobs_path]
    svc_dels = [i for i, r in enumerate(reqs) if r["method"] == "DELETE"
                and r["path"].startswith(services_path + "/")]
    checks.check(len(job_posts) == 4 and svc_dels and job_posts[2] > svc_dels[0],
                 "at most 2 arms' Jobs at once (the third after an arm ended)")
    validate_schema(checks, [j["body"] for j in jobs[:1]] + [v["body"] for v in svcs[:1]])
    pods = requests(pods_log)[pods_before:]
    for name in names:
        mine = sorted((p_ for p_ in pods if p_["job"] == name), key=lambda p_: p_["index"])
        ok = ([p_["index"] for p_ in mine] == [0, 1]
              and all(p_["given"].get("MASTER_ADDR", "").endswith(".svc") for p_ in mine)
              and all(p_["ran"]["MASTER_ADDR"] == "127.0.0.1" for p_ in mine)
              and len({p_["ran"]["MASTER_PORT"] for p_ in mine}) == 1
              and all(p_["ran"]["WORLD_SIZE"] == "2" for p_ in mine)
              and all(p_["ran"]["JOB_COMPLETION_INDEX"] == str(p_["index"]) for p_ in mine))
        checks.check(ok, "%s: 2 pods, ranks 0 and 1, one loopback rendezvous: %s"
                     % (name, [(p_["index"], p_["ran"]) for p_ in mine]))
    # A Service of an arm's name left by an earlier run (409): deleted, created again,
    # and only then the arm's Job, whose pods then resolve rank 0 through the new one.
    next_id = "exp-%06d" % (int(x.id.split("-")[1]) + 1)
    stale = "flashtick-arm-%s-n8-s1" % next_id
    planted = api_post(port, services_path, {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": stale},
        "spec": {"clusterIP": "None", "selector": {"stale": "yes"}, "ports": [{"port": 1}]}})
    checks.check(planted == 201, "a stale Service is planted")
    n_stale = len(requests(log))
    z = client.Submit(json.dumps(sweep("k8s-dp-stale", replicas=2)))
    checks.check(z.id == next_id, "the next experiment is %s (%s)" % (next_id, z.id))
    zdone = wait_done(client, z.id, "the multi-pod sweep after a stale Service")
    seq = [(r["method"], r["path"].replace(services_path, "services").replace(jobs_path, "jobs"))
           for r in requests(log)[n_stale:]
           if r["path"] in (services_path, services_path + "/" + stale, jobs_path)
           and (r["method"] != "POST" or (r["body"] or {}).get("metadata", {}).get("name") == stale)]
    checks.check(seq[:4] == [("POST", "services"), ("DELETE", "services/" + stale),
                             ("POST", "services"), ("POST", "jobs")],
                 "409 on the Service → DELETE → POST again → the Job: %s" % seq[:5])
    checks.check("fake DNS" not in zdone.error and
                 (client.State(zdone) == "SUCCEEDED" or not supported),
                 "its pods found rank 0 through the new Service (%s %s)"
                 % (client.State(zdone), zdone.error[:200]))
    if not supported:
        checks.check(client.State(done) == "FAILED"
                     and "(2 pods) failed (BackoffLimitExceeded" in done.error
                     and "pod flashtick-arm-" in done.error,
                     "pods that fail fail their arm's Job and the experiment: %s"
                     % done.error[:300])
        why = "flashtick_sweep does not accept `--run-arm --world-size` yet"
        checks.skip("the multi-pod sweep SUCCEEDS with the local runner's verdict and arms", why)
        checks.skip("cancel deletes a multi-pod arm's Job and Service", why)
        return
    checks.check(client.State(done) == "SUCCEEDED", "the multi-pod sweep SUCCEEDED (%s %s)"
                 % (client.State(done), done.error))
    if client.State(done) != "SUCCEEDED":
        return
    mine = arm_results(load_json(os.path.join(done.directory, "report.json")))
    local = local_report(args, work, "dp", config)
    checks.check(load_json(os.path.join(done.directory, "report.json")).get("verdict")
                 == local.get("verdict"), "the multi-pod verdict equals the local runner's")
    theirs = arm_results(local)
    checks.check(sorted(mine) == sorted(theirs), "the same arms: %s" % sorted(mine))
    for arm_id in sorted(theirs):
        checks.check(mine.get(arm_id) == theirs[arm_id],
                     "multi-pod arm %s: results equal the local runner's" % arm_id)
    # Cancel of running multi-pod arms deletes their Jobs and Services.
    n_before = len(requests(log))
    y = client.Submit(json.dumps(sweep("k8s-dp-cancel", days=40, epochs=20, replicas=2)))
    ydir = client.Get(y.id).directory
    wait_for(lambda: any(os.path.exists(os.path.join(ydir, "arms", a, "state.json"))
                         for a in ("n8-s1", "n8-s2")), 120, "a multi-pod arm to start training")
    client.Cancel(y.id)
    ydone = wait_done(client, y.id, "the cancelled multi-pod sweep to end", 120)
    checks.check(client.State(ydone) == "CANCELLED", "the cancelled multi-pod sweep is CANCELLED")
    reqs = requests(log)[n_before:]
    live = [r["body"]["metadata"]["name"] for r in reqs
            if r["method"] == "POST" and r["path"] == jobs_path]
    deleted_jobs = [r["path"].rsplit("/", 1)[1] for r in reqs if r["method"] == "DELETE"
                    and r["path"].startswith(jobs_path + "/")
                    and r["body"].get("propagationPolicy") == "Background"]
    deleted_svcs = [r["path"].rsplit("/", 1)[1] for r in reqs if r["method"] == "DELETE"
                    and r["path"].startswith(services_path + "/")]
    checks.check(live and sorted(deleted_jobs) == sorted(live)
                 and sorted(deleted_svcs) == sorted(live),
                 "cancel deletes the running arms' Jobs and Services: %s / %s / %s"
                 % (live, deleted_jobs, deleted_svcs))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--flashtickd", required=True)
    p.add_argument("--flashtick-sweep", required=True)
    p.add_argument("--keep", action="store_true")
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="flashtick_k8s_")
    expdir = os.path.join(work, "experiments")
    models = os.path.join(work, "models")
    os.makedirs(models)
    log = os.path.join(work, "requests.jsonl")
    token_file = os.path.join(work, "token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    checks = Checks()
    fake = server = client = None
    try:
        port_file = os.path.join(work, "port")
        fake = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_kube_apiserver.py"),
                                 "--port-file", port_file, "--log", log, "--token", TOKEN,
                                 "--workdir", work])
        wait_for(lambda: os.path.exists(port_file), 30, "the fake API server")
        with open(port_file) as f:
            port = int(f.read())
        server = ServerProcess(args.flashtickd, models, work, [
            "--threads", "1", "--experiment-dir", expdir, "--experiment-workers", "1",
            "--report-python", "", "--sweep-arm-runner", "kubernetes",
            "--k8s-api-server", "http://127.0.0.1:%d" % port, "--k8s-token-file", token_file,
            "--k8s-ca-file", "", "--k8s-namespace", NAMESPACE, "--k8s-image", "flashtick:ci",
            "--k8s-pvc", PVC, "--k8s-sweep-binary", os.path.abspath(args.flashtick_sweep),
            "--k8s-poll-seconds", "0.1", "--k8s-backoff-limit-per-index", "1",
            "--k8s-rendezvous-port", str(RENDEZVOUS_PORT)])
        server.start(timeout_s=120)
        client = ExperimentsClient(server.address)

        # 1. A sweep through one Job, the same as the local runner's.
        config = sweep("k8s-tiny")
        x = client.Submit(json.dumps(config))
        done = wait_for(lambda: (lambda e: e if client.State(e) in ("SUCCEEDED", "FAILED", "CANCELLED")
                                 else None)(client.Get(x.id)), 300, "the sweep to end")
        checks.check(client.State(done) == "SUCCEEDED", "the Kubernetes sweep SUCCEEDED (%s %s)"
                     % (client.State(done), done.error))
        k8s_report = load_json(os.path.join(done.directory, "report.json"))
        local = local_report(args, work, "tiny", config)
        checks.check(k8s_report.get("verdict") == local.get("verdict"),
                     "the verdict equals the local runner's")
        mine, theirs = arm_results(k8s_report), arm_results(local)
        checks.check(sorted(mine) == ["n32-s1", "n32-s2", "n8-s1", "n8-s2"], "four arms: %s" % sorted(mine))
        for arm_id in sorted(theirs):
            checks.check(mine.get(arm_id) == theirs[arm_id],
                         "arm %s: results equal the local runner's" % arm_id)
        places = {a["arm_id"]: a.get("ran_on", "") for a in k8s_report["arms"]}
        checks.check(all(v.startswith("pod flashtick-arms-%s-" % x.id) and " on node fake-node-" in v
                         for v in places.values()), "report.json: each arm's pod and node: %s" % places)
        with open(os.path.join(done.directory, "report.md")) as f:
            md = f.read()
        checks.check("Where each arm ran: " in md and "on node fake-node-" in md,
                     "report.md says where each arm ran")
        local_places = {a.get("ran_on", "") for a in local["arms"]}
        checks.check(all(v.startswith("host ") for v in local_places), "local arms ran on the host")

        # 2. What flashtickd asked of the API server.
        reqs = requests(log)
        checks.check(bool(reqs) and all(r["headers"].get("Authorization") == "Bearer " + TOKEN
                                        for r in reqs), "every request has the bearer token")
        posts = [r for r in reqs if r["method"] == "POST"]
        jobs_path = "/apis/batch/v1/namespaces/%s/jobs" % NAMESPACE
        checks.check(len(posts) == 1 and posts[0]["path"] == jobs_path,
                     "one POST to %s: %s" % (jobs_path, [r["path"] for r in posts]))
        job = posts[0]["body"]
        spec, pod = job["spec"], job["spec"]["template"]["spec"]
        c = pod["containers"][0]
        checks.check(spec["completionMode"] == "Indexed" and spec["completions"] == 4
                     and spec["parallelism"] == 2, "Indexed, completions 4, parallelism 2")
        checks.check(spec.get("backoffLimitPerIndex") == 1 and "ttlSecondsAfterFinished" in spec,
                     "backoffLimitPerIndex and ttlSecondsAfterFinished set")
        checks.check(job["metadata"]["labels"].get("flashtick.dev/experiment") == x.id
                     and spec["template"]["metadata"]["labels"] == job["metadata"]["labels"],
                     "the Job and its pods are labelled with the experiment")
        claims = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]
                  if "persistentVolumeClaim" in v}
        mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
        checks.check(list(claims.values()) == [PVC] and
                     mounts.get(list(claims)[0]) == os.path.abspath(expdir),
                     "the claim %s mounted at the experiments root: %s" % (PVC, mounts))
        checks.check(c["image"] == "flashtick:ci" and "--run-arm" in c["command"]
                     and c["command"][c["command"].index("--dir") + 1] == os.path.abspath(done.directory),
                     "image and `flashtick_sweep --run-arm --dir <experiment>`")
        env = {e["name"]: e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") for e in c["env"]}
        checks.check(env.get("POD_NAME") == "metadata.name" and env.get("NODE_NAME") == "spec.nodeName",
                     "POD_NAME and NODE_NAME from the downward API")
        checks.check("nvidia.com/gpu" not in json.dumps(c.get("resources", {})),
                     "no GPU asked for a CPU sweep")
        validate_schema(checks, [job])
        checks.check(any(r["method"] == "GET" and r["path"] == jobs_path + "/" + job["metadata"]["name"]
                         for r in reqs), "the Job's status was polled")

        # 3. An "auto" sweep trains on --k8s-arm-device (default cuda): one GPU per pod;
        #    its pods fail on this CPU machine, and so does the experiment.
        n_before = len(requests(log))
        g = client.Submit(json.dumps(sweep("k8s-auto-gpu", device="auto")))  # --k8s-arm-device cuda
        gdone = wait_for(lambda: (lambda e: e if client.State(e) in ("SUCCEEDED", "FAILED", "CANCELLED")
                                  else None)(client.Get(g.id)), 300, "the GPU sweep to end")
        gpost = [r for r in requests(log)[n_before:] if r["method"] == "POST"]
        gc = gpost[0]["body"]["spec"]["template"]["spec"]["containers"][0] if gpost else {}
        checks.check(str(gc.get("resources", {}).get("limits", {}).get("nvidia.com/gpu")) == "1",
                     "an 'auto' sweep's pods each ask one nvidia.com/gpu")
        tol = gpost[0]["body"]["spec"]["template"]["spec"].get("tolerations", []) if gpost else []
        checks.check(any(t.get("key") == "nvidia.com/gpu" for t in tol), "and tolerate GPU taints")
        checks.check(client.State(gdone) == "FAILED" and "failed: pod flashtick-arms-" in gdone.error
                     and "exit code 1" in gdone.error,
                     "the failed index fails its arm with the pod's reason: %s" % gdone.error[:300])

        # 4. Cancel deletes the Job.
        n_before = len(requests(log))
        y = client.Submit(json.dumps(sweep("k8s-cancel", days=40, epochs=20)))
        ydir = client.Get(y.id).directory
        wait_for(lambda: any(os.path.exists(os.path.join(ydir, "arms", a, "state.json"))
                             for a in ("n8-s1", "n8-s2")), 120, "an arm pod to start training")
        client.Cancel(y.id)
        ydone = wait_for(lambda: (lambda e: e if client.State(e) in ("SUCCEEDED", "FAILED", "CANCELLED")
                                  else None)(client.Get(y.id)), 120, "the cancelled sweep to end")
        checks.check(client.State(ydone) == "CANCELLED", "the cancelled sweep is CANCELLED (%s %s)"
                     % (client.State(ydone), ydone.error))
        deletes = [r for r in requests(log)[n_before:] if r["method"] == "DELETE"]
        checks.check(len(deletes) == 1 and deletes[0]["path"].startswith(jobs_path + "/flashtick-arms-")
                     and deletes[0]["body"].get("propagationPolicy") == "Background",
                     "cancel DELETEs the Job with propagationPolicy Background: %s"
                     % [(r["path"], r["body"]) for r in deletes])

        # 5. A Job of the same name left by an earlier run (a restarted coordinator) is
        #    deleted with Foreground propagation, and waited for, before the new one.
        next_id = "exp-%06d" % (int(y.id.split("-")[1]) + 1)
        stale_name = "flashtick-arms-" + next_id
        stale = {"apiVersion": "batch/v1", "kind": "Job",
                 "metadata": {"name": stale_name, "labels": {"flashtick.dev/experiment": next_id}},
                 "spec": {"completionMode": "Indexed", "completions": 1, "parallelism": 1,
                          "template": {"metadata": {"labels": {"flashtick.dev/experiment": next_id}},
                                       "spec": {"restartPolicy": "Never", "containers": [
                                           {"name": "arm", "image": "stale", "command": ["sleep", "300"]}]}}}}
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, jobs_path), method="POST",
                                     data=json.dumps(stale).encode(),
                                     headers={"Authorization": "Bearer " + TOKEN,
                                              "Content-Type": "application/json"})
        checks.check(urllib.request.urlopen(req, timeout=10).status == 201, "a stale Job is planted")
        n_before = len(requests(log))
        z = client.Submit(json.dumps(sweep("k8s-stale")))
        checks.check(z.id == next_id, "the next experiment is %s (%s)" % (next_id, z.id))
        zdone = wait_for(lambda: (lambda e: e if client.State(e) in ("SUCCEEDED", "FAILED", "CANCELLED")
                                  else None)(client.Get(z.id)), 300, "the sweep after the stale Job")
        checks.check(client.State(zdone) == "SUCCEEDED", "the sweep after a stale Job SUCCEEDED (%s %s)"
                     % (client.State(zdone), zdone.error))
        seq = [(r["method"], (r["body"] or {}).get("propagationPolicy")) for r in requests(log)[n_before:]
               if r["path"] == jobs_path or r["path"] == jobs_path + "/" + stale_name]
        first_post = seq.index(("POST", None)) if ("POST", None) in seq else -1
        checks.check(seq[first_post + 1:first_post + 2] == [("DELETE", "Foreground")] and
                     seq.count(("POST", None)) == 2 and
                     seq.index(("POST", None), first_post + 1) > seq.index(("DELETE", "Foreground")),
                     "409 → DELETE (Foreground) → wait → POST again: %s" % seq[:6])

        # 6. A CUDA sweep concludes on the GPU-less coordinator.
        def fake_post(path, obj):
            r = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), method="POST",
                                       data=json.dumps(obj).encode(),
                                       headers={"Authorization": "Bearer " + TOKEN,
                                                "Content-Type": "application/json"})
            return urllib.request.urlopen(r, timeout=10).status
        fake_post("/fake/simulate-gpu", {"on": True})
        c2 = client.Submit(json.dumps(sweep("k8s-cuda-ok", device="cuda")))
        c2done = wait_for(lambda: (lambda e: e if client.State(e) in ("SUCCEEDED", "FAILED", "CANCELLED")
                                   else None)(client.Get(c2.id)), 300, "the CUDA sweep to end")
        checks.check(client.State(c2done) == "SUCCEEDED", "a CUDA sweep whose pods succeed SUCCEEDS (%s %s)"
                     % (client.State(c2done), c2done.error))
        if client.State(c2done) == "SUCCEEDED":
            precision = load_json(os.path.join(c2done.directory, "report.json")).get("precision_check", {})
            checks.check(precision.get("ran") is True and precision.get("fast_path") == "cpu_reference",
                         "its precision check ran on the coordinator's CPU: %s" % json.dumps(precision)[:200])
        multi_pod_arms(client, checks, args, log, work, jobs_path, port)
        checks.check(server.alive(), "flashtickd is still serving")
    except Exception as e:  # noqa: BLE001 - any failure is a failed check, with the log
        checks.check(False, "unexpected: %r" % e)
    finally:
        if checks.failed and server is not None:
            print("---- flashtickd log ----\n" + server.log()[-6000:])
        if client is not None:
            client.channel.close()
        if server is not None:
            server.stop()
            server.kill()
        if fake is not None:
            fake.terminate()
            try:
                fake.wait(timeout=30)
            except subprocess.TimeoutExpired:
                fake.kill()
        if args.keep:
            print("kept", work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    if checks.failed:
        print("%d check(s) failed" % checks.failed)
        return 1
    if checks.skipped:
        print("all checks run passed; SKIPPED: %s" % "; ".join(checks.skipped))
        return SKIPPED
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
