"""Protocol surface of a running flashtickd: grpc.health.v1, server reflection
(listing, and descriptors served for every service), conformance of our
inference.* messages with the ones compiled into tritonclient (names, numbers,
types), tritonclient's liveness/readiness/metadata calls, the Experiments
service refusing with a reason when the server has no experiment store, and
the CLI's `health` and `models`."""
import unittest

import grpc
from google.protobuf import descriptor_pool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase)
import tritonclient.grpc as triton
from tritonclient.grpc import service_pb2 as triton_pb2
from tritonclient.utils import InferenceServerException

import e2e_env

TIMEOUT = 30
OUR_SERVICES = {"inference.GRPCInferenceService", "flashtick.v1.TickStream",
                "flashtick.v1.Experiments", "grpc.health.v1.Health",
                "grpc.reflection.v1alpha.ServerReflection"}
INFERENCE_RPCS = ["ServerLive", "ServerReady", "ModelReady", "ServerMetadata", "ModelMetadata",
                  "ModelInfer", "RepositoryIndex"]


def field_signature(message_descriptor, seen=None):
    """{field name: (number, type, repeated, message type name)}, recursively."""
    seen = set() if seen is None else seen
    out = {}
    for f in message_descriptor.fields:
        sub = f.message_type
        out[f.name] = (f.number, f.type, f.is_repeated if hasattr(f, "is_repeated")
                       else f.label == 3, sub.full_name if sub else None,
                       f.containing_oneof.name if f.containing_oneof else None)
        if sub is not None and sub.full_name not in seen:
            seen.add(sub.full_name)
            out.update({"%s.%s" % (f.name, k): v for k, v in field_signature(sub, seen).items()})
    return out


class ProtocolTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.channel = grpc.insecure_channel(e2e_env.server.address)
        cls.triton = triton.InferenceServerClient(e2e_env.server.address)

    @classmethod
    def tearDownClass(cls):
        cls.triton.close()
        cls.channel.close()

    def test_health_v1(self):
        stub = health_pb2_grpc.HealthStub(self.channel)
        for service in ["", "inference.GRPCInferenceService", "flashtick.v1.TickStream"]:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=TIMEOUT)
            self.assertEqual(reply.status, health_pb2.HealthCheckResponse.SERVING, service)
        with self.assertRaises(grpc.RpcError) as err:
            stub.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=TIMEOUT)
        self.assertEqual(err.exception.code(), grpc.StatusCode.NOT_FOUND)

    def test_reflection_lists_every_service(self):
        stub = reflection_pb2_grpc.ServerReflectionStub(self.channel)
        replies = list(stub.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=TIMEOUT))
        names = {s.name for s in replies[0].list_services_response.service}
        self.assertTrue(OUR_SERVICES <= names, names)

    def test_reflection_serves_descriptors_matching_tritonclient(self):
        pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(self.channel))
        service = pool.FindServiceByName("inference.GRPCInferenceService")
        theirs = triton_pb2.DESCRIPTOR.services_by_name["GRPCInferenceService"]
        for rpc in INFERENCE_RPCS:
            ours_m = service.FindMethodByName(rpc)
            their_m = theirs.methods_by_name[rpc]
            self.assertEqual(ours_m.input_type.full_name, their_m.input_type.full_name)
            self.assertEqual(ours_m.output_type.full_name, their_m.output_type.full_name)
            for ours_t, their_t in [(ours_m.input_type, their_m.input_type),
                                    (ours_m.output_type, their_m.output_type)]:
                self.assertEqual(field_signature(ours_t), field_signature(their_t),
                                 ours_t.full_name)
        # Our own services are described too (the generated pool is linked whole).
        for name in ["flashtick.v1.TickStream", "flashtick.v1.Experiments", "grpc.health.v1.Health"]:
            self.assertIsNotNone(pool.FindServiceByName(name))

    def test_triton_liveness_readiness_metadata(self):
        self.assertTrue(self.triton.is_server_live())
        self.assertTrue(self.triton.is_server_ready())
        self.assertTrue(self.triton.is_model_ready(e2e_env.model_name))
        self.assertTrue(self.triton.is_model_ready(e2e_env.model_name, "1"))
        self.assertFalse(self.triton.is_model_ready("no-such-model"))
        server = self.triton.get_server_metadata()
        self.assertEqual(server.name, "flashtick")
        meta = self.triton.get_model_metadata(e2e_env.model_name)
        self.assertEqual(meta.name, e2e_env.model_name)
        self.assertEqual(list(meta.versions), ["1"])
        self.assertEqual([(t.name, t.datatype, list(t.shape)) for t in meta.inputs],
                         [("ticks", "FP32", [-1, -1, e2e_env.features])])
        self.assertEqual([(t.name, t.datatype, list(t.shape)) for t in meta.outputs],
                         [("probs", "FP32", [-1, -1, 3])])
        index = self.triton.get_model_repository_index()
        self.assertEqual([(m.name, m.version, m.state) for m in index.models],
                         [(e2e_env.model_name, "1", "READY")])

    def test_triton_metadata_of_unknown_model_is_not_found(self):
        with self.assertRaises(InferenceServerException) as err:
            self.triton.get_model_metadata("no-such-model")
        self.assertEqual(err.exception.status(), "StatusCode.NOT_FOUND")
        self.assertIn(e2e_env.model_name, err.exception.message())  # lists what exists
        with self.assertRaises(InferenceServerException) as err:
            self.triton.get_model_metadata(e2e_env.model_name, "7")
        self.assertEqual(err.exception.status(), "StatusCode.NOT_FOUND")

    def test_triton_model_control(self):
        # tritonclient's own load_model / unload_model against RepositoryModelLoad /
        # Unload. The shared model is only reloaded (still served after), never
        # unloaded: the other modules use it (the unload is tested in C++,
        # tests/server/model_control_e2e_test.cc).
        self.triton.load_model(e2e_env.model_name)
        self.assertTrue(self.triton.is_model_ready(e2e_env.model_name))
        for call in (self.triton.load_model, self.triton.unload_model):
            with self.assertRaises(InferenceServerException) as err:
                call("no-such-model")
            self.assertEqual(err.exception.status(), "StatusCode.NOT_FOUND")
        with self.assertRaises(InferenceServerException) as err:
            self.triton.load_model("../models")
        self.assertEqual(err.exception.status(), "StatusCode.INVALID_ARGUMENT")

    def test_experiments_without_a_store_refuse_with_a_reason(self):
        # This server runs without an experiment store. Before the training
        # engine the RPCs are UNIMPLEMENTED ("lands with the training
        # engine"); with it, FAILED_PRECONDITION naming --experiment-dir.
        # Either way: a refusal a person can act on, never OK and never a crash.
        expected = {grpc.StatusCode.UNIMPLEMENTED: "training engine",
                    grpc.StatusCode.FAILED_PRECONDITION: "--experiment-dir"}
        for rpc in ["SubmitSweep", "GetExperiment", "ListExperiments", "CancelExperiment",
                    "GetReport"]:
            call = self.channel.unary_unary("/flashtick.v1.Experiments/" + rpc)
            with self.assertRaises(grpc.RpcError) as err:
                call(b"", timeout=TIMEOUT)
            self.assertIn(err.exception.code(), expected, rpc)
            self.assertIn(expected[err.exception.code()], err.exception.details())
        watch = self.channel.unary_stream("/flashtick.v1.Experiments/WatchExperiment")
        with self.assertRaises(grpc.RpcError) as err:
            list(watch(b"", timeout=TIMEOUT))
        self.assertIn(err.exception.code(), expected)
        self.assertTrue(self.triton.is_server_live())

    def test_cli_health_and_models(self):
        health = e2e_env.cli("health", timeout=60)
        self.assertEqual(health.returncode, 0, health.stderr)
        self.assertIn("SERVING", health.stdout)
        self.assertIn("ready    yes", health.stdout)
        models = e2e_env.cli("models", timeout=60)
        self.assertEqual(models.returncode, 0, models.stderr)
        self.assertIn("model %s  versions [1]" % e2e_env.model_name, models.stdout)
        self.assertIn("input   ticks FP32 [-1, -1, 6]", models.stdout)
        self.assertIn("output  probs FP32 [-1, -1, 3]", models.stdout)

    def test_cli_reports_unreachable_server(self):
        import subprocess
        out = subprocess.run([e2e_env.flashtick, "--server", "127.0.0.1:1", "--timeout", "3",
                              "health"], capture_output=True, text=True, timeout=60)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("UNAVAILABLE", out.stderr)


if __name__ == "__main__":
    unittest.main()
