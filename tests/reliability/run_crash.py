"""Crash safety of the experiment store and sweeps (docs/reliability.md): flashtickd is killed
with SIGKILL (no chance to save anything) and restarted on the same --experiment-dir.

  1. A finishes (one arm); its report and files are kept as they are on disk.
  2. B (two arms, N = 8 and 32) runs; once the first arm is done and the second has a
     checkpoint past step 4, kill -9 "during the sweep". Restart: B resumes by itself; the second
     arm continues from its checkpoint (see 3).
  3. Still in B, watched with inotify: kill -9 the moment the restarted arm creates the
     temporary file of its next checkpoint (params-<step>.safetensors.tmp.*), i.e.
     during a checkpoint write (the log says whether the kill landed before the
     rename). That step shows where training resumed: at or past the checkpoint's
     step (starting over would write an earlier one first). Restart: B finishes SUCCEEDED; its first arm's results are exactly
     those it had before the first kill (not retrained), and A's report and files are
     byte-identical.
  4. C trains; kill -9 once it has a checkpoint; one byte of the checkpoint's weights
     is flipped (a torn or rotted file). Restart: the corrupted file is never loaded:
     the arm stops with a DataLoss error that names the file and its CRC-32 mismatch.
  5. The store: SQLite in WAL mode, `PRAGMA integrity_check` ok, every experiment's
     state as expected after four kills.
Every wait is bounded; servers are killed and the directory removed whatever happens.

usage: run_crash.py --flashtickd BIN --make-model BIN
"""
import argparse
import glob
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_server import ServerProcess  # noqa: E402
from flashtickd_client import Checks, ExperimentsClient, wait_for  # noqa: E402
from inotify_watch import Watch  # noqa: E402

MODEL = "crash"


def sweep(name, contexts, epochs=3):
    return json.dumps({
        "name": name, "contexts": contexts,
        "model": {"width": 8, "layers": 1, "heads": 2, "kv_heads": 2, "mlp_ratio": 2},
        "optimizer": {"learning_rate": 0.003, "warmup_steps": 2, "tokens_per_step": 256},
        "training": {"first_fold_epochs": epochs, "epochs_per_fold": 1,
                     "checkpoint_every_steps": 4},
        "data": {"synthetic": {"generator": "planted_cue", "seed": 5, "days": 10,
                               "steps_per_day": 256, "lags": [6, 24],
                               "events_per_lag_per_day": 6, "drift_bps": 1.0}},
        "labels": {"horizon": 2},
        "walk_forward": {"train_days": 3, "test_days": 1},
        "gates": {"pbo_blocks": 6},
        "precision_check": {"enabled": False},
        "device": "cpu", "cpu_threads": 1})


def arm_dirs(exp):
    return sorted(glob.glob(os.path.join(exp.directory, "arms", "*")))


