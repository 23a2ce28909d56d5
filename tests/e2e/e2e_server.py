"""flashtickd as a child process for the end-to-end tests.

Starts flashtickd on loopback with port 0 (the kernel picks a free port, so
parallel CI jobs never collide), waits for its "flashtickd ready grpc=H:P
metrics=P" log line with a bounded timeout, and always stops it: SIGTERM first
(graceful shutdown is itself checked), SIGKILL if it does not exit in time.
The log goes to a file, never a pipe, so a chatty server cannot block.
"""
import os
import re
import signal
import subprocess
import time

READY_RE = re.compile(r"flashtickd ready grpc=(\S+):(\d+) metrics=(-?\d+)")


class ServerProcess:
    def __init__(self, flashtickd, model_repository, workdir, extra_args=()):
        self.flashtickd = flashtickd
        self.model_repository = model_repository
        self.log_path = os.path.join(workdir, "flashtickd.log")
        self.extra_args = list(extra_args)
        self.proc = None
        self.grpc_port = None
        self.metrics_port = None

    @property
    def address(self):
        return "127.0.0.1:%d" % self.grpc_port

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def start(self, timeout_s=120):
        cmd = [self.flashtickd, "--listen", "127.0.0.1:0", "--metrics-port", "0",
               "--model-repository", self.model_repository, "--device", "cpu"] + self.extra_args
        self._log_file = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self._log_file, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            match = READY_RE.search(self.log())
            if match:
                self.grpc_port = int(match.group(2))
                self.metrics_port = int(match.group(3))
                return
            if self.proc.poll() is not None:
                raise RuntimeError("flashtickd exited with %s before it was ready:\n%s"
                                   % (self.proc.returncode, self.log()))
            time.sleep(0.1)
        self.kill()
        raise RuntimeError("flashtickd not ready after %d s:\n%s" % (timeout_s, self.log()))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout_s=60):
        """SIGTERM, wait; returns the exit code (SIGKILL and None on timeout)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.kill()
                return None
        self._log_file.close()
        return self.proc.returncode

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
