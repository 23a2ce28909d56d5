"""JAX float64 oracle of the whole tick transformer (tests/trainer/model_oracle_test.cc).

Usage: jax_model_oracle.py <dir> [<dir> ...] (one interpreter for every case: JAX start-up
dominates on a small machine). For each dir, reads <dir>/config.json (model/config.h),
<dir>/weights.safetensors (our weights, tensor names of model/transformer.h) and
<dir>/inputs.safetensors (ticks F32 [B,T,F], labels I32 [B,T] with -1 = ignore, probes
"v<i>.<name>"), and writes <dir>/oracle.safetensors with the mean cross-entropy over
labelled steps ("loss"), its gradient ("grad.<name>") and the Hessian-vector products
("hv<i>.<name>"). The model is written here independently of our C++: embedding,
interleaved-pair RoPE, causal grouped-query attention, pre-norm blocks, tanh GELU,
final LayerNorm, 3-class head. The HVP is forward-over-reverse (jax.jvp of jax.grad),
a different route from ours (reverse over reverse).
"""
import json
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from safetensors.numpy import load_file, save_file  # noqa: E402

jax.config.update("jax_enable_x64", True)


def layernorm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return g * (x - mu) / jnp.sqrt(var + eps) + b


def rope(x, theta, rotary_dims=-1):
    """x [B, T, H, D]; pairs (2i, 2i+1), i < R/2, rotated by t·theta^(-2i/R); dims from
    R = rotary_dims (-1: all D) on pass through (partial rotary)."""
    _, t, _, d = x.shape
    r = d if rotary_dims < 0 else rotary_dims
    xr, rest = x[..., :r], x[..., r:]
    inv = theta ** (-2.0 * jnp.arange(r // 2) / max(r, 1))
    ang = jnp.arange(t)[:, None] * inv[None, :]  # [T, R/2]
    c, s = jnp.cos(ang)[None, :, None, :], jnp.sin(ang)[None, :, None, :]
    x0, x1 = xr[..., 0::2], xr[..., 1::2]
    y0, y1 = x0 * c - x1 * s, x0 * s + x1 * c
    return jnp.concatenate([jnp.stack([y0, y1], axis=-1).reshape(xr.shape), rest], axis=-1)


def attention(q, k, v):
    """Causal; q [B,T,H,D], k/v [B,T,Hkv,D]; query head h reads kv head h // (H/Hkv)."""
    group = q.shape[2] // k.shape[2]
    k, v = jnp.repeat(k, group, axis=2), jnp.repeat(v, group, axis=2)
    s = jnp.einsum("bihd,bjhd->bhij", q, k) / jnp.sqrt(q.shape[-1])
    t = q.shape[1]
    s = jnp.where(jnp.tril(jnp.ones((t, t), dtype=bool)), s, -jnp.inf)
    return jnp.einsum("bhij,bjhd->bihd", jax.nn.softmax(s, axis=-1), v)


def encode_inputs(cfg, x):
    """The model's input encoding, written from its description (docs/model.md,
    "Fourier input features"): column j = fourier_feature is dropped and
    sin(2*pi*x_j/p), cos(2*pi*x_j/p) for each period p are appended after the other
    columns; the encoded values are float32, as the model is given them."""
    j = cfg.get("fourier_feature", -1)
    if j < 0:
        return x
    x = np.asarray(x, dtype=np.float64)
    a = x[..., j:j + 1] * (2 * np.pi / np.asarray(cfg["fourier_periods"], dtype=np.float64))
    sc = np.stack([np.sin(a), np.cos(a)], axis=-1).reshape(*a.shape[:-1], -1)
    out = np.concatenate([np.delete(x, j, axis=-1), sc], axis=-1)
    return out.astype(np.float32).astype(np.float64)


def make_loss(cfg, ticks, labels):
    C, H, Hkv = cfg["width"], cfg["heads"], cfg["kv_heads"]
    D = C // H
    eps, theta = cfg["layernorm_eps"], cfg["rope_theta"]
    rot = cfg.get("rotary_dims", -1)
    nope = cfg.get("nope_interval", 0)
    B, T = labels.shape
    mask = labels >= 0
    safe = jnp.where(mask, labels, 0)

    def linear(p, name, x):
        return x @ p[name + ".weight"].T + p[name + ".bias"]

    def loss(p):
        x = linear(p, "embed", ticks)
        for l in range(cfg["layers"]):
            b = f"blocks.{l}."
            a = layernorm(x, p[b + "ln1.weight"], p[b + "ln1.bias"], eps)
            qkv = linear(p, b + "attn.qkv", a)
            # ModelConfig::nope_interval: every k-th layer attends without positions.
            r = 0 if nope > 0 and (l + 1) % nope == 0 else rot
            q = rope(qkv[..., : H * D].reshape(B, T, H, D), theta, r)
            k = rope(qkv[..., H * D:(H + Hkv) * D].reshape(B, T, Hkv, D), theta, r)
            v = qkv[..., (H + Hkv) * D:].reshape(B, T, Hkv, D)
            if l < cfg.get("exclude_self_layers", 0):
                # ModelConfig::exclude_self_layers: keys and values one step later, a zero
                # sink first, so a step attends to the steps before it only.
                k = jnp.concatenate([jnp.zeros_like(k[:, :1]), k[:, :-1]], axis=1)
                v = jnp.concatenate([jnp.zeros_like(v[:, :1]), v[:, :-1]], axis=1)
            x = x + linear(p, b + "attn.proj", attention(q, k, v).reshape(B, T, H * D))
            h = layernorm(x, p[b + "ln2.weight"], p[b + "ln2.bias"], eps)
            x = x + linear(p, b + "mlp.fc2", jax.nn.gelu(linear(p, b + "mlp.fc1", h), approximate=True))
        logits = linear(p, "head", layernorm(x, p["ln_f.weight"], p["ln_f.bias"], eps))
        logp = jax.nn.log_softmax(logits, axis=-1)
        nll = -jnp.take_along_axis(logp, safe[..., None], axis=-1)[..., 0]
        return jnp.sum(jnp.where(mask, nll, 0.0)) / jnp.sum(mask)

    return loss


def solve(d):
    cfg = json.load(open(os.path.join(d, "config.json")))
    weights = {k: jnp.asarray(v, dtype=jnp.float64) for k, v in load_file(os.path.join(d, "weights.safetensors")).items()}
    inputs = load_file(os.path.join(d, "inputs.safetensors"))
    ticks = jnp.asarray(encode_inputs(cfg, inputs["ticks"]), dtype=jnp.float64)
    labels = jnp.asarray(inputs["labels"])
    loss = make_loss(cfg, ticks, labels)
    value, grad = jax.jit(jax.value_and_grad(loss))(weights)
    hvp = jax.jit(lambda w, v: jax.jvp(jax.grad(loss), (w,), (v,))[1])
    out = {"loss": np.array([float(value)])}
    out.update({"grad." + k: np.asarray(v) for k, v in grad.items()})
    i = 0
    while f"v{i}.embed.weight" in inputs:
        probe = {k: jnp.asarray(inputs[f"v{i}.{k}"], dtype=jnp.float64) for k in weights}
        hv = hvp(weights, probe)
        out.update({f"hv{i}.{k}": np.asarray(v) for k, v in hv.items()})
        i += 1
    save_file(out, os.path.join(d, "oracle.safetensors"))


def main():
    for d in sys.argv[1:]:
        solve(d)


if __name__ == "__main__":
    main()
