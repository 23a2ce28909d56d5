#!/usr/bin/env python3
"""Independent reference for research/stats: reads a JSON request from argv[1], writes
the answers as JSON to argv[2]. Uses scipy.stats / scipy.integrate for the
distributional parts and a direct itertools implementation of CSCV for PBO, so
no code is shared with the C++ under test.
"""
import itertools
import json
import math
import sys

import numpy as np
from scipy import integrate, stats


def moments(x):
    x = np.asarray(x, dtype=np.float64)
    sd = x.std(ddof=1)
    return dict(mean=x.mean(), sd=sd, sharpe=x.mean() / sd,
                skew=float(stats.skew(x, bias=True)),
                kurt=float(stats.kurtosis(x, fisher=False, bias=True)))


def psr(sr, sr_star, t, skew, kurt):
    return float(stats.norm.cdf((sr - sr_star) * math.sqrt(t - 1) /
                                math.sqrt(1 - skew * sr + (kurt - 1) / 4 * sr * sr)))


def emax(n):
    if n == 1:
        return 0.0
    f = lambda x: x * n * stats.norm.pdf(x) * stats.norm.cdf(x) ** (n - 1)
    peak = math.sqrt(2 * math.log(n))
    val, _ = integrate.quad(f, -np.inf, np.inf, points=None, epsabs=1e-13, epsrel=1e-12,
                            limit=500) if n < 1000 else integrate.quad(
        f, -12, peak + 12, points=[peak], epsabs=1e-13, epsrel=1e-12, limit=500)
    return val


def sharpe_rows(m, rows):
    x = m[rows]
    sd = x.std(axis=0, ddof=1)
    mean = x.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        sr = np.where(sd > 0, mean / np.where(sd > 0, sd, 1), np.sign(mean) * np.inf)
    return np.nan_to_num(sr, nan=0.0, posinf=np.inf, neginf=-np.inf)


def pbo(m, s):
    m = np.asarray(m, dtype=np.float64)
    t, n = m.shape
    sizes = [t // s + (1 if b < t % s else 0) for b in range(s)]
    starts = np.cumsum([0] + sizes)
    blocks = [list(range(starts[b], starts[b + 1])) for b in range(s)]
    overfit, total, medians = 0, 0, 0
    for j in itertools.combinations(range(s), s // 2):
        is_rows = sum((blocks[b] for b in j), [])
        oos_rows = sum((blocks[b] for b in range(s) if b not in j), [])
        is_sr, oos_sr = sharpe_rows(m, is_rows), sharpe_rows(m, oos_rows)
        best = int(np.flatnonzero(is_sr == is_sr.max())[0])  # lowest index among ties
        rank = stats.rankdata(oos_sr, method="average")[best]
        omega = rank / (n + 1)
        if 2 * rank == n + 1:
            medians += 1
            overfit += 1
        elif math.log(omega / (1 - omega)) < 0:
            overfit += 1
        total += 1
    return dict(pbo=overfit / total, combinations=total, median_ties=medians)


def classify(labels, probs):
    y = np.asarray(labels)
    p = np.asarray(probs, dtype=np.float64).reshape(-1, 3)
    keep = y >= 0
    y, p = y[keep], p[keep]
    pred = []
    for row in p:
        top = row.max()
        pred.append(1 if row[1] == top else (0 if row[0] == top else 2))
    pred = np.array(pred)
    conf = np.zeros((3, 3), dtype=np.int64)
    for a, b in zip(y, pred):
        conf[a, b] += 1
    f1s = []
    for c in range(3):
        tp = conf[c, c]
        fp = conf[:, c].sum() - tp
        fn = conf[c, :].sum() - tp
        if 2 * tp + fp + fn > 0:
            f1s.append(2 * tp / (2 * tp + fp + fn))
    ll = -np.mean(np.log(np.maximum(p[np.arange(len(y)), y], 1e-15)))
    return dict(accuracy=float(np.mean(pred == y)), macro_f1=float(np.mean(f1s)),
                log_loss=float(ll), confusion=conf.tolist())


def main():
    req = json.load(open(sys.argv[1]))
    out = {}
    out["moments"] = [moments(x) for x in req["series"]]
    out["psr"] = [psr(m["sharpe"], s, len(x), m["skew"], m["kurt"])
                  for x, m in zip(req["series"], out["moments"]) for s in req["sr_star"]]
    out["emax"] = [emax(n) for n in req["emax_n"]]
    out["ppf"] = [float(stats.norm.ppf(p)) for p in req["ppf_p"]]
    d = req["dsr"]
    trials = np.asarray(d["trial_sharpes"])
    sel = moments(d["returns"])
    sr0 = math.sqrt(trials.var(ddof=1)) * emax(len(trials))
    out["dsr"] = dict(sr0=sr0, dsr=psr(sel["sharpe"], sr0, len(d["returns"]), sel["skew"],
                                       sel["kurt"]))
    out["pbo"] = [pbo(c["matrix"], c["blocks"]) for c in req["pbo"]]
    out["classify"] = [classify(c["labels"], c["probs"]) for c in req["classify"]]
    json.dump(out, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
