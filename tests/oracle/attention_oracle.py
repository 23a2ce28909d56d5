"""JAX float64 oracle for attention forward and its VJP (tests/oracle).

Usage: python attention_oracle.py OUTDIR B,T,H,Hkv,D,causal [B,T,H,Hkv,D,causal ...]
For case i writes OUTDIR/attention_<i>.safetensors (all F64) with the inputs
q [B,T,H,D], k, v [B,T,Hkv,D], do [B,T,H,D] (standard normal, seed 1000 + i, rounded
to values exact in both bf16 and fp16 so a CUDA run reads exactly these inputs) and
JAX's o [B,T,H,D], lse [B,H,T] (natural log), dvec = rowsum(do*o) [B,H,T] and
dq, dk, dv = jax.vjp(attention, q, k, v)(do). scale = 1/sqrt(D); causal: j <= i;
GQA: query head h reads kv head h // (H // Hkv). The math is kernels/ops/attention.h.
"""
import json
import os
import struct
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # the oracle runs on the CPU, even on a GPU host

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402  (a jax dependency)
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)


def scores(q, k, causal):
    """q [B,T,H,D], k [B,T,Hkv,D] -> scale·Q Kᵀ [B,H,T,T], -inf above the diagonal if causal."""
    group = q.shape[2] // k.shape[2]
    s = jnp.einsum("bihd,bjhd->bhij", q, jnp.repeat(k, group, axis=2)) / np.sqrt(q.shape[3])
    if causal:
        t = q.shape[1]
        s = jnp.where(jnp.tril(jnp.ones((t, t), dtype=bool)), s, -jnp.inf)
    return s


def attention(q, k, v, causal):
    group = q.shape[2] // k.shape[2]
    p = jax.nn.softmax(scores(q, k, causal), axis=-1)
    return jnp.einsum("bhij,bjhd->bihd", p, jnp.repeat(v, group, axis=2))


def save_safetensors(tensors, path, metadata):
    """Writes F64 tensors in the safetensors format (8-byte little-endian header length,
    JSON header, then the data), without needing the safetensors package."""
    header, offset, blobs = {"__metadata__": metadata}, 0, []
    for name in sorted(tensors):
        blob = np.ascontiguousarray(tensors[name], dtype="<f8").tobytes()
        header[name] = {"dtype": "F64", "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # the data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for blob in blobs:
            f.write(blob)


def exact16(x):
    """Rounds to bf16, then to fp16: values exact in both 16-bit formats."""
    return x.astype(ml_dtypes.bfloat16).astype(np.float16).astype(np.float64)


def solve(index, spec, outdir):
    b, t, h, hkv, d, causal = (int(x) for x in spec.split(","))
    rng = np.random.default_rng(1000 + index)
    q = exact16(rng.standard_normal((b, t, h, d)))
    k = exact16(rng.standard_normal((b, t, hkv, d)))
    v = exact16(rng.standard_normal((b, t, hkv, d)))
    do = exact16(rng.standard_normal((b, t, h, d)))
    o, vjp = jax.vjp(lambda q_, k_, v_: attention(q_, k_, v_, bool(causal)), q, k, v)
    dq, dk, dv = vjp(do)
    lse = jax.nn.logsumexp(scores(q, k, bool(causal)), axis=-1)
    dvec = jnp.sum(do * o, axis=-1).transpose(0, 2, 1)  # [B,T,H] -> [B,H,T]
    out = {"q": q, "k": k, "v": v, "do": do, "o": o, "lse": lse, "dvec": dvec,
           "dq": dq, "dk": dk, "dv": dv}
    out = {name: np.ascontiguousarray(np.asarray(x, dtype=np.float64)) for name, x in out.items()}
    save_safetensors(out, os.path.join(outdir, f"attention_{index}.safetensors"), {"shape": spec})


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for i, spec in enumerate(sys.argv[2:]):
        solve(i, spec, outdir)


if __name__ == "__main__":
    main()
