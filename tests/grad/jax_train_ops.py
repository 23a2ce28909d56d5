"""JAX float64 oracle for the training ops (tests/grad/train_ops_jax_test.cc).

Writes one JSON file (path = argv[1]) with seeded inputs and JAX's outputs for each
case: the VJP (jax.vjp) of LayerNorm, tanh-GELU and per-row softmax cross-entropy, the
VJP of those VJPs (second order), BiasGrad, and several AdamW / Sophia-H steps written
from the published updates. Floats are written with repr, so they round-trip exactly.
"""
import json
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # the oracle runs on the CPU

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)
EPS_LN = float(np.float32(1e-5))  # OpDesc holds eps as fp32; use the value the op sees
IGNORE = -1


def layernorm(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return g * (x - mu) / jnp.sqrt(var + EPS_LN) + b


def gelu(x):
    return jax.nn.gelu(x, approximate=True)


def ce_rows(z, y):
    """Per-row loss logsumexp(z) − z[y]; 0 where y == IGNORE."""
    lse = jax.scipy.special.logsumexp(z, axis=-1)
    safe = jnp.where(y == IGNORE, 0, y)
    picked = jnp.take_along_axis(z, safe[:, None], axis=-1)[:, 0]
    return jnp.where(y == IGNORE, 0.0, lse - picked)


def t(a):
    a = np.asarray(a)
    return {"shape": list(a.shape), "data": [float(v) for v in a.reshape(-1)]}


def ti(a):
    a = np.asarray(a)
    return {"shape": list(a.shape), "data": [int(v) for v in a.reshape(-1)]}


def layernorm_cases(rng):
    out = []
    for m, c in [(7, 16), (1, 3), (130, 5)]:
        x = rng.normal(size=(m, c)) * 1.5 + rng.normal(size=(m, 1))
        g, b = rng.normal(size=c), rng.normal(size=c)
        dy, gx, gg, gb = rng.normal(size=(m, c)), rng.normal(size=(m, c)), rng.normal(size=c), rng.normal(size=c)
        _, vjp = jax.vjp(layernorm, x, g, b)
        dx, dg, db = vjp(dy)

        def bwd(x_, g_, dy_):
            return jax.vjp(layernorm, x_, g_, b)[1](dy_)

        _, vjp2 = jax.vjp(bwd, x, g, dy)
        d_x, d_g, d_dy = vjp2((gx, gg, gb))
        out.append({"op": "layernorm_bwd", "inputs": {"x": t(x), "gamma": t(g), "dy": t(dy)},
                    "outputs": {"dx": t(dx), "dgamma": t(dg), "dbeta": t(db)}})
        out.append({"op": "layernorm_bwd_bwd",
                    "inputs": {"x": t(x), "gamma": t(g), "dy": t(dy), "gx": t(gx), "ggamma": t(gg), "gbeta": t(gb)},
                    "outputs": {"dx": t(d_x), "dgamma": t(d_g), "ddy": t(d_dy)}})
    return out


def gelu_cases(rng):
    x = rng.normal(size=(5, 11)) * 3.0
    dy, gdx = rng.normal(size=x.shape), rng.normal(size=x.shape)
    dx = jax.vjp(gelu, x)[1](dy)[0]
    d_x, d_dy = jax.vjp(lambda x_, dy_: jax.vjp(gelu, x_)[1](dy_)[0], x, dy)[1](gdx)
    return [{"op": "gelu_bwd", "inputs": {"x": t(x), "dy": t(dy)}, "outputs": {"dx": t(dx)}},
            {"op": "gelu_bwd_bwd", "inputs": {"x": t(x), "dy": t(dy), "gdx": t(gdx)},
             "outputs": {"dx": t(d_x), "ddy": t(d_dy)}}]


def ce_cases(rng):
    out = []
    for m, k in [(11, 3), (6, 5)]:
        z = rng.normal(size=(m, k)) * 2.0
        y = rng.integers(0, k, size=m).astype(np.int32)
        y[::4] = IGNORE
        w, g = rng.normal(size=m), rng.normal(size=(m, k))
        loss = ce_rows(z, y)
        dz = jax.vjp(lambda z_: ce_rows(z_, y), z)[1](w)[0]
        bwd = lambda z_, w_: jax.vjp(lambda zz: ce_rows(zz, y), z_)[1](w_)[0]  # noqa: E731
        d_z, d_w = jax.vjp(bwd, z, w)[1](g)
        out.append({"op": "cross_entropy", "inputs": {"z": t(z), "y": ti(y), "w": t(w), "g": t(g)},
                    "outputs": {"loss": t(loss), "dz": t(dz), "ddz": t(d_z), "ddw": t(d_w)}})
    return out


def bias_case(rng):
    dy = rng.normal(size=(2, 150, 7))
    return [{"op": "bias_grad", "inputs": {"dy": t(dy)}, "outputs": {"db": t(jnp.sum(dy, axis=(0, 1)))}}]


def optimizer_cases(rng):
    n, steps = 23, 5
    a = {"lr": 0.01, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8, "weight_decay": 0.1, "grad_scale": 0.5,
         "rho": 0.04}
    # The attrs are fp32 in OpDesc: use the fp32-rounded values, as the op sees them.
    a = {k: float(np.float32(v)) for k, v in a.items()}
    p0 = rng.normal(size=n)
    grads = rng.normal(size=(steps, n))
    hhats = rng.normal(size=(steps, n)) * 3.0
    refresh = [s % 2 == 0 for s in range(steps)]  # k = 2
    p, m, v = p0.copy(), np.zeros(n), np.zeros(n)
    for s in range(steps):
        g = a["grad_scale"] * grads[s]
        m = a["beta1"] * m + (1 - a["beta1"]) * g
        v = a["beta2"] * v + (1 - a["beta2"]) * g * g
        mhat, vhat = m / (1 - a["beta1"] ** (s + 1)), v / (1 - a["beta2"] ** (s + 1))
        p = p * (1 - a["lr"] * a["weight_decay"]) - a["lr"] * mhat / (np.sqrt(vhat) + a["eps"])
    adam = {"op": "adamw", "attrs": a, "inputs": {"p0": t(p0), "grads": t(grads)},
            "outputs": {"p": t(p), "m": t(m), "v": t(v)}}
    sa = dict(a, beta1=float(np.float32(0.96)), beta2=float(np.float32(0.99)), eps=float(np.float32(1e-12)))
    p, m, h = p0.copy(), np.zeros(n), np.zeros(n)
    for s in range(steps):  # Liu et al. 2023, Algorithm 3
        g = sa["grad_scale"] * grads[s]
        m = sa["beta1"] * m + (1 - sa["beta1"]) * g
        if refresh[s]:
            h = sa["beta2"] * h + (1 - sa["beta2"]) * hhats[s]
        p = p - sa["lr"] * sa["weight_decay"] * p
        p = p - sa["lr"] * np.clip(m / np.maximum(sa["rho"] * h, sa["eps"]), -1.0, 1.0)
    sophia = {"op": "sophia_h", "attrs": sa,
              "inputs": {"p0": t(p0), "grads": t(grads), "hhats": t(hhats), "refresh": [int(r) for r in refresh]},
              "outputs": {"p": t(p), "m": t(m), "h": t(h)}}
    return [adam, sophia]


def main():
    rng = np.random.default_rng(20260)
    cases = layernorm_cases(rng) + gelu_cases(rng) + ce_cases(rng) + bias_case(rng) + optimizer_cases(rng)
    with open(sys.argv[1], "w") as f:
        json.dump({"cases": cases}, f)


if __name__ == "__main__":
    main()
