#!/usr/bin/env python3
"""Why fluid's TPOT p50 is +11% at the grid's (8,000-token prompts, load 0.3) cell (issue 35).

  serving_fluid_tpot_router.py --fleetsim BIN [--work DIR] [--hours H]

Runs that cell of tests/serving_fluid_grid.py (serving-azure.yaml's H100 row, prompts lognormal
median 8,000 sigma 0.5, outputs lognormal median 200 sigma 0.5, Poisson arrivals at 0.3 of the
replicas' saturated throughput, 30 min warm-up) in request mode (v1) and in fluid mode, at 4
replicas under `least_loaded` (the grid's) and `round_robin`, and at 1 replica.  For every request
mode run it reads `/requests` and counts, per request that decodes (output > 1, arrived after the
warm-up), the prompts that arrive at its replica while it decodes (first token to end) and while it
waits for its first token (arrival to first token: FCFS, those are prefilled during its decode).
Fluid's TPOT spread (docs/services.md "Fluid mode") takes the first count as Poisson of mean
`lambda x decode time`, `lambda` the arrival rate per replica, whatever the router, and leaves the
second out.  Printed: TPOT p50 / p95 / p99 of both modes, the measured count against that mean
(their ratio: 1 when the replica receives its share of the prompts while it decodes), the share
of requests that see none against the Poisson chance, and the second count.

Not part of the test suite (a measurement, about a minute of CPU); docs/validation.md quotes it.
"""
import argparse, math, os, subprocess, sys, tempfile
import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serving_fluid_grid as grid      # noqa: E402  (the grid's scenario and load)


def run(fleetsim, work, mode, replicas, router, hours, med=8000, load=0.3):
    rate = load * replicas * grid.capacity(med * math.exp(0.125), 200 * math.exp(0.125))
    y = os.path.join(work, "t-%s-%d-%s.yaml" % (mode, replicas, router))
    grid.scenario(y, mode, med, rate, replicas, hours, router=router, requests=mode == "request")
    out = y[:-5] + ".h5"
    subprocess.run([fleetsim, "run", y, "-o", out, "-q"], check=True)
    with h5py.File(out, "r") as f:
        s = f["services"][()][0]
        res = {k: float(s[k]) for k in ("tpot_p50", "tpot_p95", "tpot_p99")}
        if mode == "request":
            res.update(arrivals(f["requests"][()]))
    return res


def arrivals(q):
    a, e, rep = q["arrival"], q["end"], q["replica"]
    t = a + q["ttft"]
    ok = (a >= 1800) & np.isfinite(e) & (q["output"] > 1)
    nrep = int(rep.max()) + 1
    lam = ok.sum() / (a[ok].max() - 1800) / nrep
    dec, pois, own = [], [], []
    for k in range(nrep):
        ak = np.sort(a[rep == k])
        i = np.where(ok & (rep == k))[0]
        dec.append(np.searchsorted(ak, e[i]) - np.searchsorted(ak, t[i], side="right"))
        own.append(np.searchsorted(ak, t[i]) - np.searchsorted(ak, a[i], side="right"))
        pois.append(lam * (e[i] - t[i]))
    dec, pois, own = np.concatenate(dec), np.concatenate(pois), np.concatenate(own)
    return {"lam": lam, "dec": dec.mean(), "pois": pois.mean(), "none": (dec == 0).mean(),
            "none_pois": np.exp(-pois).mean(), "own": own.mean()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fleetsim", required=True)
    ap.add_argument("--work")
    ap.add_argument("--hours", type=int, default=2)
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="tpot-router-")
    print("| replicas, router | TPOT p50 request / fluid | TPOT p95 | TPOT p99 | prompts at the "
          "replica during a decode: measured / lambda x decode (ratio) | none: measured / "
          "Poisson | prompts during its own TTFT |")
    print("|---|---|---|---|---|---|---|")
    for reps, router in ((4, "least_loaded"), (4, "round_robin"), (1, "least_loaded")):
        q = run(a.fleetsim, work, "request", reps, router, a.hours)
        fl = run(a.fleetsim, work, "fluid", reps, router, a.hours)
        cells = ["%.4f / %.4f s (%+.0f%%)" % (q[k], fl[k], (fl[k] / q[k] - 1) * 100)
                 for k in ("tpot_p50", "tpot_p95", "tpot_p99")]
        print("| %d, %s | %s | %.3f / %.3f (%.2f) | %.3f / %.3f | %.3f |" % (
            reps, router, " | ".join(cells), q["dec"], q["pois"], q["dec"] / q["pois"],
            q["none"], q["none_pois"], q["own"]))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
