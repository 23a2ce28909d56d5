"""Shared state of one end-to-end run, filled in by run_e2e.py before the test
modules run: the running server, the binaries, a scratch directory and the
served model's name. Test modules read it; only run_e2e.py writes it."""
server = None          # e2e_server.ServerProcess
flashtick = None       # path of the flashtick CLI
workdir = None         # scratch directory, removed after the run
model_name = None
max_seq_len = None     # the --max-seq-len flashtickd runs with
features = 6


def cli(*args, timeout=600):
    """Runs `flashtick --server ADDR ARGS...`; returns CompletedProcess. Global
    flags (e.g. --timeout) may lead ARGS."""
    import subprocess
    return subprocess.run([flashtick, "--server", server.address] + list(args),
                          capture_output=True, text=True, timeout=timeout)
