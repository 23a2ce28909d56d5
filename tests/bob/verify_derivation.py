"""Checks the backward-over-backward equations of docs/derivations/attention_bwd_bwd.md.

Compares the closed forms (1)-(14) with jax.vjp of jax.vjp of attention in float64,
for causal and non-causal masks and grouped-query attention (H query heads sharing
Hkv key/value heads). Also checks the two-pass split: pass 1 (rows) with end-of-row
corrections (eq. 12-13) and pass 2 (columns) from the stored row states c, e.
Run: .venv/bin/python tests/bob/verify_derivation.py   (exit status 1 on mismatch)
"""
import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)


def attention(q, k, v, causal, scale):
    """q [T,H,D], k/v [T,Hkv,D] -> o [T,H,D]; query head h reads kv head h // (H/Hkv)."""
    t, h, _ = q.shape
    group = h // k.shape[1]
    kk = jnp.repeat(k, group, axis=1)
    vv = jnp.repeat(v, group, axis=1)
    s = scale * jnp.einsum("ihd,jhd->hij", q, kk)
    if causal:
        mask = jnp.tril(jnp.ones((t, t), dtype=bool))
        s = jnp.where(mask[None], s, -jnp.inf)
    p = jax.nn.softmax(s, axis=-1)
    return jnp.einsum("hij,jhd->ihd", p, vv)


def jax_bwd_bwd(q, k, v, do, gq, gk, gv, causal, scale):
    def first_bwd(q, k, v, do):
        _, vjp = jax.vjp(lambda a, b, c: attention(a, b, c, causal, scale), q, k, v)
        return vjp(do)

    def second_bwd(q, k, v, do, gq, gk, gv):
        _, vjp2 = jax.vjp(first_bwd, q, k, v, do)
        return vjp2((gq, gk, gv))

    return jax.jit(second_bwd)(q, k, v, do, gq, gk, gv)  # one compilation per case


def formulas(q, k, v, do, gq, gk, gv, causal, scale):
    """Equations (1)-(14), one head at a time, with full T x T matrices (numpy)."""
    t, h, d = q.shape
    group = h // k.shape[1]
    dq_, dk_, dv_, ddo_ = (np.zeros_like(q), np.zeros_like(k), np.zeros_like(v),
                           np.zeros_like(do))
    mask = np.tril(np.ones((t, t), bool)) if causal else np.ones((t, t), bool)
    max_state_err = 0.0
    for hh in range(h):
        g = hh // group
        Q, K, V, dO = q[:, hh], k[:, g], v[:, g], do[:, hh]
        gQ, gK, gV = gq[:, hh], gk[:, g], gv[:, g]
        S = np.where(mask, scale * Q @ K.T, -np.inf)
        L = np.log(np.sum(np.exp(S - S.max(1, keepdims=True)), 1)) + S.max(1)
        P = np.exp(S - L[:, None])
        O = P @ V
        Dv = np.sum(dO * O, 1)                                  # (0) D_i
        dP = dO @ V.T
        dS = P * (dP - Dv[:, None])
        G = scale * (gQ @ K.T + Q @ gK.T)                       # (1)
        Bm = dO @ gV.T                                          # (2)
        c = np.sum(P * G, 1)                                    # (3)
        Hm = (dP - Dv[:, None]) * G - c[:, None] * dP + Bm      # (4)
        e = np.sum(P * Hm, 1)                                   # (5)
        X = dS * G + P * Bm                                     # (6)
        a = np.sum(X, 1)                                        # (7)
        max_state_err = max(max_state_err, np.max(np.abs(e - (a - c * Dv))))  # (8)
        ddo = P @ gV + (P * G) @ V - c[:, None] * O             # (9)
        ddv = (P * (G - c[:, None])).T @ dO                     # (10)
        dS2 = P * (Hm - e[:, None])                             # (11)
        # (12): the same dS2 from quantities one row sweep accumulates.
        dS2_alt = X - c[:, None] * dS - a[:, None] * P
        max_state_err = max(max_state_err, np.max(np.abs(dS2 - dS2_alt)))
        ddq = scale * (dS @ gK + dS2 @ K)                       # (13)
        # (13'): pass 1 form, corrections applied at the end of the row.
        ddq_pass1 = scale * ((dS @ gK + X @ K) - c[:, None] * (dS @ K)
                             - a[:, None] * (P @ K))
        max_state_err = max(max_state_err, np.max(np.abs(ddq - ddq_pass1)))
        ddk = scale * (dS.T @ gQ + dS2.T @ Q)                   # (14)
        dq_[:, hh] = ddq
        ddo_[:, hh] = ddo
        dk_[:, g] += ddk                                        # GQA: sum over the group
        dv_[:, g] += ddv
    return (dq_, dk_, dv_, ddo_), max_state_err


def main():
    rng = np.random.default_rng(0)
    worst = 0.0
    for (t, h, hkv, d, causal) in [(1, 2, 1, 4, True), (7, 2, 2, 8, True), (13, 4, 2, 8, False),
                                   (16, 4, 1, 16, True), (9, 3, 3, 5, False)]:
        scale = 1.0 / np.sqrt(d)
        shp_q, shp_k = (t, h, d), (t, hkv, d)
        q, do, gq = (rng.standard_normal(shp_q) for _ in range(3))
        k, v, gk, gv = (rng.standard_normal(shp_k) for _ in range(4))
        ref = jax_bwd_bwd(*(jnp.asarray(x) for x in (q, k, v, do, gq, gk, gv)), causal, scale)
        got, state_err = formulas(q, k, v, do, gq, gk, gv, causal, scale)
        errs = []
        for name, r, g in zip(("dQ", "dK", "dV", "ddO"), ref, got):
            r = np.asarray(r)
            errs.append(np.max(np.abs(r - g)) / max(1e-300, np.max(np.abs(r))))
        err = max(errs + [state_err])
        worst = max(worst, err)
        print(f"T={t} H={h} Hkv={hkv} D={d} causal={int(causal)}: "
              f"max rel err dQ,dK,dV,ddO = {', '.join(f'{x:.1e}' for x in errs)}; "
              f"identities (8),(12),(13') = {state_err:.1e}")
    ok = worst < 1e-10
    print("OK" if ok else "MISMATCH", f"worst={worst:.1e}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
