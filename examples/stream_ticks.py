#!/usr/bin/env python3
"""Stream one synthetic trading day to flashtickd tick by tick and print each
step's down/flat/up probabilities and round-trip latency.

Needs only grpcio and grpcio-reflection (scripts/requirements-test.txt): the
message classes come from the descriptors the server serves over reflection, so
no generated code is required.

    flashtickd --model-repository models --device cpu &
    python3 examples/stream_ticks.py --server localhost:8001 --steps 300
"""
import argparse
import math
import random
import time

import grpc
from google.protobuf import descriptor_pool, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", default="localhost:8001")
    ap.add_argument("--model", default="flashtick-tiny")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    channel = grpc.insecure_channel(args.server)
    pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
    Request = message_factory.GetMessageClass(
        pool.FindMessageTypeByName("flashtick.v1.TickStreamRequest"))
    Response = message_factory.GetMessageClass(
        pool.FindMessageTypeByName("flashtick.v1.TickStreamResponse"))
    call = channel.stream_stream("/flashtick.v1.TickStream/StreamTicks",
                                 request_serializer=Request.SerializeToString,
                                 response_deserializer=Response.FromString)

    # A random-walk mid with a 1 bp spread and noisy signed flow: one tick a second.
    rng = random.Random(args.seed)
    sent_at = {}

    def requests():
        yield Request(open={"model_name": args.model, "instrument": "SYNTH",
                            "date": "2026-01-02"})
        mid = 100.0
        for step in range(args.steps):
            mid *= math.exp(rng.gauss(0.0, 0.5e-4))
            half = 0.5e-4 * mid
            sent_at[step] = time.perf_counter()
            yield Request(tick={"step": step, "bid": mid - half, "ask": mid + half,
                                "flow": rng.gauss(0.0, 3.0)})
            while step in sent_at:  # one tick in flight, as a live feed would send
                time.sleep(0)

    latencies = []
    for response in call(requests(), timeout=600):
        if response.HasField("opened"):
            o = response.opened
            print(f"session {o.session_id}: {o.model_name} v{o.model_version} on {o.device} "
                  f"({o.state_mode})")
            continue
        p = response.prediction
        ms = (time.perf_counter() - sent_at.pop(p.step)) * 1e3
        latencies.append(ms)
        if p.step % 30 == 0 or p.step == args.steps - 1:
            print(f"step {p.step:5d}  p(down)={p.probs[0]:.4f} p(flat)={p.probs[1]:.4f} "
                  f"p(up)={p.probs[2]:.4f}  {ms:7.3f} ms")
    latencies.sort()
    print(f"{len(latencies)} steps; latency p50 {latencies[len(latencies) // 2]:.3f} ms, "
          f"max {latencies[-1]:.3f} ms")


if __name__ == "__main__":
    main()
