#!/usr/bin/python3
"""Test fixture: a sweep index over run files made with `fleetsim run`.

    fake_sweep.py DIR KEY "V0 V1 ..." REPLICATIONS

expects DIR/runs/p<P>-r<R>.h5 for every point P (one per value of KEY) and
replication R, and writes DIR/index.h5 in the layout of docs/sweeps.md:
/points (point, KEY as text), /runs (point, replication, file, status "complete",
every /summary field), /stats (point, metric, n, mean, sd, ci_lo, ci_hi:
Student-t 95% from a table of t quantiles) and external links
/runs_data/p<P>-r<R> to each run file's root.  Written before `fleetsim
sweep` existed; kept so that report and compare are also tested on a layout
checked by hand, whatever the sweep command does.
"""
import math
import os
import sys

import h5py
import numpy as np

# t_{0.975, df} for df = 1..30 (standard tables)
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def main(d, key, values, reps):
    values = values.split()
    reps = int(reps)
    str_t = h5py.string_dtype("utf-8", 64)
    summaries = {}
    for p in range(len(values)):
        for r in range(reps):
            fn = os.path.join(d, "runs", "p%d-r%d.h5" % (p, r))
            with h5py.File(fn, "r") as f:
                summaries[(p, r)] = f["summary"][0]
    fields = summaries[(0, 0)].dtype.names
    with h5py.File(os.path.join(d, "index.h5"), "w") as f:
        f.attrs["format_version"] = np.int32(1)
        f.attrs["seed"] = np.uint64(1)
        pts = np.zeros(len(values), dtype=[("point", "<u4"), (key, str_t)])
        for p, v in enumerate(values):
            pts[p] = (p, v.encode())
        f.create_dataset("points", data=pts)
        rdt = [("point", "<u4"), ("replication", "<u4"), ("file", str_t), ("status", str_t)]
        rdt += [(n, "<f8") for n in fields]
        runs = np.zeros(len(values) * reps, dtype=rdt)
        i = 0
        for p in range(len(values)):
            for r in range(reps):
                row = [p, r, ("runs/p%d-r%d.h5" % (p, r)).encode(), b"complete"]
                row += [float(summaries[(p, r)][n]) for n in fields]
                runs[i] = tuple(row)
                i += 1
        f.create_dataset("runs", data=runs)
        sdt = [("point", "<u4"), ("metric", str_t), ("n", "<u4"), ("mean", "<f8"),
               ("sd", "<f8"), ("ci_lo", "<f8"), ("ci_hi", "<f8")]
        stats = []
        for p in range(len(values)):
            for n in fields:
                x = np.array([float(summaries[(p, r)][n]) for r in range(reps)])
                x = x[np.isfinite(x)]
                k = len(x)
                mean = x.mean() if k else math.nan
                sd = x.std(ddof=1) if k >= 2 else math.nan
                half = T975[k - 2] * sd / math.sqrt(k) if 2 <= k <= 31 else math.nan
                stats.append((p, n.encode(), k, mean, sd, mean - half, mean + half))
        f.create_dataset("stats", data=np.array(stats, dtype=sdt))
        g = f.create_group("runs_data")
        for p in range(len(values)):
            for r in range(reps):
                g["p%d-r%d" % (p, r)] = h5py.ExternalLink("runs/p%d-r%d.h5" % (p, r), "/")


if __name__ == "__main__":
    main(*sys.argv[1:])
