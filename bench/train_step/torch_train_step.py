#!/usr/bin/env python3
"""PyTorch twin of bench/train_step/train_step_bench, in the same JSON-lines schema.

The same tick transformer (embedding, interleaved-pair RoPE, causal attention, pre-norm
blocks, tanh GELU, final LayerNorm, 3-class head, CE with ignore label -1; parameter
names of model/transformer.h), fp32 weights under torch.autocast(bfloat16), global-norm
clipping at 1.0, the same learning rates, warm-up and optimizer defaults as ours:
  op adamw,    impl torch_sdpa: torch.optim.AdamW (foreach, "eager"), attention by
               F.scaled_dot_product_attention (flash for bf16).
  op sophia_h, impl torch_math: Sophia-H (Liu et al. 2023, Alg. 3; the update of
               kernels/ops/optimizer.h) whose Hessian-vector products go through
               torch.func (vjp of grad: reverse over reverse, like ours), which needs the
               math attention path (SDPBackend.MATH): it stores N x N scores and runs out
               of memory at long N (recorded as oom: true, larger N skipped). The gradient
               of every step uses SDPA flash, as AdamW's (the strongest baseline).
ms: Sophia-H amortised over the Hessian interval k from median refresh and plain steps;
peak_bytes: torch.cuda.max_memory_allocated() over the timed steps; peak_bytes_plain and
peak_bytes_refresh split it by step kind (the peak is reset before each timed step).
--curve-dir DIR (written by train_step_bench --dump-dir): start from our initial weights
and train --curve-steps on our batches in turn, printing "loss_curve" lines.
"""
import argparse
import gc
import json
import math
import struct
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

FEATURES, CLASSES, EPS_LN, THETA = 6, 3, float(np.float32(1e-5)), 10000.0


