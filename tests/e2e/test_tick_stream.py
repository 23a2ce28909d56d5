"""flashtick.v1.TickStream end to end, with message classes built from the
descriptors the server itself serves over reflection (no generated Python).
The server runs in "incremental" state mode on the CPU (a per-session key/value
cache), and every streamed step must equal ModelInfer's probability at
that step of the whole sequence (causality) and, for raw ticks, the CLI's
prediction from the same ticks."""
import os
import unittest

import grpc
import numpy as np
import tritonclient.grpc as triton
from google.protobuf import descriptor_pool, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase)

import e2e_env

TIMEOUT = 300


class TickStreamTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.channel = grpc.insecure_channel(e2e_env.server.address)
        pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(cls.channel))
        cls.Request = message_factory.GetMessageClass(
            pool.FindMessageTypeByName("flashtick.v1.TickStreamRequest"))
        cls.Response = message_factory.GetMessageClass(
            pool.FindMessageTypeByName("flashtick.v1.TickStreamResponse"))
        cls.call = cls.channel.stream_stream("/flashtick.v1.TickStream/StreamTicks",
                                             request_serializer=cls.Request.SerializeToString,
                                             response_deserializer=cls.Response.FromString)
        cls.client = triton.InferenceServerClient(e2e_env.server.address)
        rng = np.random.default_rng(1)
        cls.day = rng.normal(0, 1, (60, e2e_env.features)).astype(np.float32)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.channel.close()

    def open_msg(self, model=None, predict_every=0):
        req = self.Request()
        req.open.model_name = model or e2e_env.model_name
        req.open.instrument = "SYNTH"
        req.open.date = "2026-01-02"
        req.open.predict_every = predict_every
        return req

    def row_msg(self, step, values):
        req = self.Request()
        req.features.step = step
        req.features.values.extend(values.tolist())
        return req

    def tick_msg(self, step, bid, ask, flow):
        req = self.Request()
        req.tick.step, req.tick.bid, req.tick.ask, req.tick.flow = step, bid, ask, flow
        return req

    def full_probs(self, x):
        inp = triton.InferInput("ticks", [1] + list(x.shape), "FP32")
        inp.set_data_from_numpy(x[None])
        return self.client.infer(e2e_env.model_name, [inp]).as_numpy("probs")[0]

    def test_streamed_rows_equal_full_sequence_probabilities(self):
        messages = [self.open_msg()] + [self.row_msg(t, self.day[t]) for t in range(len(self.day))]
        replies = list(self.call(iter(messages), timeout=TIMEOUT))
        opened = replies[0].opened
        self.assertEqual(opened.model_name, e2e_env.model_name)
        self.assertEqual(opened.state_mode, "incremental")  # the CPU has attention_decode
        self.assertEqual(opened.max_steps, e2e_env.max_seq_len)
        self.assertEqual(opened.features, e2e_env.features)
        self.assertTrue(opened.kernel_path)
        steps = [r.prediction for r in replies[1:]]
        self.assertEqual([p.step for p in steps], list(range(len(self.day))))
        full = self.full_probs(self.day)
        streamed = np.array([list(p.probs) for p in steps], np.float32)
        np.testing.assert_allclose(streamed, full, atol=1e-5)
        self.assertEqual([p.label for p in steps], list(full.argmax(-1)))

    def test_predict_every_answers_every_nth_step(self):
        messages = [self.open_msg(predict_every=5)] + [self.row_msg(t, self.day[t])
                                                       for t in range(20)]
        replies = list(self.call(iter(messages), timeout=TIMEOUT))
        self.assertEqual([r.prediction.step for r in replies[1:]], [4, 9, 14, 19])

    def test_raw_ticks_match_the_cli_on_the_same_ticks(self):
        rng = np.random.default_rng(2)
        mid = 100 * np.exp(np.cumsum(rng.normal(0, 1e-4, 40)))
        flow = rng.integers(-9, 10, 40)
        messages = [self.open_msg()] + [self.tick_msg(t, mid[t] - 0.01, mid[t] + 0.01,
                                                      float(flow[t])) for t in range(40)]
        replies = list(self.call(iter(messages), timeout=TIMEOUT))
        last = np.array(replies[-1].prediction.probs)
        path = os.path.join(e2e_env.workdir, "stream_ticks.csv")
        with open(path, "w") as f:
            f.write("timestamp,bid,ask,flow\n")
            for t in range(40):
                f.write("%d,%.17g,%.17g,%d\n" % (t, mid[t] - 0.01, mid[t] + 0.01, flow[t]))
        out_csv = os.path.join(e2e_env.workdir, "stream_cli_probs.csv")
        out = e2e_env.cli("predict", "--csv", path, "--last-only", "--output", out_csv)
        self.assertEqual(out.returncode, 0, out.stderr)
        cli = np.loadtxt(out_csv, delimiter=",", skiprows=1, ndmin=2)
        self.assertEqual(cli[0, 0], 39)
        np.testing.assert_allclose(last, cli[0, 1:], atol=1e-6)

    def expect_stream_error(self, messages, code, fragment):
        with self.assertRaises(grpc.RpcError) as err:
            list(self.call(iter(messages), timeout=TIMEOUT))
        self.assertEqual(err.exception.code(), code, err.exception.details())
        self.assertIn(fragment, err.exception.details())

    def test_bad_streams_get_specific_codes(self):
        C = grpc.StatusCode
        self.expect_stream_error([self.row_msg(0, self.day[0])], C.FAILED_PRECONDITION,
                                 "must be `open`")
        self.expect_stream_error([self.open_msg(model="nope")], C.NOT_FOUND, "unknown model")
        self.expect_stream_error([self.open_msg(), self.row_msg(1, self.day[1])],
                                 C.INVALID_ARGUMENT, "expects step 0")
        self.expect_stream_error([self.open_msg(), self.row_msg(0, self.day[0][:4])],
                                 C.INVALID_ARGUMENT, "this model takes F = 6")
        self.expect_stream_error([self.open_msg(), self.tick_msg(0, float("nan"), 1.0, 0.0)],
                                 C.INVALID_ARGUMENT, "non-finite")
        self.assertTrue(self.client.is_server_live())


if __name__ == "__main__":
    unittest.main()
