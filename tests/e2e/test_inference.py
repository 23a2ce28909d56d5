"""ModelInfer end to end: our CLI and the real tritonclient get the same
numbers for the same day; last_only, batches, typed fp32_contents and
causality hold over the wire; every bad request gets its specific status code,
leaves the server up and changes nothing; /metrics counts it all; and a full
23,400-step day is predicted over gRPC while the server keeps answering."""
import os
import re
import threading
import time
import unittest
import urllib.request

import grpc
import numpy as np
import tritonclient.grpc as triton
from tritonclient.grpc import service_pb2 as pb
from tritonclient.grpc import service_pb2_grpc as pb_grpc

import e2e_env

TIMEOUT = 600
DAY_TIMEOUT = 1200
TOL = 1e-6  # same input, same server: only thread scheduling could differ


def load_csv(path):
    return np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64, ndmin=2)


class InferenceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.client = triton.InferenceServerClient(e2e_env.server.address)
        cls.channel = grpc.insecure_channel(
            e2e_env.server.address,
            options=[("grpc.max_send_message_length", -1),
                     ("grpc.max_receive_message_length", -1)])
        cls.stub = pb_grpc.GRPCInferenceServiceStub(cls.channel)
        # A 2,000-step synthetic day from our CLI, with the features it sent.
        cls.features_csv = os.path.join(e2e_env.workdir, "day7_features.csv")
        cls.probs_csv = os.path.join(e2e_env.workdir, "day7_probs.csv")
        cls.cli_out = e2e_env.cli("predict", "--synthetic-day", "7", "--steps", "2000",
                                  "--save-features", cls.features_csv, "--output", cls.probs_csv)
        assert cls.cli_out.returncode == 0, cls.cli_out.stderr
        cls.day = load_csv(cls.features_csv).astype(np.float32)  # %.9g round-trips float32

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.channel.close()

    def infer(self, x, **parameters):
        inp = triton.InferInput("ticks", list(x.shape), "FP32")
        inp.set_data_from_numpy(np.ascontiguousarray(x, dtype=np.float32))
        result = self.client.infer(e2e_env.model_name, [inp],
                                   outputs=[triton.InferRequestedOutput("probs")],
                                   parameters=parameters or None, client_timeout=TIMEOUT)
        return result.as_numpy("probs"), result.get_response()

    def request(self, x=None, shape=None, datatype="FP32", raw=None, model=None, version=""):
        """A ModelInferRequest built by hand with tritonclient's own messages."""
        x = self.day[None, :50] if x is None else x
        req = pb.ModelInferRequest(model_name=model or e2e_env.model_name, model_version=version)
        tensor = req.inputs.add(name="ticks", datatype=datatype)
        tensor.shape.extend(list(x.shape) if shape is None else shape)
        req.raw_input_contents.append(np.ascontiguousarray(x, np.float32).tobytes()
                                      if raw is None else raw)
        return req

    # ---- same numbers --------------------------------------------------------

    def test_cli_and_tritonclient_give_the_same_numbers(self):
        cli_probs = load_csv(self.probs_csv)
        self.assertEqual(cli_probs.shape, (2000, 4))
        np.testing.assert_array_equal(cli_probs[:, 0], np.arange(2000))
        probs, response = self.infer(self.day[None])
        self.assertEqual(probs.shape, (1, 2000, 3))
        np.testing.assert_allclose(probs[0], cli_probs[:, 1:], rtol=0, atol=TOL)
        np.testing.assert_allclose(probs.sum(-1), 1.0, atol=1e-5)
        kernel_path = response.parameters["kernel_path"].string_param
        self.assertTrue(kernel_path)
        self.assertEqual(response.parameters["device"].string_param, "cpu")
        # The forward time in a type upstream KServe v2 clients know (int64_param),
        # matching Triton's double_param to the microsecond.
        micros = response.parameters["compute_microseconds"]
        self.assertEqual(micros.WhichOneof("parameter_choice"), "int64_param")
        self.assertGreater(micros.int64_param, 0)
        self.assertAlmostEqual(micros.int64_param * 1e-6,
                               response.parameters["compute_seconds"].double_param, delta=1e-6)
        self.assertIn("2000 sent, 2000 returned", self.cli_out.stdout)
        self.assertIn("kernel path      %s on cpu" % kernel_path, self.cli_out.stdout)
        last = re.search(r"p\(down\)=([\d.]+)\s+p\(flat\)=([\d.]+)\s+p\(up\)=([\d.]+)",
                         self.cli_out.stdout)
        np.testing.assert_allclose([float(v) for v in last.groups()], probs[0, -1], atol=1e-4)

    def test_last_only_is_the_last_row(self):
        full, _ = self.infer(self.day[None, :300])
        last, _ = self.infer(self.day[None, :300], last_only=True)
        self.assertEqual(last.shape, (1, 1, 3))
        np.testing.assert_allclose(last[0, 0], full[0, -1], atol=1e-5)

    def test_batch_rows_match_single_rows(self):
        a, b = self.day[:400], self.day[400:800]
        both, _ = self.infer(np.stack([a, b]))
        only_a, _ = self.infer(a[None])
        only_b, _ = self.infer(b[None])
        np.testing.assert_allclose(both[0], only_a[0], atol=1e-5)
        np.testing.assert_allclose(both[1], only_b[0], atol=1e-5)

    def test_typed_fp32_contents_answer_in_kind(self):
        x = self.day[None, :64]
        req = pb.ModelInferRequest(model_name=e2e_env.model_name)
        tensor = req.inputs.add(name="ticks", datatype="FP32")
        tensor.shape.extend(x.shape)
        tensor.contents.fp32_contents.extend(x.ravel().tolist())
        reply = self.stub.ModelInfer(req, timeout=TIMEOUT)
        self.assertEqual(len(reply.raw_output_contents), 0)
        typed = np.array(reply.outputs[0].contents.fp32_contents, np.float32).reshape(1, 64, 3)
        raw, _ = self.infer(x)
        np.testing.assert_allclose(typed, raw, atol=TOL)

    def test_predictions_are_causal(self):
        base, _ = self.infer(self.day[None, :600])
        changed = self.day[None, :600].copy()
        changed[0, 300:, 0] += 50.0  # a different future from step 300 on
        other, _ = self.infer(changed)
        np.testing.assert_allclose(other[0, :300], base[0, :300], atol=1e-5)
        self.assertGreater(np.abs(other[0, 300:] - base[0, 300:]).max(), 1e-4)

    # ---- bad requests ---------------------------------------------------------

    def bad_cases(self):
        x = self.day[None, :50]
        nan = x.copy()
        nan[0, 10, 2] = np.nan
        inf = x.copy()
        inf[0, 20, 1] = np.inf
        C = grpc.StatusCode
        return [
            ("rank 2", self.request(x[0]), C.INVALID_ARGUMENT, "expected rank 3"),
            ("wrong F", self.request(x[:, :, :5]), C.INVALID_ARGUMENT, "F = 5"),
            ("FP64", self.request(datatype="FP64", raw=x.astype(np.float64).tobytes()),
             C.INVALID_ARGUMENT, "datatype 'FP64'"),
            ("NaN", self.request(nan), C.INVALID_ARGUMENT, "(NaN) at [0, 10, 2]"),
            ("Inf", self.request(inf), C.INVALID_ARGUMENT, "(Inf) at [0, 20, 1]"),
            ("unknown model", self.request(model="no-such-model"), C.NOT_FOUND, "unknown model"),
            ("unknown version", self.request(version="9"), C.NOT_FOUND, "has no version 9"),
            ("bad version", self.request(version="latest"), C.INVALID_ARGUMENT,
             "not a version number"),
            ("N over limit", self.request(np.zeros((1, e2e_env.max_seq_len + 1, 6), np.float32)),
             C.RESOURCE_EXHAUSTED, "exceeds this server's limit of %d" % e2e_env.max_seq_len),
            ("empty", self.request(np.zeros((1, 0, 6), np.float32)), C.INVALID_ARGUMENT,
             "is empty"),
            ("byte size", self.request(raw=x.tobytes()[:-4]), C.INVALID_ARGUMENT,
             "byte size mismatch"),
            ("shape lies", self.request(shape=[1, 51, 6]), C.INVALID_ARGUMENT,
             "byte size mismatch"),
        ]

    def test_bad_requests_get_specific_codes_and_change_nothing(self):
        before, _ = self.infer(self.day[None, :50])
        for name, req, code, fragment in self.bad_cases():
            with self.subTest(name):
                with self.assertRaises(grpc.RpcError) as err:
                    self.stub.ModelInfer(req, timeout=TIMEOUT)
                self.assertEqual(err.exception.code(), code, err.exception.details())
                self.assertIn(fragment, err.exception.details())
        # tritonclient's own path for one bad case, and a wrong input name.
        wrong = triton.InferInput("INPUT0", [1, 5, 6], "FP32")
        wrong.set_data_from_numpy(self.day[None, :5])
        with self.assertRaises(triton.InferenceServerException) as err:
            self.client.infer(e2e_env.model_name, [wrong])
        self.assertEqual(err.exception.status(), "StatusCode.INVALID_ARGUMENT")
        self.assertTrue(self.client.is_server_live())
        after, _ = self.infer(self.day[None, :50])
        np.testing.assert_array_equal(after, before)

    def test_oversized_message_is_resource_exhausted_and_server_keeps_serving(self):
        # One byte over flashtickd's --max-message-bytes (64 MiB by default): gRPC
        # refuses the message before our code sees it; the next request is served.
        limit = 64 << 20
        steps = limit // (6 * 4) + 1
        req = self.request(shape=[1, steps, 6], raw=bytes(steps * 6 * 4))
        with self.assertRaises(grpc.RpcError) as err:
            self.stub.ModelInfer(req, timeout=TIMEOUT)
        self.assertEqual(err.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED,
                         err.exception.details())
        self.assertIn("larger than max", err.exception.details())
        probs, _ = self.infer(self.day[None, :20])
        self.assertEqual(probs.shape, (1, 20, 3))

    def test_cli_unknown_model_says_what_exists(self):
        out = e2e_env.cli("predict", "--synthetic-day", "1", "--steps", "10", "--model", "nope")
        self.assertEqual(out.returncode, 1)
        self.assertIn("NOT_FOUND", out.stderr)
        self.assertIn(e2e_env.model_name, out.stderr)

    def test_cli_predicts_raw_tick_csv(self):
        path = os.path.join(e2e_env.workdir, "ticks.csv")
        rng = np.random.default_rng(0)
        with open(path, "w") as f:
            f.write("timestamp,bid,ask,flow\n")
            mid = 100.0
            for t in np.sort(rng.uniform(0, 600, 900)):
                mid *= np.exp(rng.normal(0, 1e-4))
                f.write("%.3f,%.5f,%.5f,%d\n" % (t, mid - 0.01, mid + 0.01, rng.integers(-5, 6)))
        out = e2e_env.cli("predict", "--csv", path, "--last-only")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertRegex(out.stdout, r"steps\s+\d+ sent, 1 returned")

    # ---- metrics ---------------------------------------------------------------

    def test_metrics_endpoint_counts_requests(self):
        with self.assertRaises(grpc.RpcError):
            self.stub.ModelInfer(self.request(datatype="INT32"), timeout=TIMEOUT)
        self.infer(self.day[None, :32])
        url = "http://127.0.0.1:%d/metrics" % e2e_env.server.metrics_port
        text = urllib.request.urlopen(url, timeout=30).read().decode()
        model = e2e_env.model_name

        def value(pattern):
            m = re.search(r"^%s (\S+)$" % pattern, text, re.M)
            self.assertIsNotNone(m, pattern)
            return float(m.group(1))

        self.assertGreaterEqual(value(r'flashtick_requests_total\{code="INVALID_ARGUMENT",'
                                      r'method="ModelInfer",model="%s"\}' % model), 1)
        self.assertGreaterEqual(value(r'flashtick_requests_total\{code="OK",'
                                      r'method="ModelInfer",model="%s"\}' % model), 1)
        self.assertGreaterEqual(value(r'flashtick_request_duration_seconds_count\{'
                                      r'method="ModelInfer",model="%s"\}' % model), 2)
        self.assertGreaterEqual(value(r'flashtick_request_sequence_length_bucket\{'
                                      r'model="%s",le="32"\}' % model), 1)
        self.assertGreaterEqual(value(r'flashtick_ticks_total\{model="%s"\}' % model), 32)
        self.assertEqual(value(r'flashtick_model_info\{device="cpu",kernel_path="[^"]+",'
                               r'model="%s",version="1"\}' % model), 1)
        self.assertIn("# HELP flashtick_request_duration_seconds ", text)

    # ---- a whole day ------------------------------------------------------------

    def test_full_day_over_grpc_while_server_stays_responsive(self):
        probe_latencies = []
        stop = threading.Event()

        def probe():
            client = triton.InferenceServerClient(e2e_env.server.address)
            while not stop.is_set():
                t0 = time.monotonic()
                client.is_server_live(client_timeout=30)
                probe_latencies.append(time.monotonic() - t0)
                time.sleep(0.2)
            client.close()

        prober = threading.Thread(target=probe)
        prober.start()
        try:
            t0 = time.monotonic()
            # A day on 2 shared CPU cores takes minutes (374 s for the default
            # C=64 model under load 16; this C=32 model is cheaper): a long deadline.
            out = e2e_env.cli("--timeout", str(DAY_TIMEOUT), "predict", "--synthetic-day", "1",
                              timeout=DAY_TIMEOUT + 60)
            wall = time.monotonic() - t0
        finally:
            stop.set()
            prober.join(timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("23400 sent, 23400 returned", out.stdout)
        print("\n[figure] 23,400-step day, ModelInfer via CLI on CPU: %.2f s wall\n%s"
              % (wall, out.stdout), flush=True)
        self.assertTrue(probe_latencies)
        self.assertLess(max(probe_latencies), 5.0,
                        "ServerLive stalled while a day was computing")


if __name__ == "__main__":
    unittest.main()
