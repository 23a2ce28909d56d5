#!/usr/bin/env python3
"""PyTorch twin of flashtick serving (the serving latency benchmark): our tick transformer
(model/transformer.h: linear embedding, pre-norm blocks with interleaved-pair RoPE,
causal GQA attention (query head h reads K/V head h / (H/Hkv)), tanh GELU MLP,
final LayerNorm, 3-class head, softmax) loaded from OUR config.json and
model.safetensors, timed on the same shapes as serve_latency_inproc:

  forward  probs = model(x) for x [B, N, F], host tensor in, host probabilities out
           (what a server does per request), eager and, when it works, torch.compile;
  tick     one new step against a per-layer K/V cache (incremental state, like
           Transformer::Step), over every step of a --ticks-step day.

--compare PREFIX reads PREFIX.x.f32 / PREFIX.probs.f32 (written by
serve_latency_inproc --dump) and reports the largest |torch - flashtick| on them, so
the table compares the same model. The tick path is checked against the forward.
On CUDA the twin runs in bf16 (weights cast, softmax in fp32), as our CUDA serving does.
Prints one JSON line per measurement. Works with torch 1.13 (Debian) and 2.x.
"""
import argparse
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def read_safetensors(path):
    """The safetensors format without the package: u64 header length, JSON, data."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    kinds = {"F32": np.float32, "F64": np.float64}
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        b, e = meta["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + b:8 + n + e],
                                  dtype=kinds[meta["dtype"]]).reshape(meta["shape"])
    return out


def has_sdpa():
    return hasattr(F, "scaled_dot_product_attention")


class TickTransformer(torch.nn.Module):
    """Functional twin: the weights are a dict of tensors with our names."""

    def __init__(self, config, weights, device, dtype):
        super().__init__()
        self.c = config["width"]
        self.h = config["heads"]
        self.hkv = config.get("kv_heads", self.h)
        self.d = self.c // self.h
        self.layers = config["layers"]
        self.eps = float(np.float32(config.get("layernorm_eps", 1e-5)))
        self.theta = float(config.get("rope_theta", 10000.0))
        self.dtype = dtype
        self.w = {k: torch.tensor(np.array(v), device=device).to(dtype) for k, v in weights.items()}
        self.device = device
        self.rope_cache = {}

    def rope_tables(self, n, offset=0):
        key = (n, offset)
        if key not in self.rope_cache:
            d = self.d
            inv = self.theta ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
            pos = torch.arange(offset, offset + n, dtype=torch.float64)
            ang = pos[:, None] * inv[None, :]  # the angle in f64, as our CPU reference
            self.rope_cache[key] = (ang.cos().float().to(self.device)[None, :, None, :],
                                    ang.sin().float().to(self.device)[None, :, None, :])
            if len(self.rope_cache) > 4096:
                self.rope_cache.clear()
        return self.rope_cache[key]

    @staticmethod
    def rope(x, cos, sin):
        x0, x1 = x[..., 0::2].float(), x[..., 1::2].float()
        return torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1).flatten(-2).to(x.dtype)

    def lin(self, x, name):
        return F.linear(x, self.w[name + ".weight"], self.w[name + ".bias"])

    def ln(self, x, name):
        return F.layer_norm(x, (self.c,), self.w[name + ".weight"], self.w[name + ".bias"], self.eps)

    def attend(self, q, k, v, causal):
        """q [B, Tq, H, D], k/v [B, Tk, Hkv, D] -> [B, Tq, H·D]."""
        b, tq = q.shape[0], q.shape[1]
        rep = self.h // self.hkv
        if rep > 1:
            k = k.repeat_interleave(rep, dim=2)
            v = v.repeat_interleave(rep, dim=2)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        if has_sdpa():
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        else:  # torch < 2.0: math attention, queries in chunks so N x N never lives whole
            scale = 1.0 / math.sqrt(self.d)
            outs = []
            chunk = 1024
            for s in range(0, tq, chunk):
                e = min(tq, s + chunk)
                kk, vv = (k[:, :, :e], v[:, :, :e]) if causal else (k, v)
                scores = torch.matmul(q[:, :, s:e].float(), kk.float().transpose(-1, -2)) * scale
                if causal:
                    i = torch.arange(s, e, device=q.device)[:, None]
                    j = torch.arange(e, device=q.device)[None, :]
                    scores = scores.masked_fill(j > i, float("-inf"))
                outs.append(torch.matmul(scores.softmax(-1), vv.float()).to(q.dtype))
            o = torch.cat(outs, dim=2)
        return o.transpose(1, 2).reshape(b, tq, self.h * self.d)

    def block(self, x, l, cos, sin, cache=None, t=0):
        p = "blocks.%d." % l
        b, n, _ = x.shape
        qkv = self.lin(self.ln(x, p + "ln1"), p + "attn.qkv")
        hd, kd = self.h * self.d, self.hkv * self.d
        q = self.rope(qkv[..., :hd].reshape(b, n, self.h, self.d), cos, sin)
        k = self.rope(qkv[..., hd:hd + kd].reshape(b, n, self.hkv, self.d), cos, sin)
        v = qkv[..., hd + kd:].reshape(b, n, self.hkv, self.d)
        if cache is not None:  # one new row at position t: append, attend to rows 0..t
            kc, vc = cache[l]
            kc[:, t:t + n] = k
            vc[:, t:t + n] = v
            k, v = kc[:, :t + n], vc[:, :t + n]
        a = self.attend(q, k, v, causal=cache is None)
        x = x + self.lin(a, p + "attn.proj")
        h = F.gelu(self.lin(self.ln(x, p + "ln2"), p + "mlp.fc1"), approximate="tanh")
        return x + self.lin(h, p + "mlp.fc2")

    def forward(self, x):
        cos, sin = self.rope_tables(x.shape[1])
        x = self.lin(x.to(self.dtype), "embed")
        for l in range(self.layers):
            x = self.block(x, l, cos, sin)
        logits = self.lin(self.ln(x, "ln_f"), "head")
        return logits.float().softmax(-1)

    def new_cache(self, steps):
        """Per-layer K/V caches for `steps` rows, and the day's rotary tables (made
        once, sliced per step, so a step does no host work beyond launching ops)."""
        shape = (1, steps, self.hkv, self.d)
        self.day_cos, self.day_sin = self.rope_tables(steps)
        return [(torch.zeros(shape, device=self.device, dtype=self.dtype),
                 torch.zeros(shape, device=self.device, dtype=self.dtype)) for _ in range(self.layers)]

    def step(self, row, cache, t):
        cos, sin = self.day_cos[:, t:t + 1], self.day_sin[:, t:t + 1]
        x = self.lin(row.to(self.dtype).reshape(1, 1, -1), "embed")
        for l in range(self.layers):
            x = self.block(x, l, cos, sin, cache=cache, t=t)
        return self.lin(self.ln(x, "ln_f"), "head").float().softmax(-1)


def percentiles(ms):
    ms = sorted(ms)

    def rank(q):
        return ms[min(len(ms) - 1, max(0, math.ceil(q * len(ms)) - 1))]

    return {"samples": len(ms), "p50_ms": rank(0.5), "p99_ms": rank(0.99),
            "p999_ms": rank(0.999), "mean_ms": sum(ms) / len(ms)}


def sync(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def emit(rec):
    print(json.dumps(rec), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--n", default="512")
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--ticks", type=int, default=2048)
    ap.add_argument("--compile", action="store_true", help="also time torch.compile")
    ap.add_argument("--no-eager", action="store_true",
                    help="time only torch.compile (a separate run under its own time limit)")
    ap.add_argument("--compare", default="", help="PREFIX of serve_latency_inproc --dump files")
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = args.device
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    config = json.load(open(os.path.join(args.model_dir, "config.json")))
    model = TickTransformer(config, read_safetensors(os.path.join(args.model_dir, "model.safetensors")),
                            device, dtype)
    nf = config.get("features", 6)
    base = {"impl": "torch_eager", "device": device, "torch": torch.__version__,
            "dtype": str(dtype).replace("torch.", ""),
            "attention": "sdpa" if has_sdpa() else "math_chunked"}
    torch.set_grad_enabled(False)

    if args.compare:
        x = np.fromfile(args.compare + ".x.f32", np.float32).reshape(1, -1, nf)
        ref = np.fromfile(args.compare + ".probs.f32", np.float32).reshape(1, x.shape[1], -1)
        got = model(torch.from_numpy(x).to(device)).cpu().numpy()
        emit(dict(base, what="torch_vs_flashtick", N=x.shape[1],
                  max_abs_diff=float(np.abs(got - ref).max())))
        # The tick path equals the forward (same twin, incremental state).
        cache = model.new_cache(x.shape[1])
        steps = [model.step(torch.from_numpy(x[0, t]).to(device), cache, t) for t in range(x.shape[1])]
        step_probs = torch.cat([s.reshape(1, -1) for s in steps]).cpu().numpy()
        emit(dict(base, what="torch_step_vs_forward", N=x.shape[1],
                  max_abs_diff=float(np.abs(step_probs - got[0]).max())))

    variants = [] if args.no_eager else [("torch_eager", model.forward)]
    if args.compile or args.no_eager:
        if hasattr(torch, "compile"):
            variants.append(("torch_compile", torch.compile(model.forward, dynamic=False)))
        else:
            emit(dict(base, impl="torch_compile", error="torch %s has no torch.compile" % torch.__version__))
    rng = np.random.default_rng(0)
    for n in [int(v) for v in args.n.split(",")]:
        for b in [int(v) for v in args.batch.split(",")]:
            x = torch.from_numpy(rng.normal(size=(b, n, nf)).astype(np.float32))
            for impl, fn in variants:
                try:
                    ms = []
                    for r in range(args.warmup + args.reps):
                        t0 = time.perf_counter()
                        fn(x.to(device)).cpu()  # host in, host out, synchronised by .cpu()
                        sync(device)
                        if r >= args.warmup:
                            ms.append(1000 * (time.perf_counter() - t0))
                    rec = dict(base, impl=impl, what="forward", N=n, B=b, **percentiles(ms))
                    rec["rows_per_s"] = 1000.0 * b / rec["mean_ms"]
                    emit(rec)
                except Exception as e:  # an OOM or a compile failure is a result, not a crash
                    emit(dict(base, impl=impl, what="forward", N=n, B=b,
                              error=("%s: %s" % (type(e).__name__, e))[:300]))
                    if device.startswith("cuda"):
                        torch.cuda.empty_cache()

    if args.ticks > 0:
        x = torch.from_numpy(rng.normal(size=(args.ticks, nf)).astype(np.float32))
        # With warm-up, a short first day (≤ 256 steps) is run and dropped.
        days = [min(256, args.ticks), args.ticks] if args.warmup > 0 else [args.ticks]
        for day_steps in days:
            cache = model.new_cache(args.ticks)
            ms = []
            for t in range(day_steps):
                t0 = time.perf_counter()
                model.step(x[t].to(device), cache, t).cpu()
                sync(device)
                ms.append(1000 * (time.perf_counter() - t0))
        emit(dict(base, what="tick", N=args.ticks, B=1, **percentiles(ms)))


if __name__ == "__main__":
    sys.exit(main())
