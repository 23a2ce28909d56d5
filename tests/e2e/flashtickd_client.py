"""Client-side helpers for the scripts that drive a real flashtickd over gRPC
(tests/reliability/run_overload.py, run_crash.py, bench/serve_latency/serve_latency.py):
KServe ModelInfer requests, flashtick.v1 stubs with message classes taken from the
server's reflection (the scripts need no generated flashtick code), the Experiments
calls the sweep scripts make and a polling wait, a TickStream call fed from a queue, and the ok/FAIL check lines the reliability scripts print (with the
server's log when one failed).

Import it after putting this folder on sys.path, as those scripts do.
"""
import time

from google.protobuf import descriptor_pool, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase)
from tritonclient.grpc import service_pb2 as pb

FLASHTICK_PACKAGE = "flashtick.v1."


def infer_request(model, x, last_only=False):
    """A ModelInferRequest with the FP32 ticks x [B, N, F] as raw bytes."""
    req = pb.ModelInferRequest(model_name=model)
    t = req.inputs.add(name="ticks", datatype="FP32")
    t.shape.extend(list(x.shape))
    req.raw_input_contents.append(x.astype("float32", copy=False).tobytes())
    if last_only:
        req.parameters["last_only"].bool_param = True
    return req


class Reflected:
    """flashtick.v1 message classes and enums as the server's reflection describes them."""

    def __init__(self, channel):
        self.channel = channel
        self.pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))

    def message(self, name):
        return message_factory.GetMessageClass(
            self.pool.FindMessageTypeByName(FLASHTICK_PACKAGE + name))

    def enum_names(self, name):
        """{number: name} of a flashtick.v1 enum."""
        return {v.number: v.name for v in
                self.pool.FindEnumTypeByName(FLASHTICK_PACKAGE + name).values}

    def unary(self, service, method, request, response):
        """(request class, callable) of the unary method /flashtick.v1.<service>/<method>."""
        Req, Resp = self.message(request), self.message(response)
        call = self.channel.unary_unary("/%s%s/%s" % (FLASHTICK_PACKAGE, service, method),
                                        request_serializer=Req.SerializeToString,
                                        response_deserializer=Resp.FromString)
        return Req, call


def tick_stream(channel):
    """(TickStreamRequest class, the StreamTicks call) for a bidirectional tick stream."""
    reflected = Reflected(channel)
    Req = reflected.message("TickStreamRequest")
    Resp = reflected.message("TickStreamResponse")
    call = channel.stream_stream("/flashtick.v1.TickStream/StreamTicks",
                                 request_serializer=Req.SerializeToString,
                                 response_deserializer=Resp.FromString)
    return Req, call


def wait_for(pred, timeout, what, step=0.05):
    """pred()'s first truthy value, polled every `step` seconds; RuntimeError naming
    `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    raise RuntimeError("timed out after %d s waiting for %s" % (timeout, what))


class ExperimentsClient:
    """The flashtick.v1.Experiments calls the sweep scripts make, with message classes
    from the server's reflection; each call has a 30 s deadline."""

    def __init__(self, address):
        import grpc  # here, so scripts that never use Experiments need not import it early

        self.channel = grpc.insecure_channel(address)
        reflected = Reflected(self.channel)
        self.cls = {}

        def method(name, req, resp):
            self.cls[req], call = reflected.unary("Experiments", name, req, resp)
            return call

        self.submit = method("SubmitSweep", "SubmitSweepRequest", "SubmitSweepResponse")
        self.get = method("GetExperiment", "GetExperimentRequest", "Experiment")
        self.cancel = method("CancelExperiment", "CancelExperimentRequest",
                             "CancelExperimentResponse")
        self.report = method("GetReport", "GetReportRequest", "GetReportResponse")
        self.states = reflected.enum_names("ExperimentState")

    def Submit(self, config_json):
        """Submits a sweep configuration (JSON text); returns the Experiment."""
        req = self.cls["SubmitSweepRequest"](config_json=config_json)
        return self.submit(req, timeout=30).experiment

    def Get(self, exp_id):
        return self.get(self.cls["GetExperimentRequest"](id=exp_id), timeout=30)

    def Cancel(self, exp_id):
        return self.cancel(self.cls["CancelExperimentRequest"](id=exp_id), timeout=30)

    def State(self, exp):
        """"SUCCEEDED", "RUNNING", ...: the experiment's state without the enum prefix."""
        return self.states[exp.state].replace("EXPERIMENT_STATE_", "")

    def Report(self, exp_id):
        return self.report(self.cls["GetReportRequest"](id=exp_id, include_files=True), timeout=30)

    def close(self):
        self.channel.close()


def queued(outbox):
    """Yields what is put on the queue outbox until None: a request stream the caller
    feeds one message at a time, waiting for each reply."""
    while True:
        item = outbox.get()
        if item is None:
            return
        yield item


class Checks:
    """Prints each check as an ok / FAIL line and keeps the failures."""

    def __init__(self):
        self.failures = []

    def check(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            self.failures.append(what)

    def unexpected(self, error):
        """Any exception that ended the script early counts as a failure, with its reason."""
        self.check(False, "unexpected error: %r" % (error,))

    def kill_server(self, server):
        """Kills server (an e2e_server.ServerProcess, or None when it never started) and,
        when a check failed, prints the tail of its log."""
        if server is None:
            return
        server.kill()
        if self.failures:
            print("---- flashtickd log (tail) ----\n" + server.log()[-4000:])
