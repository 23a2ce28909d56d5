#!/usr/bin/env python3
"""PyTorch twin of data_parallel_bench: the same tick transformer and AdamW step as
bench/train_step/torch_train_step.py (imported), on 1 GPU with the whole global batch
and under DistributedDataParallel (NCCL, bucket_cap_mb 25, one process per GPU) with
B/R sequences per GPU: strong scaling of one training step, in the JSON-lines schema
of data_parallel_bench (scaling_efficiency = ms_1 / (R * ms_R)). AdamW only: the torch
Sophia-H twin needs the math attention path for its HVPs, which stores N x N scores
and does not fit at N = 23,400 (train_step results), so there is no DDP twin to time.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "train_step"))
import torch_train_step as tts  # noqa: E402


def time_steps(run, x, y, args, world):
    times, loss = [], 0.0
    for i in range(args.warmup + args.steps):
        torch.cuda.synchronize()
        if world > 1:
            dist.barrier()
        t0 = time.perf_counter()
        loss, _, _ = run.step(x, y)  # float(loss) synchronises
        torch.cuda.synchronize()
        if world > 1:
            dist.barrier()
        if i >= args.warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    return sorted(times)[len(times) // 2], loss


def record(args, world, ms, loss, gpu):
    return {"bench": "data_parallel", "op": "adamw", "impl": "torch_ddp" if world > 1 else "torch_sdpa",
            "replicas": world, "B": args.batch, "N": args.n, "width": args.width, "heads": args.heads,
            "layers": args.layers, "ms": ms, "tokens_per_s": args.batch * args.n / (ms * 1e-3),
            "peak_bytes": torch.cuda.max_memory_allocated(), "final_loss": loss, "gpu": gpu,
            "commit": args.commit}


def worker(rank, world, args, queue):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(args.port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    try:
        args.b = args.batch // world
        run = tts.Run("adamw", args, args.n)
        run.model = torch.nn.parallel.DistributedDataParallel(run.model, device_ids=[rank], bucket_cap_mb=25)
        x, y = tts.batch(args, args.n, 1000 + rank)  # each rank its own shard
        ms, loss = time_steps(run, x, y, args, world)
        if rank == 0:
            queue.put(record(args, world, ms, loss, torch.cuda.get_device_name(0)))
    except Exception as e:  # noqa: BLE001 - reported as a JSON line
        if rank == 0:
            queue.put({"bench": "data_parallel", "impl": "torch_ddp", "replicas": world, "error": repr(e)})
    finally:
        dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=23400)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--replicas", default="1,2")
    p.add_argument("--width", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--port", type=int, default=29533)
    p.add_argument("--commit", default="unknown")
    args = p.parse_args()
    args.kv_heads, args.hessian_interval = args.heads, 10
    ms1 = 0.0
    for world in (int(v) for v in args.replicas.split(",")):
        if world > torch.cuda.device_count():
            print(json.dumps({"bench": "data_parallel", "impl": "torch_ddp", "replicas": world,
                              "error": f"needs {world} GPUs, found {torch.cuda.device_count()}"}), flush=True)
            continue
        if world == 1:
            args.b = args.batch
            run = tts.Run("adamw", args, args.n)
            x, y = tts.batch(args, args.n, 1000)
            torch.cuda.reset_peak_memory_stats()
            ms, loss = time_steps(run, x, y, args, 1)
            rec = record(args, 1, ms, loss, torch.cuda.get_device_name(0))
            del run, x, y
            torch.cuda.empty_cache()
        else:
            queue = mp.get_context("spawn").SimpleQueue()
            mp.spawn(worker, args=(world, args, queue), nprocs=world, join=True)
            rec = queue.get()
        if "ms" in rec:
            ms1 = rec["ms"] if world == 1 else ms1
            if ms1:
                rec["scaling_efficiency"] = ms1 / (world * rec["ms"])
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
