"""PyTorch side of the bob benchmark, run on the GPU machine in the same
session as bench/bob/bob_bench:

  time   PyTorch's math-path double backward of causal attention (the second backward
         alone: autograd.grad of (dQ, dK, dV) w.r.t. (Q, K, V, dO) with cotangents gQ, gK,
         gV, all non-zero) per N until it runs out of memory (then oom: true and stop).
  prec   the precision table: flashtick's bf16 outputs (dumped by bob_bench --dump-dir)
         against a float64 reference computed here on the GPU from the same bf16 inputs,
         in query-row chunks from the closed forms of docs/derivations/attention_bwd_bwd.md
         (memory chunk × N, never N × N). The reference is first checked against
         torch.autograd double backward in float64 at a small N.

Output: JSON lines (docs/benchmarks.md schema) on stdout and appended to --json.
FLOPs: 17 matmul units of 2·B·H·N²·d, halved causal (same convention as bob_bench).
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

MATMUL_UNITS = 17


def flops(b, h, n, d, causal, units=MATMUL_UNITS):
    unit = 2.0 * b * h * n * n * d
    return units * (unit / 2 if causal else unit)


def emit(rec, path):
    line = json.dumps(rec)
    print(line, flush=True)
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def time_torch_math(n, args):
    """Median ms of the second backward on the math SDPA path; (ms, peak_extra_bytes)."""
    torch.cuda.empty_cache()
    dev, dt = "cuda", torch.bfloat16
    g = torch.Generator(device=dev).manual_seed(n)
    shape = (args.b, args.h, n, args.d)
    mk = lambda: torch.randn(shape, device=dev, dtype=dt, generator=g)  # noqa: E731
    q, k, v, do = (mk().requires_grad_() for _ in range(4))
    gq, gk, gv = mk(), mk(), mk()
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    times = []
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    reps = None
    with sdpa_kernel(SDPBackend.MATH):
        r = -1
        while reps is None or r < reps:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=args.causal)
            dq, dk, dv = torch.autograd.grad(o, (q, k, v), do, create_graph=True)
            flush.random_()
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.autograd.grad((dq, dk, dv), (q, k, v, do), (gq, gk, gv))
            stop.record()
            torch.cuda.synchronize()
            ms = start.elapsed_time(stop)
            del o, dq, dk, dv
            if r == -1:
                reps = max(3, min(10, int(2000 / max(ms, 1e-3))))
            else:
                times.append(ms)
            r += 1
    peak_extra = torch.cuda.max_memory_allocated() - base
    return float(np.median(times)), int(peak_extra)


def reference_f64(q, k, v, do, gq, gk, gv, causal, chunk):
    """Closed forms (0)-(14), float64, [T, H, D] / [T, Hkv, D] tensors; chunked rows."""
    t, h, d = q.shape
    group = h // k.shape[1]
    s = 1.0 / math.sqrt(d)
    ddq, dddo = torch.zeros_like(q), torch.zeros_like(q)
    ddk, ddv = torch.zeros_like(k), torch.zeros_like(v)
    cols = torch.arange(t, device=q.device)
    for hh in range(h):
        g = hh // group
        K, V, gK, gV = k[:, g], v[:, g], gk[:, g], gv[:, g]
        for r0 in range(0, t, chunk):
            r1 = min(t, r0 + chunk)
            Q, dO, gQ = q[r0:r1, hh], do[r0:r1, hh], gq[r0:r1, hh]
            S = s * Q @ K.T
            if causal:
                S = S.masked_fill(cols[None, :] > torch.arange(r0, r1, device=q.device)[:, None],
                                  float("-inf"))
            P = torch.softmax(S, dim=-1)
            del S
            O = P @ V
            Dv = (dO * O).sum(-1, keepdim=True)                 # (0)
            dP = dO @ V.T
            G = s * (gQ @ K.T + Q @ gK.T)                       # (1)
            c = (P * G).sum(-1, keepdim=True)                   # (3)
            Hm = (dP - Dv) * G - c * dP + dO @ gV.T             # (4), (2)
            e = (P * Hm).sum(-1, keepdim=True)                  # (5)
            dS = P * (dP - Dv)
            dS2 = P * (Hm - e)                                  # (11)
            PGc = P * (G - c)
            del Hm, dP, G
            dddo[r0:r1, hh] = P @ gV + PGc @ V                  # (9)
            ddq[r0:r1, hh] = s * (dS @ gK + dS2 @ K)            # (13)
            ddk[:, g] += s * (dS.T @ gQ + dS2.T @ Q)            # (14)
            ddv[:, g] += PGc.T @ dO                             # (10)
    return ddq, ddk, ddv, dddo


def check_reference():
    """The chunked float64 reference equals autograd's double backward at small N."""
    torch.manual_seed(0)
    t, h, hkv, d = 70, 4, 2, 16
    dev = "cuda"
    q, do, gq = (torch.randn(t, h, d, dtype=torch.float64, device=dev) for _ in range(3))
    k, v, gk, gv = (torch.randn(t, hkv, d, dtype=torch.float64, device=dev) for _ in range(4))
    for causal in (True, False):
        ref = reference_f64(q, k, v, do, gq, gk, gv, causal, chunk=32)
        qa, ka, va, doa = (x.clone().requires_grad_() for x in (q, k, v, do))

        def attn(qq, kk, vv):
            rep = lambda x: x.repeat_interleave(h // hkv, dim=1).transpose(0, 1)  # noqa: E731
            return F.scaled_dot_product_attention(qq.transpose(0, 1), rep(kk), rep(vv),
                                                  is_causal=causal).transpose(0, 1)
        with sdpa_kernel(SDPBackend.MATH):
            o = attn(qa, ka, va)
            grads = torch.autograd.grad(o, (qa, ka, va), doa, create_graph=True)
            auto = torch.autograd.grad(grads, (qa, ka, va, doa), (gq, gk, gv))
        for a, b in zip(auto, ref):
            err = ((a - b).norm() / a.norm()).item()
            if not err < 1e-10:
                raise SystemExit(f"float64 reference disagrees with autograd: {err}")


def load_bf16(path, shape):
    bits = np.fromfile(path, dtype=np.uint16).astype(np.uint32) << 16
    return torch.from_numpy(bits.view(np.float32).reshape(shape)).double().cuda()


def precision(args):
    check_reference()
    for n in args.n:
        stem = os.path.join(args.dump_dir, f"bob_N{n}")
        if not os.path.exists(stem + ".json"):
            continue
        meta = json.load(open(stem + ".json"))
        b, t, h, hkv, d = (meta[x] for x in ("B", "T", "H", "Hkv", "D"))
        assert b == 1, "the precision table is for B = 1"
        qs, ks = (t, h, d), (t, hkv, d)
        ins = [load_bf16(f"{stem}_{x}.bf16", s) for x, s in
               (("q", qs), ("k", ks), ("v", ks), ("dout", qs), ("gq", qs), ("gk", ks), ("gv", ks))]
        got = [load_bf16(f"{stem}_{x}.bf16", s) for x, s in
               (("ddq", qs), ("ddk", ks), ("ddv", ks), ("dddo", qs))]
        ref = reference_f64(*ins, meta["causal"], chunk=max(256, (1 << 29) // (t * 8 * 8)))
        rec = {"bench": "bob", "op": "bwd_bwd_precision", "impl": "flashtick_flash_cuda",
               "B": b, "H": h, "Hkv": hkv, "N": t, "d": d, "causal": meta["causal"],
               "dtype": "bf16", "reference": "float64 (GPU, closed forms)",
               "gpu": torch.cuda.get_device_name(), "commit": args.commit}
        num = den = 0.0
        for name, gg, rr in zip(("dq", "dk", "dv", "ddo"), got, ref):
            rec[f"rel_l2_{name}"] = ((gg - rr).norm() / rr.norm()).item()
            num += (gg - rr).norm().item() ** 2
            den += rr.norm().item() ** 2
        rec["rel_l2_all"] = math.sqrt(num / den)
        emit(rec, args.json)
        del ins, got, ref
        torch.cuda.empty_cache()


def timing(args):
    gpu = torch.cuda.get_device_name()
    for n in args.n:
        rec = {"bench": "bob", "op": "bwd_bwd", "impl": "torch_math", "B": args.b, "H": args.h,
               "Hkv": args.h, "N": n, "d": args.d, "causal": args.causal, "dtype": "bf16",
               "gpu": gpu, "commit": args.commit}
        try:
            ms, peak = time_torch_math(n, args)
            rec.update(ms=ms, tflops=flops(args.b, args.h, n, args.d, args.causal) / (ms * 1e-3) / 1e12,
                       peak_extra_bytes=peak, oom=False)
            emit(rec, args.json)
        except torch.cuda.OutOfMemoryError as err:
            rec.update(oom=True, error=str(err).splitlines()[0])
            emit(rec, args.json)
            break  # larger N only needs more memory
        finally:
            torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("time", "prec"))
    ap.add_argument("--n", default="2048,4096,8192,16384,23400,32768,65536,131072,262144")
    ap.add_argument("--b", type=int, default=1)
    ap.add_argument("--h", type=int, default=12)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--non-causal", dest="causal", action="store_false")
    ap.add_argument("--json", default="")
    ap.add_argument("--dump-dir", default="")
    ap.add_argument("--commit", default="unknown")
    args = ap.parse_args()
    args.n = [int(x) for x in args.n.split(",")]
    if not torch.cuda.is_available():
        raise SystemExit("torch_bob.py needs a CUDA GPU")
    if args.mode == "time":
        timing(args)
    else:
        precision(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