def arm_state(arm_dir):
    try:
        with open(os.path.join(arm_dir, "state.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def tree_digest(root):
    """sha256 of every file under root (name and bytes)."""
    h = hashlib.sha256()
    for path in sorted(glob.glob(os.path.join(root, "**"), recursive=True)):
        if os.path.isfile(path):
            h.update(os.path.relpath(path, root).encode())
            with open(path, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def report_digest(rep):
    h = hashlib.sha256(rep.content.encode())
    for f in sorted(rep.files, key=lambda f: f.name):
        h.update(f.name.encode())
        h.update(f.content)
    return h.hexdigest()


def results_of(state):
    """The parts of an arm's state that training and testing produce."""
    return {k: state.get(k) for k in ("state", "step", "total_steps", "days", "loss_curve",
                                      "folds") if k in state}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--flashtickd", required=True)
    parser.add_argument("--make-model", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="flashtick_crash_")
    expdir = os.path.join(workdir, "experiments")
    models = os.path.join(workdir, "models")
    checks = Checks()
    server = None
    client = None
    t_start = time.monotonic()
    runs = [0]

    def start():
        nonlocal server, client
        runs[0] += 1
        d = os.path.join(workdir, "run%d" % runs[0])
        os.makedirs(d)
        server = ServerProcess(args.flashtickd, models, d,
                               ["--threads", "1", "--experiment-dir", expdir,
                                "--experiment-workers", "1", "--report-python", ""])
        t0 = time.monotonic()
        server.start(timeout_s=120)
        client = ExperimentsClient(server.address)
        return time.monotonic() - t0

    def kill9():
        server.proc.kill()  # SIGKILL first: every millisecond lets the server write on
        server.kill()
        client.close()
        return server.proc.returncode

    def get(exp_id):
        return client.Get(exp_id)

    try:
        subprocess.run([args.make_model, "--out", models, "--name", MODEL, "--version", "1",
                        "--seed", "3", "--width", "8", "--layers", "1", "--heads", "2",
                        "--max-context", "64"], check=True, timeout=300, stdout=subprocess.DEVNULL)
        start()
        # 1. A finishes.
        a = client.Submit(sweep("crash-a", [8], epochs=2))
        b = client.Submit(sweep("crash-b", [8, 32]))
        wait_for(lambda: client.State(get(a.id)) == "SUCCEEDED", 120, "A to succeed")
        rep_a = report_digest(client.Report(a.id))
        disk_a = tree_digest(get(a.id).directory)
        print("A succeeded at %.1f s" % (time.monotonic() - t_start), flush=True)

        # 2. kill -9 during B, first arm done, second arm checkpointed.
        b = get(b.id)

        def first_done_second_ckpt():
            arms = arm_dirs(get(b.id))
            if len(arms) < 2:
                return None
            s = [arm_state(d) for d in arms]
            done = [x for x in s if x and x.get("state") == "done"]
            ckpt = [x for x in s if x and x.get("state") == "running" and x.get("step", 0) > 0]
            if not (done and ckpt):
                return None
            # A checkpoint past the first periodic one (step 4), so that resuming from it
            # and starting over are told apart by the next checkpoint's step.
            d = [d for d in arms if arm_state(d) and arm_state(d)["arm_id"] == ckpt[0]["arm_id"]][0]
            m = sorted(glob.glob(os.path.join(d, "ckpt-f*", "manifest.json")))
            try:
                with open(m[-1]) as f:
                    return (done[0], ckpt[0]) if json.load(f)["step"] > 4 else None
            except (OSError, ValueError, IndexError, KeyError):
                return None

        done_arm, running_arm = wait_for(first_done_second_ckpt, 120,
                                         "B's first arm done and the second checkpointed")
        code = kill9()
        print("kill -9 during the sweep at %.1f s (exit %s): arm %s done, arm %s at step %d of %d"
              % (time.monotonic() - t_start, code, done_arm["arm_id"], running_arm["arm_id"],
                 running_arm["step"], running_arm["total_steps"]), flush=True)
        done_before = results_of(done_arm)
        running_dir = [d for d in arm_dirs(b) if arm_state(d)["arm_id"] == running_arm["arm_id"]][0]

        # Every file the restarted server creates in the arm's directory, seen as it happens.
        ckpt_manifest = sorted(glob.glob(os.path.join(running_dir, "ckpt-f*", "manifest.json")))[-1]
        ckpt_dir = os.path.dirname(ckpt_manifest)
        with open(ckpt_manifest) as f:
            ckpt_step = json.load(f)["step"]
        watch = Watch()
        watch.add(running_dir)
        for d in glob.glob(os.path.join(running_dir, "ckpt-f*")):
            watch.add(d)
        restart_s = start()
        print("restart: ready in %.2f s; the checkpoint on disk is %s at trainer step %d"
              % (restart_s, os.path.basename(ckpt_dir), ckpt_step), flush=True)
        checks.check(client.State(get(b.id)) in ("RUNNING", "SUCCEEDED"),
                     "B resumed by itself after kill -9")

        # 3. The first checkpoint the restarted arm writes: its step shows where training
        # resumed, and the kill lands while it is being written.
        first_tmp = None
        deadline = time.monotonic() + 60
        while first_tmp is None and time.monotonic() < deadline and server.alive():
            for kind, path in watch.read(0.5):
                name = os.path.basename(path)
                if kind == "create" and ".tmp." in name and name.startswith("params-"):
                    kill9()
                    first_tmp = path
                    break
        watch.close()
        checks.check(first_tmp is not None, "the restarted arm wrote a checkpoint (%s)" % first_tmp)
        if first_tmp is not None:
            new_step = int(os.path.basename(first_tmp).split("-")[1].split(".")[0])
            new_dir = os.path.dirname(first_tmp)
            print("kill -9 during a checkpoint write at %.1f s: %s being written; after the kill "
                  "it is %s; on disk: %s"
                  % (time.monotonic() - t_start, os.path.relpath(first_tmp, running_dir),
                     "still there (killed mid-write)" if os.path.exists(first_tmp)
                     else "gone (renamed before the kill landed)",
                     sorted(os.listdir(new_dir))), flush=True)
            if new_dir == ckpt_dir:
                # >=: a kill between a fold's last checkpoint and its scores in state.json
                # saves that checkpoint again after the test days are scored.
                checks.check(new_step >= ckpt_step,
                             "the unfinished arm resumed from its checkpoint: its next checkpoint "
                             "is step %d >= %d (starting over writes an earlier step first)"
                             % (new_step, ckpt_step))
            else:
                checks.check(os.path.basename(new_dir) > os.path.basename(ckpt_dir),
                             "the unfinished arm resumed past fold %s (next checkpoint in %s)"
                             % (os.path.basename(ckpt_dir), os.path.basename(new_dir)))
            checks.check("resumed after a restart" in server.log(), "the log says B resumed")
            start()
        b_final = wait_for(lambda: (lambda e: e if client.State(e) in
                                    ("SUCCEEDED", "FAILED", "CANCELLED") else None)(get(b.id)),
                           180, "B to finish")
        checks.check(client.State(b_final) == "SUCCEEDED",
                     "B SUCCEEDED after two kills (%s %s)" % (client.State(b_final), b_final.error))
        states = {arm_state(d)["arm_id"]: arm_state(d) for d in arm_dirs(b_final)}
        checks.check(results_of(states[done_arm["arm_id"]]) == done_before,
                     "B's arm finished before the kills kept its exact results")
        checks.check(states[running_arm["arm_id"]]["state"] == "done",
                     "B's interrupted arm finished")
        checks.check(client.Report(b.id).content != "", "B has a report")
        checks.check(report_digest(client.Report(a.id)) == rep_a,
                     "A's report (GetReport with files) byte-identical after the kills")
        checks.check(tree_digest(get(a.id).directory) == disk_a,
                     "A's directory byte-identical after the kills")

        # 4. a corrupted checkpoint is never loaded.
        c = client.Submit(sweep("crash-c", [32], epochs=4))

        def c_ckpt():
            e = get(c.id)
            for d in arm_dirs(e):
                s = arm_state(d)
                m = glob.glob(os.path.join(d, "ckpt-f*", "manifest.json"))
                if s and s.get("step", 0) > 0 and s.get("state") == "running" and m:
                    return d
            return None

        c_arm = wait_for(c_ckpt, 120, "C to checkpoint")
        kill9()
        manifest = sorted(glob.glob(os.path.join(c_arm, "ckpt-f*", "manifest.json")))[-1]
        with open(manifest) as f:
            params = os.path.join(os.path.dirname(manifest), json.load(f)["files"]["params"]["name"])
        with open(params, "r+b") as f:
            f.seek(os.path.getsize(params) // 2)
            byte = f.read(1)
            f.seek(-1, 1)
            f.write(bytes([byte[0] ^ 0x40]))
        print("kill -9 C with a checkpoint; flipped one byte of %s" % os.path.relpath(params, workdir),
              flush=True)
        start()
        c_final = wait_for(lambda: (lambda e: e if client.State(e) in
                                    ("SUCCEEDED", "FAILED", "CANCELLED") else None)(get(c.id)),
                           120, "C to stop")
        print("C after the restart: %s: %s" % (client.State(c_final), c_final.error), flush=True)
        checks.check(client.State(c_final) == "FAILED" and "corrupted" in c_final.error
                     and os.path.basename(params) in c_final.error,
                     "the corrupted checkpoint was refused with an error naming the file")

        # 5. The store.
        checks.check(server.alive(), "flashtickd serving after four kills")
        code = server.stop(timeout_s=60)
        checks.check(code == 0, "graceful stop at the end (exit %s)" % code)
        db = sqlite3.connect(os.path.join(expdir, "experiments.db"))
        mode = db.execute("PRAGMA journal_mode").fetchone()[0]
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
        db.close()
        checks.check(mode == "wal", "SQLite journal mode %s" % mode)
        checks.check(integrity == "ok", "SQLite integrity_check %s" % integrity)
    except Exception as e:  # noqa: BLE001 - any error is a failure with its reason
        checks.unexpected(e)
    finally:
        checks.kill_server(server)
        if args.keep:
            print("kept " + workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print("crash safety: %d checks failed, %.1f s" % (len(checks.failures),
                                                      time.monotonic() - t_start))
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.exit(main())
