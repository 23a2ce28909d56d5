"""Tick-stream limits through the real binary's flags (docs/serving.md): a second
flashtickd started with --max-streams-per-client 1 and --stream-idle-timeout-seconds 1
refuses this client's second stream with RESOURCE_EXHAUSTED naming the flag, ends
the idle first one with DEADLINE_EXCEEDED, counts both in /metrics, and takes a new
stream once the slot is free. (The in-process tests in tests/security/ cover the
limits in depth; this one proves the flags reach them.)"""
import os
import queue
import time
import unittest
import urllib.request

import grpc

import e2e_env
from e2e_server import ServerProcess
from flashtickd_client import queued, tick_stream

TIMEOUT = 60


class StreamLimitsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        workdir = os.path.join(e2e_env.workdir, "stream_limits")
        os.makedirs(workdir, exist_ok=True)
        cls.server = ServerProcess(e2e_env.server.flashtickd, e2e_env.server.model_repository,
                                   workdir, ["--threads", "1", "--max-streams-per-client", "1",
                                             "--stream-idle-timeout-seconds", "1",
                                             "--shutdown-grace-seconds", "5"])
        cls.server.start(timeout_s=120)
        cls.channel = grpc.insecure_channel(cls.server.address)
        cls.Req, cls.call = tick_stream(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        code = cls.server.stop(timeout_s=60)
        cls.server.kill()
        assert code == 0, "flashtickd with stream limits did not stop cleanly:\n" + cls.server.log()

    def open_stream(self):
        """(outbox, responses) of a stream whose open message is already sent."""
        outbox = queue.Queue()
        req = self.Req()
        req.open.model_name = e2e_env.model_name
        req.open.instrument = "SYNTH"
        req.open.date = "2026-01-02"
        outbox.put(req)
        return outbox, self.call(queued(outbox), timeout=TIMEOUT)

    def metrics(self):
        url = "http://127.0.0.1:%d/metrics" % self.server.metrics_port
        return urllib.request.urlopen(url, timeout=30).read().decode()

    def test_client_limit_idle_timeout_and_metrics(self):
        outbox, first = self.open_stream()
        opened = next(first).opened
        self.assertEqual(opened.client, "peer:127.0.0.1")
        self.assertEqual(opened.idle_timeout_seconds, 1.0)
        self.assertGreater(opened.reserved_bytes, 0)

        outbox2, second = self.open_stream()
        with self.assertRaises(grpc.RpcError) as refused:
            next(second)
        self.assertEqual(refused.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertIn("--max-streams-per-client 1", refused.exception.details())
        outbox2.put(None)

        start = time.monotonic()
        with self.assertRaises(grpc.RpcError) as idle:
            next(first)  # the client sends nothing more: the server ends the stream
        self.assertEqual(idle.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertIn("--stream-idle-timeout-seconds", idle.exception.details())
        self.assertLess(time.monotonic() - start, 10)
        outbox.put(None)

        # The client sees DEADLINE_EXCEEDED when the server finishes the call; the server
        # counts the idle close when its reactor is done with the stream, a moment later
        # (the clean-clone CI run of 2026-12-02 scraped in between, under load).
        deadline = time.monotonic() + 10
        text = self.metrics()
        while "flashtick_stream_idle_closed_total 1" not in text and time.monotonic() < deadline:
            time.sleep(0.05)
            text = self.metrics()
        self.assertIn('flashtick_stream_refusals_total{reason="client_limit"} 1', text)
        self.assertIn("flashtick_stream_idle_closed_total 1", text)
        self.assertIn("flashtick_stream_memory_limit_bytes %d" % (8192 << 20), text)

        for _ in range(50):  # the slot frees once the server's reactor is done
            outbox3, third = self.open_stream()
            try:
                self.assertTrue(next(third).HasField("opened"))
                outbox3.put(None)
                break
            except grpc.RpcError as e:
                outbox3.put(None)
                self.assertEqual(e.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
                time.sleep(0.05)
        else:
            self.fail("the freed slot was never reusable")


if __name__ == "__main__":
    unittest.main()
