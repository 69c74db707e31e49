"""What a policy written in Python costs (docs/performance.md, "Policies in
Python"): the same scenario scheduled by the built-in policy, by the C
plugin of tests/install/ and by the Python policy of
tests/python/test_fleetsim.py, each timed (median of --reps runs of
fleetsim.run, results file included), schedules checked equal.

    cc -shared -fPIC $(pkg-config --cflags fleetsim) tests/install/plugin_fifo.c -o fifo.so
    cc -shared -fPIC $(pkg-config --cflags fleetsim) tests/install/plugin_srtf.c -o srtf.so
    PYTHONPATH=PREFIX/share/fleetsim/python python3 tests/python/bench_policy.py fifo.so srtf.so

Not part of the test suite: it only reports."""
import os
import statistics
import sys
import time

import numpy as np

import fleetsim

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_fleetsim import Srtf  # noqa: E402


def timed(reps, **kw):
    walls, r = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        r = fleetsim.run(**kw)
        walls.append(time.perf_counter() - t0)
    return statistics.median(walls), r


def same(a, b):
    ja, jb = (r.jobs().sort_values("id") for r in (a, b))
    return all(np.array_equal(ja[c].to_numpy(), jb[c].to_numpy(), equal_nan=True)
               for c in ("start", "end"))


def main():
    fifo_so, srtf_so = sys.argv[1], sys.argv[2]
    reps = 5
    cases = [
        ("FIFO, 2 d, 48 nodes", {"horizon": "2d", "cluster.pools.0.nodes": 48},
         {"scheduler.mode": "best_effort"}, fifo_so, lambda q, c: range(len(q))),
        ("FIFO, 7 d, 96 nodes", {"horizon": "7d", "cluster.pools.0.nodes": 96},
         {"scheduler.mode": "best_effort"}, fifo_so, lambda q, c: range(len(q))),
        ("SRTF, 2 d, 48 nodes", {"horizon": "2d", "cluster.pools.0.nodes": 48,
                                 "scheduler.checkpoint_interval": "1us"},
         {"scheduler.queue": "srtf"}, srtf_so, Srtf()),
    ]
    print("| workload | jobs | passes | built-in | C plugin | Python | Python / C plugin |")
    print("|---|---|---|---|---|---|---|")
    for label, ov, builtin_ov, so, py in cases:
        tb, rb = timed(reps, overrides=dict(ov, **builtin_ov))
        tc, rc = timed(reps, overrides=dict(ov, **{"scheduler.plugin.path": so}))
        tp, rp = timed(reps, overrides=ov, policy=py)
        assert same(rb, rc) and same(rb, rp), label
        print("| %s | %d | %d | %.3f s | %.3f s | %.3f s | %.1fx |" % (
            label, rb.summary["jobs_submitted"], rb.summary["passes"], tb, tc, tp, tp / tc))


if __name__ == "__main__":
    main()
