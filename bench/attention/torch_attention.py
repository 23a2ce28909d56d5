#!/usr/bin/env python3
"""PyTorch's attention beside bench_attention, in the same JSON-lines schema.

For each N and head dim, on (B, H, N, d) bf16 inputs, causal by default:
  impl torch_sdpa_flash : F.scaled_dot_product_attention under SDPBackend.FLASH_ATTENTION
  impl torch_cudnn      : the same under SDPBackend.CUDNN_ATTENTION
  op fwd                : forward only (no autograd graph)
  op fwd+bwd            : forward + torch.autograd.grad of (q, k, v) with a fixed dO
ms is the median of CUDA-event-timed reps with L2 flushed (zeroing a buffer of 2x the L2)
before each, as bench_attention does; TFLOP/s by the FlashAttention convention
(forward 4*B*H*N^2*d, halved when causal; backward 2.5x forward); peak_extra_bytes is
torch.cuda.max_memory_allocated() above the inputs. oom: true where the GPU ran out of
memory; error: the backend refused the shape.
Usage: torch_attention.py [--n 2048,...] [--d 64,128] [--batch 1] [--heads 12]
       [--noncausal] [--commit SHA] [--max-reps 10]
"""
import argparse
import json

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"torch_sdpa_flash": SDPBackend.FLASH_ATTENTION, "torch_cudnn": SDPBackend.CUDNN_ATTENTION}


def median_ms(fn, flush, max_reps, budget_ms=3000.0):
    fn()  # warm-up
    torch.cuda.synchronize()
    times = []
    for rep in range(max_reps):
        flush.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
        if rep + 1 >= 3 and times[-1] * (rep + 1) > budget_ms:
            break
    times.sort()
    return times[len(times) // 2]


def measure(impl, op, args, n, d, flush):
    B, H = args.batch, args.heads
    torch.cuda.empty_cache()
    g = torch.Generator(device="cuda").manual_seed(n * 1000 + d)
    mk = lambda: torch.randn(B, H, n, d, device="cuda", dtype=torch.bfloat16, generator=g)
    q, k, v = (mk().requires_grad_(True) for _ in range(3))
    do = mk()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    causal = not args.noncausal
    fwd_flops = 4.0 * B * H * n * n * d / (2 if causal else 1)
    backend = BACKENDS[impl]

    if op == "fwd":
        def fn():
            with sdpa_kernel(backend), torch.no_grad():
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        flops = fwd_flops
    else:
        def fn():
            with sdpa_kernel(backend):
                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                torch.autograd.grad(o, (q, k, v), do)
        flops = 3.5 * fwd_flops
    line = {"bench": "attention", "op": op, "impl": impl, "B": B, "H": H, "N": n, "d": d,
            "causal": causal, "dtype": "bf16"}
    try:
        ms = median_ms(fn, flush, args.max_reps)
        line.update(ms=round(ms, 4), tflops=round(flops / (ms * 1e-3) / 1e12, 2),
                    peak_extra_bytes=int(torch.cuda.max_memory_allocated() - base), oom=False)
    except torch.OutOfMemoryError:
        line.update(ms=None, tflops=None, peak_extra_bytes=None, oom=True)
    except RuntimeError as e:  # the backend refused this shape
        line.update(ms=None, tflops=None, peak_extra_bytes=None, oom=False,
                    error=f"{type(e).__name__}: {e}".replace("\n", " ")[:300])
    line.update(gpu=torch.cuda.get_device_name(), commit=args.commit)
    del q, k, v, do
    return line


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", default="2048,4096,8192,16384,23400,32768,65536,131072,262144")
    p.add_argument("--d", default="64,128")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--noncausal", action="store_true")
    p.add_argument("--commit", default="unknown")
    p.add_argument("--max-reps", type=int, default=10)
    args = p.parse_args()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * max(l2, 1 << 20), dtype=torch.uint8, device="cuda")
    dead = set()  # (impl, op, d) that ran out of memory at a smaller N
    for d in map(int, args.d.split(",")):
        for n in map(int, args.n.split(",")):
            for impl in BACKENDS:
                for op in ("fwd", "fwd+bwd"):
                    if (impl, op, d) in dead:
                        line = {"bench": "attention", "op": op, "impl": impl, "B": args.batch,
                                "H": args.heads, "N": n, "d": d, "causal": not args.noncausal,
                                "dtype": "bf16", "ms": None, "tflops": None,
                                "peak_extra_bytes": None, "oom": True,
                                "gpu": torch.cuda.get_device_name(), "commit": args.commit}
                    else:
                        line = measure(impl, op, args, n, d, flush)
                        if line["oom"]:
                            dead.add((impl, op, d))
                    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