def read_safetensors(path):
    """The safetensors format without the package: u64 header length, JSON, data."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    kinds = {"F32": np.float32, "F64": np.float64, "I32": np.int32}
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        b, e = meta["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + b:8 + n + e], dtype=kinds[meta["dtype"]]).reshape(meta["shape"])
    return out


class Attn(nn.Module):
    def __init__(s, c, h, hkv):
        super().__init__()
        s.h, s.hkv, s.d = h, hkv, c // h
        s.qkv, s.proj = nn.Linear(c, (h + 2 * hkv) * s.d), nn.Linear(h * s.d, c)


class Mlp(nn.Module):
    def __init__(s, c, r):
        super().__init__()
        s.fc1, s.fc2 = nn.Linear(c, r * c), nn.Linear(r * c, c)


class Block(nn.Module):
    def __init__(s, c, h, hkv, r):
        super().__init__()
        s.ln1, s.ln2 = nn.LayerNorm(c, eps=EPS_LN), nn.LayerNorm(c, eps=EPS_LN)
        s.attn, s.mlp = Attn(c, h, hkv), Mlp(c, r)


class TickTransformer(nn.Module):
    def __init__(s, c, h, hkv, layers, r=4):
        super().__init__()
        s.embed = nn.Linear(FEATURES, c)
        s.blocks = nn.ModuleList(Block(c, h, hkv, r) for _ in range(layers))
        s.ln_f, s.head = nn.LayerNorm(c, eps=EPS_LN), nn.Linear(c, CLASSES)

    def forward(s, x, cos, sin):
        b, n, _ = x.shape
        x = s.embed(x)
        for blk in s.blocks:
            a = blk.attn
            qkv = a.qkv(blk.ln1(x))
            q = qkv[..., :a.h * a.d].view(b, n, a.h, a.d)
            k = qkv[..., a.h * a.d:(a.h + a.hkv) * a.d].view(b, n, a.hkv, a.d)
            v = qkv[..., (a.h + a.hkv) * a.d:].view(b, n, a.hkv, a.d)
            q, k = rope(q, cos, sin), rope(k, cos, sin)
            o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                               is_causal=True, enable_gqa=a.h != a.hkv)
            x = x + a.proj(o.transpose(1, 2).reshape(b, n, a.h * a.d))
            x = x + blk.mlp.fc2(F.gelu(blk.mlp.fc1(blk.ln2(x)), approximate="tanh"))
        return s.head(s.ln_f(x))


def rope_tables(n, d, device):
    inv = THETA ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
    ang = torch.arange(n, dtype=torch.float64)[:, None] * inv[None, :]
    return (ang.cos().float().to(device)[None, :, None, :], ang.sin().float().to(device)[None, :, None, :])


def rope(x, cos, sin):
    x0, x1 = x[..., 0::2].float(), x[..., 1::2].float()
    return torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1).flatten(-2).to(x.dtype)


def loss_fn(model, x, y, cos, sin):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(x, cos, sin)
    return F.cross_entropy(logits.float().view(-1, CLASSES), y.view(-1), ignore_index=-1)


class SophiaH:
    """Liu et al. 2023, Alg. 3 with Hutchinson (Rademacher) estimates every k steps."""

    def __init__(s, model, lr, k, b1=0.96, b2=0.99, rho=0.04, eps=1e-12, wd=0.2):
        s.model, s.lr, s.k, s.b1, s.b2, s.rho, s.eps, s.wd = model, lr, k, b1, b2, rho, eps, wd
        s.names = [n for n, _ in model.named_parameters()]
        s.m = {n: torch.zeros_like(p) for n, p in model.named_parameters()}
        s.h = {n: torch.zeros_like(p) for n, p in model.named_parameters()}

    def hutchinson(s, x, y, cos, sin):
        # û ∘ (H û) with H û = vjp(∇f)(û), in bf16 weights and activations without
        # autocast: torch.func's double backward through autocast's fp32→bf16 casts
        # fails on CUDA ("expected scalar type Float but found BFloat16", H200 run of
        # 2026-11-29); a bf16 copy of the weights computes what autocast computes.
        bf16 = torch.bfloat16
        params = {n: p.detach().to(bf16) for n, p in s.model.named_parameters()}
        u = {n: (torch.randint(0, 2, p.shape, device=p.device) * 2 - 1).to(bf16)
             for n, p in params.items()}
        xb = x.to(bf16)

        def f(p):
            logits = torch.func.functional_call(s.model, p, (xb, cos, sin))
            return F.cross_entropy(logits.float().view(-1, CLASSES), y.view(-1), ignore_index=-1)

        with sdpa_kernel(SDPBackend.MATH):
            _, vjp_fn = torch.func.vjp(torch.func.grad(f), params)
            (hu,) = vjp_fn(u)
        return {n: (u[n] * hu[n]).float() for n in params}

    @torch.no_grad()
    def step(s, t, lr, scale, hhat):
        for n, p in s.model.named_parameters():
            s.m[n].mul_(s.b1).add_(p.grad * scale, alpha=1 - s.b1)
            if hhat is not None:
                s.h[n].mul_(s.b2).add_(hhat[n], alpha=1 - s.b2)
            if p.dim() >= 2:
                p.mul_(1 - lr * s.wd)
            ratio = (s.m[n] / torch.clamp(s.rho * s.h[n], min=s.eps)).clamp(-1, 1)
            p.add_(ratio, alpha=-lr)


class Run:
    def __init__(s, kind, args, n, init=None):
        torch.manual_seed(1)
        s.kind, s.args, s.n = kind, args, n
        s.model = TickTransformer(args.width, args.heads, args.kv_heads, args.layers).cuda()
        if init is not None:
            s.model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in init.items()})
        s.cos, s.sin = rope_tables(n, args.width // args.heads, "cuda")
        s.peak = 1e-3 if kind == "adamw" else 5e-4
        if kind == "adamw":
            decay = [p for p in s.model.parameters() if p.dim() >= 2]
            rest = [p for p in s.model.parameters() if p.dim() < 2]
            s.opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                                      lr=s.peak, betas=(0.9, 0.95), eps=1e-8)
        else:
            s.opt = SophiaH(s.model, s.peak, args.hessian_interval)
        s.t = 0

    def step(s, x, y):
        s.t += 1
        lr = s.peak * min(1.0, s.t / 10)  # warm-up 10, then constant (as the C++ bench)
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            loss = loss_fn(s.model, x, y, s.cos, s.sin)
            s.model.zero_grad(set_to_none=True)
            loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(s.model.parameters(), 1.0)
        refresh = False
        if s.kind == "adamw":
            for g in s.opt.param_groups:
                g["lr"] = lr
            s.opt.step()
        else:
            refresh = (s.t - 1) % s.opt.k == 0
            hhat = s.opt.hutchinson(x, y, s.cos, s.sin) if refresh else None
            s.opt.step(s.t, lr, 1.0, hhat)  # clip_grad_norm_ already scaled the grads
        return float(loss), float(norm), refresh


def batch(args, n, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(args.b, n, FEATURES, device="cuda", generator=g)
    y = torch.randint(0, CLASSES, (args.b, n), device="cuda", generator=g, dtype=torch.int64)
    return x, y


def emit(rec, path):
    print(json.dumps(rec), flush=True)
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def timing(args, kind, n, gpu):
    rec = {"bench": "train_step", "op": kind, "impl": "torch_sdpa" if kind == "adamw" else "torch_math",
           "B": args.b, "H": args.heads, "N": n, "d": args.width // args.heads, "causal": True, "dtype": "bf16",
           "layers": args.layers, "width": args.width, "hessian_interval": args.hessian_interval,
           "gpu": gpu, "commit": args.commit}
    run = None
    try:
        run = Run(kind, args, n)
        x, y = batch(args, n, n)
        plain, refresh = [], []
        peak = {False: 0, True: 0}  # by step kind: refreshed the Hessian or not
        for i in range(args.warmup + args.steps):
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            t0 = time.perf_counter()
            loss, _, hess = run.step(x, y)
            torch.cuda.synchronize()
            if i >= args.warmup:
                (refresh if hess else plain).append((time.perf_counter() - t0) * 1e3)
                peak[hess] = max(peak[hess], torch.cuda.max_memory_allocated())
        med = lambda v: sorted(v)[len(v) // 2] if v else 0.0  # noqa: E731
        k = args.hessian_interval
        ms = (med(refresh) + (k - 1) * med(plain)) / k if refresh and plain else med(plain or refresh)
        rec.update(oom=False, ms=ms, ms_plain=med(plain), ms_refresh=med(refresh),
                   tokens_per_s=args.b * n / (ms * 1e-3), peak_bytes=max(peak.values()),
                   peak_bytes_plain=peak[False], peak_bytes_refresh=peak[True], final_loss=loss)
    except torch.cuda.OutOfMemoryError as e:
        rec.update(oom=True, error=str(e).splitlines()[0])
    del run
    gc.collect()
    torch.cuda.empty_cache()
    return rec


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", default="512,4096,23400,32768")
    p.add_argument("--optimizers", default="adamw,sophia_h")
    p.add_argument("--b", type=int, default=1)
    p.add_argument("--width", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--kv-heads", type=int, default=0)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--hessian-interval", type=int, default=10)
    p.add_argument("--curve-dir", default="")
    p.add_argument("--curve-steps", type=int, default=0)
    p.add_argument("--json", default="")
    p.add_argument("--commit", default="unknown")
    args = p.parse_args()
    args.kv_heads = args.kv_heads or args.heads
    gpu = torch.cuda.get_device_name(0)
    for kind in args.optimizers.split(","):
        for n in (int(v) for v in args.n.split(",")):
            rec = timing(args, kind, n, gpu)
            emit(rec, args.json)
            if rec["oom"]:
                break  # longer sequences need more
    if args.curve_dir and args.curve_steps:
        init = read_safetensors(f"{args.curve_dir}/model.safetensors")
        data = read_safetensors(f"{args.curve_dir}/data.safetensors")
        batches = sum(1 for k in data if k.startswith("ticks."))
        n = data["ticks.0"].shape[1]
        for kind in args.optimizers.split(","):
            try:
                run = Run(kind, args, n, init)
                for s in range(args.curve_steps):
                    x = torch.from_numpy(data[f"ticks.{s % batches}"].copy()).cuda()
                    y = torch.from_numpy(data[f"labels.{s % batches}"].astype(np.int64)).cuda()
                    loss, norm, hess = run.step(x, y)
                    emit({"bench": "train_step", "op": "loss_curve", "optimizer": kind,
                          "impl": "torch_sdpa" if kind == "adamw" else "torch_math", "B": args.b, "N": n,
                          "step": s + 1, "loss": loss, "grad_norm": norm, "hessian_refreshed": hess,
                          "gpu": gpu, "commit": args.commit}, args.json)
            except torch.cuda.OutOfMemoryError as e:
                emit({"bench": "train_step", "op": "loss_curve", "optimizer": kind, "N": n, "oom": True,
                      "error": str(e).splitlines()[0], "gpu": gpu, "commit": args.commit}, args.json)
            run = None
            gc.collect()
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
