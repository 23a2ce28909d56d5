"""A real Prometheus server (Debian's `prometheus`, installed by scripts/setup.sh)
scrapes the e2e flashtickd every second; the test reads flashtickd's series back
through Prometheus's HTTP API and sees them move after requests, and
`promtool check metrics` lints flashtickd's exposition (names, types, help).
The requirement: "a real Prometheus server started by a test, scraping flashtickd, and
queried through its HTTP API to see the metrics move after requests"."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

import numpy as np
import tritonclient.grpc as triton

import e2e_env

WAIT_S = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrometheusTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.prometheus = shutil.which("prometheus")
        cls.promtool = shutil.which("promtool")
        # Not a skip: scripts/setup.sh installs both, so their absence is a setup bug.
        assert cls.prometheus and cls.promtool, "prometheus/promtool not on PATH (scripts/setup.sh)"
        cls.dir = tempfile.mkdtemp(prefix="flashtick_prom_", dir=e2e_env.workdir)
        config = os.path.join(cls.dir, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: flashtickd\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % e2e_env.server.metrics_port)
        cls.web = "127.0.0.1:%d" % free_port()
        cls.log = open(os.path.join(cls.dir, "prometheus.log"), "w")
        cls.proc = subprocess.Popen(
            [cls.prometheus, "--config.file", config, "--storage.tsdb.path",
             os.path.join(cls.dir, "data"), "--web.listen-address", cls.web,
             "--storage.tsdb.retention.time", "1h"],
            stdout=cls.log, stderr=subprocess.STDOUT)
        deadline = time.time() + WAIT_S
        while time.time() < deadline:
            try:
                if urllib.request.urlopen("http://%s/-/ready" % cls.web, timeout=2).status == 200:
                    break
            except OSError:
                time.sleep(0.2)
        else:
            raise RuntimeError("prometheus not ready in %d s; log: %s" % (WAIT_S, cls.log.name))
        cls.client = triton.InferenceServerClient(e2e_env.server.address)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.proc.terminate()
        cls.proc.wait(timeout=30)
        cls.log.close()

    def query(self, expr):
        url = "http://%s/api/v1/query?%s" % (self.web, urllib.parse.urlencode({"query": expr}))
        body = json.load(urllib.request.urlopen(url, timeout=10))
        self.assertEqual(body["status"], "success", body)
        result = body["data"]["result"]
        return float(result[0]["value"][1]) if result else None

    def wait_for(self, expr, ok, what):
        deadline, last = time.time() + WAIT_S, None
        while time.time() < deadline:
            last = self.query(expr)
            if last is not None and ok(last):
                return last
            time.sleep(0.5)
        self.fail("%s: `%s` was %s after %d s" % (what, expr, last, WAIT_S))

    def infer(self, steps):
        x = np.random.default_rng(steps).normal(size=(1, steps, e2e_env.features)).astype(np.float32)
        inp = triton.InferInput("ticks", list(x.shape), "FP32")
        inp.set_data_from_numpy(x)
        self.client.infer(e2e_env.model_name, [inp], client_timeout=600)

    def test_prometheus_scrapes_flashtickd_and_sees_requests(self):
        self.wait_for('up{job="flashtickd"}', lambda v: v == 1, "flashtickd is not up in Prometheus")
        ok = 'sum(flashtick_requests_total{method="ModelInfer",code="OK",model="%s"})' % e2e_env.model_name
        # The series may not exist before the first request: wait for one scrape that has it.
        self.infer(16)
        before = self.wait_for(ok, lambda v: v >= 1, "no ModelInfer counted")
        for steps in (32, 64, 128):
            self.infer(steps)
        self.wait_for(ok, lambda v: v >= before + 3, "three more ModelInfer not counted")
        # The latency and sequence-length histograms aggregate as histograms should.
        count = 'sum(flashtick_request_duration_seconds_count{method="ModelInfer"})'
        self.wait_for(count, lambda v: v >= before + 3, "latency histogram count did not move")
        p99 = self.wait_for(
            'histogram_quantile(0.99, sum by (le) (flashtick_request_duration_seconds_bucket'
            '{method="ModelInfer"}))', lambda v: v > 0, "no p99 latency")
        self.assertLess(p99, 600)
        seq = self.wait_for('sum(flashtick_request_sequence_length_count)', lambda v: v >= 4,
                            "sequence-length histogram did not move")
        self.assertGreaterEqual(seq, 4)

    def test_memory_and_process_metrics(self):
        # Backend memory at scrape time: the model's weights at least, within capacity.
        used = self.wait_for('flashtick_gpu_memory_used_bytes', lambda v: v > 0,
                             "backend memory used not exported")
        total = self.wait_for('flashtick_gpu_memory_total_bytes', lambda v: v > 0,
                              "backend memory total not exported")
        self.assertLess(used, total)
        # Peak memory per request: one observation per ModelInfer, above the weights
        # alone once a forward has allocated activations.
        self.infer(256)
        peaks = 'sum(flashtick_request_gpu_peak_bytes_count{method="ModelInfer"})'
        self.wait_for(peaks, lambda v: v >= 1, "per-request peak memory not observed")
        mean_peak = self.wait_for(
            'sum(flashtick_request_gpu_peak_bytes_sum{method="ModelInfer"}) / ' + peaks,
            lambda v: v > 0, "per-request peak memory is zero")
        self.assertLess(mean_peak, total)
        # The standard process metrics, as every Prometheus client library names them.
        self.wait_for('process_resident_memory_bytes', lambda v: v > 1 << 20, "no resident memory")
        self.wait_for('process_open_fds', lambda v: 3 <= v, "no open fds")
        started = self.wait_for('process_start_time_seconds', lambda v: v > 0, "no start time")
        self.assertLess(abs(started - time.time()), 24 * 3600, "start time is not recent")
        self.assertLessEqual(started, time.time() + 5)
        self.wait_for('process_cpu_seconds_total', lambda v: v > 0, "no CPU time")

    def test_promtool_accepts_the_exposition(self):
        self.infer(8)  # every family present, not only the zero-initialised ones
        url = "http://127.0.0.1:%d/metrics" % e2e_env.server.metrics_port
        text = urllib.request.urlopen(url, timeout=30).read()
        out = subprocess.run([self.promtool, "check", "metrics"], input=text,
                             capture_output=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stdout.decode() + out.stderr.decode())


if __name__ == "__main__":
    unittest.main()
