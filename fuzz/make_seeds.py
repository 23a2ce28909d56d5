#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets (fuzz/corpus/<target>/seed_*), small valid
and nearly valid inputs that start libFuzzer deep in each parser. Run with the
project's .venv (tritonclient's KServe protos, safetensors, numpy); idempotent.
Crash regressions (crash_*) are added by hand next to the seeds and never rewritten.
fuzz_train_checkpoint's manifest seed is made by the target itself (see README.md)."""
import json
import os
import struct
import sys

import numpy as np
from safetensors.numpy import save
import tritonclient.grpc.service_pb2 as kserve

HERE = os.path.dirname(os.path.abspath(__file__))


def put(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed_" + name), "wb") as f:
        f.write(data)


def infer(limits_byte, shape, values=None, raw=True, name="ticks", dtype="FP32", params=None,
          outputs=()):
    r = kserve.ModelInferRequest(model_name="tiny", model_version="1", id="x")
    t = r.inputs.add(name=name, datatype=dtype, shape=shape)
    n = int(np.prod(shape)) if shape else 0
    v = np.linspace(-1, 1, n).astype(np.float32) if values is None else np.asarray(values, np.float32)
    if raw:
        r.raw_input_contents.append(v.tobytes())
    else:
        t.contents.fp32_contents.extend(v.tolist())
    for k, b in (params or {}).items():
        r.parameters[k].bool_param = b
    for o in outputs:
        r.outputs.add(name=o)
    return bytes([limits_byte]) + r.SerializeToString()


def model_infer():
    # limits byte: F = 1 + (b & 7), max N = 1 + ((b >> 3) & 31) * 8
    f6_n33 = 5 | (4 << 3)
    put("fuzz_model_infer", "raw", infer(f6_n33, [1, 4, 6]))
    put("fuzz_model_infer", "typed", infer(f6_n33, [2, 3, 6], raw=False))
    put("fuzz_model_infer", "last_only", infer(f6_n33, [1, 2, 6], params={"last_only": True},
                                                outputs=["probs"]))
    put("fuzz_model_infer", "nan", infer(f6_n33, [1, 1, 6], [0, 1, float("nan"), 2, 3, 4]))
    put("fuzz_model_infer", "too_long", infer(5, [1, 40, 6]))
    put("fuzz_model_infer", "rank2", infer(f6_n33, [4, 6]))
    put("fuzz_model_infer", "fp64", infer(f6_n33, [1, 1, 6], dtype="FP64"))
    put("fuzz_model_infer", "huge_shape", infer(f6_n33, [1 << 40, 1 << 40, 6], values=[]))


def sweep_config():
    put("fuzz_sweep_config", "empty_object", "{}")
    put("fuzz_sweep_config", "demo", json.dumps({
        "name": "demo", "contexts": [16, 32, 64], "seeds": [1],
        "model": {"width": 32, "layers": 2, "heads": 4, "kv_heads": 4, "mlp_ratio": 2,
                  "rope_theta": 10000},
        "optimizer": {"name": "adamw", "learning_rate": 0.01, "warmup_steps": 20,
                      "min_lr_ratio": 0.1, "grad_clip_norm": 1.0, "weight_decay": 0.0,
                      "tokens_per_step": 1024},
        "training": {"first_fold_epochs": 120, "epochs_per_fold": 2, "min_steps_per_fold": 2,
                     "checkpoint_every_steps": 50},
        "data": {"synthetic": {"generator": "planted_cue_go", "seed": 7, "days": 24,
                               "steps_per_day": 2048, "lags": [10, 24, 48],
                               "events_per_day": [40, 40, 40], "sigma_bps": 0.5,
                               "drift_bps": 2.0}},
        "labels": {"horizon": 4},
        "walk_forward": {"mode": "expanding", "train_days": 4, "test_days": 1},
        "cost_bps": 0.5,
        "gates": {"min_dsr": 0.95, "max_pbo": 0.10, "pbo_blocks": 16, "best_by": "sharpe"},
        "precision_check": {"enabled": True, "max_windows": 8},
        "device": "cpu"}, indent=1))
    put("fuzz_sweep_config", "csv", json.dumps({
        "contexts": [8, 64], "labels": {"horizon": 4},
        "data": {"csv": {"paths": ["a.csv"], "format": "bars", "instrument": "USDCHF",
                         "session": {"open_second": 0, "step_seconds": 1800, "steps": 48,
                                     "clock_shift_seconds": 7200,
                                     "min_rows_in_session": 24}}}}))
    put("fuzz_sweep_config", "sophia_rolling", json.dumps({
        "contexts": [512, 4096], "seeds": [1, 2],
        "optimizer": {"name": "sophia_h", "learning_rate": 0.001},
        "walk_forward": {"mode": "rolling", "train_days": 3, "test_days": 2}}))
    put("fuzz_sweep_config", "bad_types", '{"contexts": "512", "seeds": [-1], "name": ""}')


def tick_csv():
    quotes = ("timestamp,bid,ask,bid_size,ask_size,trade_price,trade_size,venue,ignored\n"
              "2024-03-01 09:30:00.000,100.00,100.02,5,7,,,X,z\n"
              "2024-03-01 09:30:00.500,100.00,100.02,5,7,100.02,300,X,z\n"
              "2024-03-01 09:30:01.250,100.01,100.03,5,7,100.01,100,Y,z\n"
              "2024-03-01 09:30:01.250,100.01,100.03,5,7,100.01,100,Y,z\n"
              "2024-03-01 09:29:59,100.05,100.00,1,1,,,X,z\n"
              "2024-03-04 09:31:00,100.02,100.04,2,2,,,X,z\n")
    put("fuzz_tick_csv", "quotes", b"\x00" + quotes.encode())
    put("fuzz_tick_csv", "quotes_semicolon_crlf",
        b"\x05" + b'# exported\r\nDate;"Bid";Ask;Note\r\n\r\n2000-01-03;1.5;1.6;"a;b ""q"""\r\n')
    bars = ("\"%Y-%m-%d\";Open;High;Low;Close;Volume\n"
            "2000-09-27;63.4375;63.5625;59.8125;60.625;53077800\n"
            "2000-09-28;60.8125;61.875;60.625;61.3125;26180200\n")
    put("fuzz_tick_csv", "bars_daily", b"\x80" + bars.encode())
    intraday = "timestamp,open,high,low,close,volume\n" + "".join(
        f"1996-04-01 09:{30 + i // 60:02d}:{i % 60:02d},1.{i:04d},1.{i + 5:04d},1.{i:04d},1.{i + 2:04d},{i}\n"
        for i in range(0, 90, 3))
    put("fuzz_tick_csv", "bars_intraday", b"\xa1" + intraday.encode())
    put("fuzz_tick_csv", "bad_rows", b"\x00time,bid,ask,price,size\n2024-01-01,1,2,1.5,-3\n01/02/2024,1,2\n")


def client_tick_csv():
    put("fuzz_client_tick_csv", "raw",
        b"timestamp,bid,ask,flow\n1.2,100.00,100.02,3\n1.7,100.01,100.03,-1\n"
        b"09:30:04,100.05,100.06,4\n")
    put("fuzz_client_tick_csv", "features",
        b"log_return,spread_bps,signed_volume,tod_sin,tod_cos,session_start\n"
        b"0,2,0,0,1,1\n0.5,2,1.1,0.0002,1,0\n")
    put("fuzz_client_tick_csv", "quotes",
        b"timestamp,bid,ask,bid_size,ask_size\n2024-03-01 09:30:00,100.00,100.02,5,7\n"
        b"2024-03-01 09:31:00,100.01,100.03,5,7\n2024-03-01 10:00:00,100.02,100.04,5,7\n")


def safetensors_seeds():
    put("fuzz_safetensors", "f32", save({"w": np.arange(6, dtype=np.float32).reshape(2, 3)}))
    put("fuzz_safetensors", "mixed", save({
        "a": np.ones((2, 2), np.float64), "b": np.arange(4, dtype=np.int32),
        "c": np.zeros((3,), np.float16), "s": np.array(1.5, np.float32)},
        metadata={"format": "pt"}))
    put("fuzz_safetensors", "empty_tensor", save({"e": np.zeros((0, 4), np.float32)}))
    hdr = b'{"x":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}'
    put("fuzz_safetensors", "bf16", struct.pack("<Q", len(hdr)) + hdr + b"\x80\x3f\x00\x40")
    hdr = b'{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}'
    put("fuzz_safetensors", "short_data", struct.pack("<Q", len(hdr)) + hdr + b"\x00\x00\x80\x3f")


def main():
    model_infer()
    sweep_config()
    tick_csv()
    client_tick_csv()
    safetensors_seeds()
    return 0


if __name__ == "__main__":
    sys.exit(main())
