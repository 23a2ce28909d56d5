"""Float64 NumPy forward of the flashtick tick transformer (model/transformer.h), written
from the architecture description, independent of the C++ code. Used as the oracle by
tests/model/transformer_test.cc.

usage: numpy_forward.py <model_dir> <B> <T>   reads <dir>/ticks.f32 [B, T, F], writes
<dir>/probs.f64 [B, T, classes].
"""
import json
import sys

import numpy as np
from safetensors.numpy import load_file


def layernorm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def rope(x, theta, rotary_dims=-1):
    # x [B, T, H, D]; interleaved pairs (2i, 2i+1), i < R/2, rotated by t * theta^(-2i/R);
    # dims from R = rotary_dims (-1: all D) on pass through (partial rotary)
    _, t_len, _, d = x.shape
    r = d if rotary_dims < 0 else rotary_dims
    inv = theta ** (-np.arange(0, r, 2, dtype=np.float64) / max(r, 1))
    ang = np.arange(t_len, dtype=np.float64)[:, None] * inv[None, :]
    cos, sin = np.cos(ang)[None, :, None, :], np.sin(ang)[None, :, None, :]
    x0, x1 = x[..., 0:r:2], x[..., 1:r:2]
    y = x.copy()
    y[..., 0:r:2] = x0 * cos - x1 * sin
    y[..., 1:r:2] = x0 * sin + x1 * cos
    return y


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


def main():
    d, b_n, t_n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    cfg = json.load(open(f"{d}/config.json"))
    w = {k: v.astype(np.float64) for k, v in load_file(f"{d}/model.safetensors").items()}
    c, h, hkv = cfg["width"], cfg["heads"], cfg["kv_heads"]
    hd, eps = c // h, cfg["layernorm_eps"]
    x = np.fromfile(f"{d}/ticks.f32", dtype=np.float32).astype(np.float64)
    x = encode_inputs(cfg, x.reshape(b_n, t_n, cfg["features"]))
    x = x @ w["embed.weight"].T + w["embed.bias"]
    mask = np.tril(np.ones((t_n, t_n), dtype=bool))
    for l in range(cfg["layers"]):
        p = f"blocks.{l}."
        a = layernorm(x, w[p + "ln1.weight"], w[p + "ln1.bias"], eps)
        qkv = a @ w[p + "attn.qkv.weight"].T + w[p + "attn.qkv.bias"]
        q = qkv[..., : h * hd].reshape(b_n, t_n, h, hd)
        k = qkv[..., h * hd: (h + hkv) * hd].reshape(b_n, t_n, hkv, hd)
        v = qkv[..., (h + hkv) * hd:].reshape(b_n, t_n, hkv, hd)
        rot = cfg.get("rotary_dims", -1)
        nope = cfg.get("nope_interval", 0)
        if nope > 0 and (l + 1) % nope == 0:
            rot = 0  # a position-free layer (ModelConfig::nope_interval)
        q, k = rope(q, cfg["rope_theta"], rot), rope(k, cfg["rope_theta"], rot)
        if l < cfg.get("exclude_self_layers", 0):
            # The layer attends to earlier steps only, plus a zero sink key and value
            # (ModelConfig::exclude_self_layers): k and v one step later, zero first.
            k = np.concatenate([np.zeros_like(k[:, :1]), k[:, :-1]], axis=1)
            v = np.concatenate([np.zeros_like(v[:, :1]), v[:, :-1]], axis=1)
        group = h // hkv
        out = np.empty((b_n, t_n, h, hd))
        for head in range(h):
            kh, vh = k[:, :, head // group], v[:, :, head // group]
            s = np.einsum("btd,bsd->bts", q[:, :, head], kh) / np.sqrt(hd)
            s = np.where(mask, s, -np.inf)
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            out[:, :, head] = np.einsum("bts,bsd->btd", s, vh)
        x = x + out.reshape(b_n, t_n, c) @ w[p + "attn.proj.weight"].T + w[p + "attn.proj.bias"]
        a = layernorm(x, w[p + "ln2.weight"], w[p + "ln2.bias"], eps)
        m = gelu_tanh(a @ w[p + "mlp.fc1.weight"].T + w[p + "mlp.fc1.bias"])
        x = x + m @ w[p + "mlp.fc2.weight"].T + w[p + "mlp.fc2.bias"]
    x = layernorm(x, w["ln_f.weight"], w["ln_f.bias"], eps)
    logits = x @ w["head.weight"].T + w["head.bias"]
    e = np.exp(logits - logits.max(-1, keepdims=True))
    (e / e.sum(-1, keepdims=True)).astype(np.float64).tofile(f"{d}/probs.f64")


if __name__ == "__main__":
    main()
