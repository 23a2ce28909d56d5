"""JAX float64 oracle for attention backward-over-backward (tests/bob).

For each input file (written by WriteOracleInput in tests/bob/bob_problem.cc:
int64 B, T, H, Hkv, D, causal; float64 scale; then Q, dO, gQ as [B, T, H, D] and
K, V, gK, gV as [B, T, Hkv, D], in the order Q K V dO gQ gK gV) writes <file>.out:
∂Q, ∂K, ∂V, ∂dO = jax.vjp of (Q, K, V, dO) ↦ jax.vjp(attention)(dO) at (gQ, gK, gV),
then O, L (natural-log log-sum-exp, [B, H, T]) and Dvec = rowsum(dO∘O) ([B, H, T]).
Usage: python jax_oracle.py case0.bin [case1.bin ...]
"""
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # the oracle runs on the CPU, even on a GPU host

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)


def scores(q, k, causal, scale):
    """q [B,T,H,D], k [B,T,Hkv,D] -> masked S [B,H,T,T] (query head h reads kv head h//group)."""
    group = q.shape[2] // k.shape[2]
    kk = jnp.repeat(k, group, axis=2)
    s = scale * jnp.einsum("bihd,bjhd->bhij", q, kk)
    if causal:
        t = q.shape[1]
        s = jnp.where(jnp.tril(jnp.ones((t, t), dtype=bool)), s, -jnp.inf)
    return s


def attention(q, k, v, causal, scale):
    group = q.shape[2] // k.shape[2]
    p = jax.nn.softmax(scores(q, k, causal, scale), axis=-1)
    return jnp.einsum("bhij,bjhd->bihd", p, jnp.repeat(v, group, axis=2))


def solve(path):
    raw = open(path, "rb").read()
    b, t, h, hkv, d, causal = np.frombuffer(raw[:48], dtype=np.int64)
    scale = float(np.frombuffer(raw[48:56], dtype=np.float64)[0])
    data = np.frombuffer(raw[56:], dtype=np.float64)
    causal = bool(causal)
    nq, nk = b * t * h * d, b * t * hkv * d
    sizes = [nq, nk, nk, nq, nq, nk, nk]
    shapes = [(b, t, h, d), (b, t, hkv, d), (b, t, hkv, d), (b, t, h, d), (b, t, h, d),
              (b, t, hkv, d), (b, t, hkv, d)]
    arrays, at = [], 0
    for n, shp in zip(sizes, shapes):
        arrays.append(jnp.asarray(data[at:at + n].reshape(shp)))
        at += n
    assert at == data.size, f"{path}: {data.size} values, expected {at}"
    q, k, v, do, gq, gk, gv = arrays

    def first_bwd(q, k, v, do):
        _, vjp = jax.vjp(lambda a, bb, c: attention(a, bb, c, causal, scale), q, k, v)
        return vjp(do)

    def second_bwd(q, k, v, do, gq, gk, gv):
        _, vjp2 = jax.vjp(first_bwd, q, k, v, do)
        return vjp2((gq, gk, gv))

    # One XLA compilation per case: about half the time of op-by-op dispatch here.
    ddq, ddk, ddv, dddo = jax.jit(second_bwd)(q, k, v, do, gq, gk, gv)
    o = attention(q, k, v, causal, scale)
    lse = jax.scipy.special.logsumexp(scores(q, k, causal, scale), axis=-1)  # [B,H,T]
    dvec = jnp.einsum("bihd,bihd->bhi", do, o)
    with open(path + ".out", "wb") as f:
        for x in (ddq, ddk, ddv, dddo, o, lse, dvec):
            f.write(np.ascontiguousarray(np.asarray(x, dtype=np.float64)).tobytes())


def main():
    for path in sys.argv[1:]:
        solve(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
