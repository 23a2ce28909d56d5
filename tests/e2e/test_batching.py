"""ModelInfer batching end to end (docs/serving.md): concurrent requests of one length
bucket are merged into one forward (flashtick_batch_size observes a batch > 1)
and every answer equals the same request sent alone; while a long request holds
the worker, a request whose deadline passes in the queue and one the client
cancels are dropped before compute, counted DEADLINE_EXCEEDED / CANCELLED, and
their steps never reach flashtick_ticks_total."""
import concurrent.futures
import re
import threading
import time
import unittest
import urllib.request

import grpc
import numpy as np
from tritonclient.grpc import service_pb2 as pb
from tritonclient.grpc import service_pb2_grpc as pb_grpc

import e2e_env

TIMEOUT = 600
TOL = 1e-6  # CPU fp32: padding changes no row of a causal model (bit-equal in practice)
# Lengths in one quarter-octave bucket, [861, 1024): floor(4·log2 N) = 39.
LENGTHS = [870, 900, 930, 960, 990, 1000, 1010, 1020, 880, 910, 940, 970]


def scrape():
    url = "http://127.0.0.1:%d/metrics" % e2e_env.server.metrics_port
    return urllib.request.urlopen(url, timeout=30).read().decode()


def sample(text, name, **labels):
    """Sum of the samples of `name` whose labels include `labels` (0 if none)."""
    total = 0.0
    for m in re.finditer(r"^%s(?:\{([^}]*)\})? (\S+)$" % re.escape(name), text, re.M):
        have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            total += float(m.group(2))
    return total


class BatchingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.channel = grpc.insecure_channel(
            e2e_env.server.address,
            options=[("grpc.max_send_message_length", -1),
                     ("grpc.max_receive_message_length", -1)])
        cls.stub = pb_grpc.GRPCInferenceServiceStub(cls.channel)
        cls.model = e2e_env.model_name

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()

    def request(self, x):
        req = pb.ModelInferRequest(model_name=self.model)
        tensor = req.inputs.add(name="ticks", datatype="FP32")
        tensor.shape.extend(list(x.shape))
        req.raw_input_contents.append(np.ascontiguousarray(x, np.float32).tobytes())
        return req

    def infer(self, x, timeout=TIMEOUT):
        response = self.stub.ModelInfer(self.request(x), timeout=timeout)
        shape = list(response.outputs[0].shape)
        return np.frombuffer(response.raw_output_contents[0], np.float32).reshape(shape)

    def day(self, steps, seed):
        rng = np.random.default_rng(seed)
        return rng.normal(size=(1, steps, e2e_env.features)).astype(np.float32)

    def test_concurrent_requests_are_batched_and_equal_unbatched(self):
        days = [self.day(n, 40 + i) for i, n in enumerate(LENGTHS)]
        alone = [self.infer(x) for x in days]  # one at a time: batches of one
        before = scrape()
        with concurrent.futures.ThreadPoolExecutor(len(days)) as pool:
            together = list(pool.map(self.infer, days))
        after = scrape()
        for i, (a, b) in enumerate(zip(alone, together)):
            self.assertEqual(a.shape, (1, LENGTHS[i], 3))
            np.testing.assert_allclose(b, a, rtol=0, atol=TOL, err_msg="request %d" % i)

        def delta(name, **labels):
            return sample(after, name, **labels) - sample(before, name, **labels)

        batches = delta("flashtick_batch_size_count", model=self.model)
        singles = delta("flashtick_batch_size_bucket", model=self.model, le="1")
        merged = delta("flashtick_batch_size_sum", model=self.model)
        self.assertEqual(merged, len(days), "every request served by exactly one batch")
        self.assertLess(batches, len(days), "no two concurrent requests shared a forward")
        self.assertLess(singles, batches, "no batch larger than 1 in the histogram")
        for family in ("flashtick_queue_duration_seconds_count",
                       "flashtick_compute_duration_seconds_count"):
            self.assertEqual(delta(family, model=self.model, method="ModelInfer"), len(days),
                             family)

    def test_expired_and_cancelled_requests_are_dropped_before_compute(self):
        long_steps = 9000  # holds the only worker for seconds on the e2e model (≈ 3 s, 2 cores)
        before = scrape()
        blocker_result = {}

        def blocker():
            blocker_result["probs"] = self.infer(self.day(long_steps, 7))

        thread = threading.Thread(target=blocker)
        thread.start()
        time.sleep(0.3)  # the long request is on the worker now
        cancelled = self.stub.ModelInfer.future(self.request(self.day(50, 8)), timeout=TIMEOUT)
        with self.assertRaises(grpc.RpcError) as expired:
            self.infer(self.day(60, 9), timeout=0.3)
        self.assertEqual(expired.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        cancelled.cancel()
        thread.join(TIMEOUT)
        self.assertIn("probs", blocker_result, "the long request failed")
        self.assertFalse(thread.is_alive())
        self.assertTrue(cancelled.cancelled())

        # The dropped requests are answered when the worker pops them, after the blocker.
        def delta(text, name, **labels):
            return sample(text, name, **labels) - sample(before, name, **labels)

        deadline = time.monotonic() + 60
        while True:
            after = scrape()
            codes = {code: delta(after, "flashtick_requests_total", model=self.model,
                                 method="ModelInfer", code=code)
                     for code in ("OK", "DEADLINE_EXCEEDED", "CANCELLED")}
            if codes["DEADLINE_EXCEEDED"] >= 1 and codes["CANCELLED"] >= 1:
                break
            if time.monotonic() > deadline:
                self.fail("dropped requests not counted: %s" % codes)
            time.sleep(0.2)
        self.assertEqual(codes, {"OK": 1, "DEADLINE_EXCEEDED": 1, "CANCELLED": 1})
        # Only the long request was computed: not one step of the dropped two.
        self.assertEqual(delta(after, "flashtick_ticks_total", model=self.model), long_steps)


if __name__ == "__main__":
    unittest.main()
