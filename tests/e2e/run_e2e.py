"""End-to-end driver (run by ctest): makes a small model with
flashtick_make_model in a temp dir, starts flashtickd on a free loopback port,
runs the test modules against it (test_protocol, test_inference,
test_tick_stream), then stops the server with SIGTERM and checks that it shut
down gracefully (exit 0, "flashtickd stopped"). The server is killed and the
temp dir removed whatever happens; every wait is bounded.

usage: run_e2e.py --flashtickd BIN --flashtick BIN --make-model BIN
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import e2e_env  # noqa: E402
from e2e_server import ServerProcess  # noqa: E402

MODEL = "flashtick-e2e"
MAX_SEQ_LEN = 23400  # one session of 1-second steps; 23,401 must be refused


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--flashtickd", required=True)
    parser.add_argument("--flashtick", required=True)
    parser.add_argument("--make-model", required=True)
    parser.add_argument("--pattern", default="test_*.py", help="test modules to run")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="flashtick_e2e_")
    server = None
    ok = False
    try:
        models = os.path.join(workdir, "models")
        # A small model (C=32, 2 layers) so a 23,400-step day runs in seconds on 2 cores.
        subprocess.run([args.make_model, "--out", models, "--name", MODEL, "--version", "1",
                        "--seed", "3", "--width", "32", "--layers", "2", "--heads", "2",
                        "--max-context", "32768"],
                       check=True, timeout=300)
        server = ServerProcess(args.flashtickd, models, workdir,
                               ["--max-seq-len", str(MAX_SEQ_LEN), "--threads", "2",
                                "--shutdown-grace-seconds", "20"])
        server.start(timeout_s=120)
        print("flashtickd up at %s, metrics port %d" % (server.address, server.metrics_port),
              flush=True)
        e2e_env.server = server
        e2e_env.flashtick = args.flashtick
        e2e_env.workdir = workdir
        e2e_env.model_name = MODEL
        e2e_env.max_seq_len = MAX_SEQ_LEN

        suite = unittest.defaultTestLoader.discover(HERE, pattern=args.pattern, top_level_dir=HERE)
        result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
        ok = result.wasSuccessful()

        if not server.alive():
            print("FAIL: flashtickd died during the tests:\n" + server.log())
            ok = False
        else:
            code = server.stop(timeout_s=60)
            log = server.log()
            if code != 0 or "flashtickd stopped" not in log:
                print("FAIL: graceful shutdown: exit code %s\n%s" % (code, log[-4000:]))
                ok = False
            else:
                print("graceful shutdown on SIGTERM: exit 0")
    finally:
        if server is not None:
            server.kill()
            if not ok:
                print("---- flashtickd log (tail) ----\n" + server.log()[-6000:])
        shutil.rmtree(workdir, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
