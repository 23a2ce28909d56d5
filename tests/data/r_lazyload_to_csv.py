#!/usr/bin/env python3
"""Fetches real market data from Debian's R packages at test time and writes CSV.

The data are GPL-2+, so flashtick never commits them: this script runs
`apt-get download r-cran-fbasics r-cran-timeseries`, unpacks the .debs with
`dpkg -x` into a temporary folder, decodes R's lazy-load databases with
rserialize.py (stdlib only) and writes, under --out:
  usdthb.csv   Reuters dealer quotes of USD/THB, June 1997 (fBasics::usdthb):
               timestamp (minutes, as stored), contributor, bid, ask
  usdchf.csv   half-hourly USD/CHF, 1996-03-31..2001-03-30 (timeSeries::USDCHF):
               timestamp (UTC), close
  msft.csv     daily MSFT OHLCV (timeSeries::MSFT, the decoded S4 object)
  msft_extdata.csv   timeSeries' own extdata/msft.csv, copied byte for byte
  summary.json row counts and the cleaning figures computed here, independently
               of the C++ cleaner, under the same rules (ticks/cleaning.h)
Exit status 77 means "cannot fetch" (no apt-get, no network, no package): the
caller must report a skip, never a pass. FLASHTICK_RDATA_DEBS may name a folder
that already holds the two .debs (offline CI caches).
"""

import argparse
import datetime
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rserialize  # noqa: E402

SKIP = 77
PACKAGES = ["r-cran-fbasics", "r-cran-timeseries"]


def skip(msg):
    print("SKIP: " + msg, file=sys.stderr)
    sys.exit(SKIP)


def fetch_debs(work):
    cached = os.environ.get("FLASHTICK_RDATA_DEBS")
    if cached:
        debs = sorted(glob.glob(os.path.join(cached, "*.deb")))
        if len(debs) >= len(PACKAGES):
            return debs
    if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
        skip("apt-get/dpkg not found; real-data tests need a Debian/Ubuntu machine")
    r = subprocess.run(["apt-get", "download"] + PACKAGES, cwd=work,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    debs = sorted(glob.glob(os.path.join(work, "*.deb")))
    if r.returncode != 0 or len(debs) < len(PACKAGES):
        skip("apt-get download %s failed (exit %d): %s" %
             (" ".join(PACKAGES), r.returncode, r.stderr.strip()[-400:]))
    return debs


def unpack(debs, work):
    root = os.path.join(work, "root")
    for deb in debs:
        subprocess.run(["dpkg", "-x", deb, root], check=True)
    return os.path.join(root, "usr", "lib", "R", "site-library")


def load(site, pkg):
    base = os.path.join(site, pkg, "data")
    return rserialize.lazy_load(os.path.join(base, "Rdata.rdx"), os.path.join(base, "Rdata.rdb"))


def columns(df):
    return dict(zip(df.names(), df.value))


def xdate_to_iso(x):
    # fBasics stores XDATE as the number YYYYMMDDhhmm.
    v = int(round(x))
    s = "%012d" % v
    return "%s-%s-%s %s:%s:00" % (s[0:4], s[4:6], s[6:8], s[8:10], s[10:12])


def posix_to_iso(seconds):
    t = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M:%S")


def clean_counts(rows):
    """The rules of ticks/cleaning.h, in their order, for (time, src, bid, ask)."""
    c = dict(rows=len(rows), kept=0, out_of_order=0, crossed=0, locked=0,
             non_positive=0, duplicates=0)
    last_time, seen = None, set()
    for time, src, bid, ask in rows:
        if last_time is not None and time < last_time:
            c["out_of_order"] += 1
        elif bid > ask:
            c["crossed"] += 1
        elif bid == ask:
            c["locked"] += 1
        elif bid <= 0:
            c["non_positive"] += 1
        else:
            if time != last_time:
                seen = set()
            key = (src, bid, ask)
            if key in seen:
                c["duplicates"] += 1
                continue
            seen.add(key)
            last_time = time
            c["kept"] += 1
    return c


def write_csv(path, header, rows):
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(r) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="folder for the CSV files")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="flashtick_rdata_") as work:
        site = unpack(fetch_debs(work), work)
        fb, ts = load(site, "fBasics"), load(site, "timeSeries")
        shutil.copyfile(os.path.join(site, "timeSeries", "extdata", "msft.csv"),
                        os.path.join(args.out, "msft_extdata.csv"))

    # USD/THB quotes: a data.frame with XDATE, DELAY, CONTRIBUTOR (factor), BID, ASK, FLAG.
    u = columns(fb["usdthb"])
    levels = u["CONTRIBUTOR"].attr("levels").value
    times = [xdate_to_iso(x) for x in u["XDATE"].value]
    srcs = [levels[i - 1] for i in u["CONTRIBUTOR"].value]
    bids, asks = u["BID"].value, u["ASK"].value
    write_csv(os.path.join(args.out, "usdthb.csv"), ["timestamp", "contributor", "bid", "ask"],
              [(t, s, repr(b), repr(a)) for t, s, b, a in zip(times, srcs, bids, asks)])
    usdthb = clean_counts(list(zip(times, srcs, bids, asks)))
    usdthb["first"], usdthb["last"] = times[0], times[-1]

    # USD/CHF: a timeSeries S4 object: a 62,496 × 1 numeric matrix with a
    # "positions" attribute of POSIX seconds (UTC).
    chf = ts["USDCHF"]
    pos = chf.attr("positions").value
    write_csv(os.path.join(args.out, "usdchf.csv"), ["timestamp", "close"],
              [(posix_to_iso(p), repr(v)) for p, v in zip(pos, chf.value)])
    usdchf = dict(rows=len(pos), first=posix_to_iso(pos[0]), last=posix_to_iso(pos[-1]),
                  out_of_order=sum(1 for a, b in zip(pos, pos[1:]) if b < a),
                  duplicates=sum(1 for a, b in zip(pos, pos[1:]) if b == a),
                  non_positive=sum(1 for v in chf.value if not v > 0))

    # MSFT: a 249 × 5 matrix stored column-major (Open, High, Low, Close, Volume).
    m = ts["MSFT"]
    nrow, ncol = m.attr("dim").value
    names = m.attr("dimnames").value[1].value
    col = {n.lower(): m.value[j * nrow:(j + 1) * nrow] for j, n in enumerate(names)}
    mpos = m.attr("positions").value
    write_csv(os.path.join(args.out, "msft.csv"),
              ["timestamp", "open", "high", "low", "close", "volume"],
              [(posix_to_iso(mpos[i])[:10],) + tuple(repr(col[k][i]) for k in
               ("open", "high", "low", "close", "volume")) for i in range(nrow)])
    msft = dict(rows=nrow, columns=ncol, first=posix_to_iso(mpos[0])[:10],
                last=posix_to_iso(mpos[-1])[:10])

    summary = dict(usdthb=usdthb, usdchf=usdchf, msft=msft)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
