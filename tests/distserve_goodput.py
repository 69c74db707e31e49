#!/usr/bin/python3
"""DistServe's motivating example (Zhong et al., "DistServe: Disaggregating Prefill and Decoding
for Goodput-optimized Large Language Model Serving", OSDI '24, arXiv 2401.09670, Section 1 and
Figure 1) run with fleetsim's disaggregated serving, side by side with the paper's figures.

The paper's setting: a 13B model on A100-80GB GPUs, Poisson arrivals, every prompt 512 tokens,
every output 64 tokens, SLOs P90 TTFT <= 0.4 s and P90 TPOT <= 0.04 s; goodput = the largest
request rate meeting both, per GPU.  Published: one colocated GPU (vLLM of the time) 1.6 rps
(TPOT binds; TTFT alone would allow about 3); a prefill-only GPU 5.6 rps; a decode-only GPU
10 rps; 2 prefill + 1 decode GPUs (2P1D) 10 rps, 3.3 rps per GPU: 2.1x the colocated goodput.

Method: the replica's performance row (step-time model of docs/services.md) is calibrated on the
two single-phase figures only: the prefill rate so that a prefill-only replica meets P90 TTFT
0.4 s at exactly 5.6 rps, and the decode step's growth with the batch so that a decode-only
replica meets P90 TPOT 0.04 s at exactly 10 rps (its step at batch 1 from the roofline: the 26 GB
of weights read at 80% of 2.04 TB/s plus 3 ms, 19 ms).  The colocated and the 2P1D goodputs are
then predictions, compared with the paper's.  Each point: a fleetsim run of `--minutes` of Poisson
arrivals (seed fixed), P90s over the requests that arrived after the first minute.

  distserve_goodput.py --fleetsim BIN [--work DIR] [--minutes M]

Exit status: 0 (the table printed; the calibration met and disaggregation's gain > 1),
1 otherwise, 77 when h5py or numpy is missing.
"""
import argparse
import os
import subprocess
import sys
import tempfile

P90_TTFT = 0.4
P90_TPOT = 0.04
KV_BYTES = 2 * 40 * 5120 * 2        # OPT-13B: 40 layers, hidden 5120, fp16 K and V
KV_TOKENS = 56144                   # (80 GB x 0.9 - 26 GB of weights) / KV_BYTES, blocks of 16
STEP1_US = 26e9 / (0.8 * 2.039e12) * 1e6 + 3000     # 19 ms
MAX_BATCH = 128
PAPER = {"colocated": 1.6, "prefill_only": 5.6, "decode_only": 10.0, "2p1d_per_gpu": 3.3,
         "gain": 2.1}

SCEN = """name: distserve-fig1
seed: 11
horizon: {minutes}m
until: horizon
warmup: 0s
cluster:
  pools:
    - {{name: a100, gpu: A100, nodes: 2, gpus_per_node: 8}}
workload:
  synthetic:
    arrivals: {{process: poisson, rate: 1/h}}
    gpus: {{1: 1.0}}
    duration: {{dist: constant, value: 1m}}
services:
  - name: s
    min_replicas: {colo}
    max_replicas: {colo}
    requests:
      rate: {rate}/s
      input: {{dist: constant, value: 512}}
      output: {{dist: constant, value: 64}}
    performance:
      - {{gpu: A100, prefill: {prefill}, decode: {decode}, max_batch: {B}, decode_single: {d1}, kv_tokens: {kv}}}
    engine: {{scheduler: {sched}}}
    autoscale: {{metric: none}}
{disagg}output: {{requests: true, timeline_interval: 0}}
"""


class Runner:
    def __init__(self, args, h5py, np):
        self.args, self.h5py, self.np = args, h5py, np
        self.k = 0

    def run(self, rate, prefill, stepb_us, mode):
        """P90 TTFT and TPOT (s) at `rate` for mode colocated-v0, colocated-v1, prefill_only,
        decode_only or 2p1d."""
        B = MAX_BATCH
        decode = B / (stepb_us * 1e-6)
        d1 = 1e6 / STEP1_US
        disagg = ""
        sched = "v0"
        if mode == "colocated-v1":
            sched = "v1"
        groups = {"prefill_only": (1, 8), "decode_only": (8, 1), "2p1d": (2, 1)}
        if mode in groups:
            np_, nd = groups[mode]
            bw = 300e9 if mode == "2p1d" else 1e15     # NVLink within a node; or free
            disagg = ("    disaggregated:\n      prefill: {replicas: %d}\n      decode: "
                      "{replicas: %d}\n      kv_transfer: {bandwidth: %r, bytes_per_token: %d}\n"
                      % (np_, nd, bw, KV_BYTES))
        self.k += 1
        y = os.path.join(self.args.work, "p%d.yaml" % self.k)
        h5 = os.path.join(self.args.work, "p%d.h5" % self.k)
        with open(y, "w") as f:
            f.write(SCEN.format(minutes=self.args.minutes, colo=1, rate=repr(rate),
                                prefill=repr(prefill), decode=repr(decode), B=B, d1=repr(d1),
                                kv=KV_TOKENS, sched=sched, disagg=disagg))
        pr = subprocess.run([self.args.fleetsim, "run", y, "-o", h5, "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True)
        if pr.returncode != 0:
            raise RuntimeError("fleetsim failed on %s:\n%s" % (y, pr.stdout))
        np = self.np
        with self.h5py.File(h5, "r") as f:
            t = f["requests"][()]
            n_arr = int(f["services"]["requests"][0])
        late = t[t["arrival"] >= 60.0]
        # requests not finished by the horizon miss both SLOs (a saturated replica)
        missing = max(0, n_arr - len(t))
        ttft = np.concatenate([late["ttft"], np.full(missing, 1e9)])
        tpot = np.concatenate([late["tpot"], np.full(missing, 1e9)])
        os.unlink(h5)
        os.unlink(y)
        return float(np.percentile(ttft, 90)), float(np.percentile(tpot, 90))

    def goodput(self, prefill, stepb_us, mode, which=("ttft", "tpot"), lo=0.05, hi=60.0):
        """The largest rate (bisection to 1%) meeting the P90 SLOs in `which`."""
        def ok(rate):
            a, b = self.run(rate, prefill, stepb_us, mode)
            return ("ttft" not in which or a <= P90_TTFT) and ("tpot" not in which or
                                                               b <= P90_TPOT)
        if not ok(lo):
            return 0.0
        while ok(hi):
            hi *= 2
        while hi - lo > 0.01 * lo:
            mid = 0.5 * (lo + hi)
            if ok(mid):
                lo = mid
            else:
                hi = mid
        return lo


def calibrate(r):
    """The prefill rate and the step at MAX_BATCH (us) matching the single-phase figures: P90
    TTFT of a prefill-only replica at 5.6 rps equal to 0.4 s (it falls as the rate rises), P90
    TPOT of a decode-only replica at 10 rps equal to 0.04 s (it rises with the step)."""
    stepb_guess = STEP1_US * 3
    lo, hi = 1000.0, 100000.0
    while hi - lo > 0.002 * lo:
        mid = (lo * hi) ** 0.5
        if r.run(PAPER["prefill_only"], mid, stepb_guess, "prefill_only")[0] <= P90_TTFT:
            hi = mid
        else:
            lo = mid
    prefill = hi
    lo, hi = STEP1_US * 1.01, STEP1_US * 40
    while hi - lo > 0.002 * lo:
        mid = (lo * hi) ** 0.5
        if r.run(PAPER["decode_only"], prefill, mid, "decode_only")[1] <= P90_TPOT:
            lo = mid
        else:
            hi = mid
    return prefill, lo


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fleetsim", required=True)
    ap.add_argument("--work")
    ap.add_argument("--minutes", type=int, default=20)
    args = ap.parse_args(argv)
    try:
        import h5py
        import numpy as np
    except ImportError as e:
        print("distserve_goodput: skipped, %s" % e)
        return 77
    tmp = None
    if not args.work:
        tmp = tempfile.TemporaryDirectory(prefix="distserve.")
        args.work = tmp.name
    os.makedirs(args.work, exist_ok=True)
    r = Runner(args, h5py, np)
    prefill, stepb = calibrate(r)
    pre_only = r.goodput(prefill, stepb, "prefill_only", ("ttft",))
    dec_only = r.goodput(prefill, stepb, "decode_only", ("tpot",))
    colo_v0 = r.goodput(prefill, stepb, "colocated-v0")
    colo_v0_ttft = r.goodput(prefill, stepb, "colocated-v0", ("ttft",))
    colo_v1 = r.goodput(prefill, stepb, "colocated-v1")
    pd = r.goodput(prefill, stepb, "2p1d")
    print("calibrated row: prefill %.0f tokens/s (512 tokens: %.1f ms); decode step %.1f ms at "
          "1, %.1f ms at %d sequences (+%.3f ms a sequence)" % (
              prefill, 512 / prefill * 1e3, STEP1_US / 1e3, stepb / 1e3, MAX_BATCH,
              (stepb - STEP1_US) / (MAX_BATCH - 1) / 1e3))
    rows = [("prefill-only replica (calibrated)", pre_only, PAPER["prefill_only"]),
            ("decode-only replica (calibrated)", dec_only, PAPER["decode_only"]),
            ("colocated, TTFT SLO only, v0", colo_v0_ttft, 3.0),
            ("colocated, both SLOs, v0 (vLLM of the paper)", colo_v0, PAPER["colocated"]),
            ("colocated, both SLOs, v1 (chunked prefill)", colo_v1, float("nan")),
            ("2P1D, 3 GPUs", pd, 10.0),
            ("2P1D per GPU", pd / 3, PAPER["2p1d_per_gpu"]),
            ("gain per GPU, 2P1D / colocated v0", pd / 3 / colo_v0 if colo_v0 else float("inf"),
             PAPER["gain"]),
            ("gain per GPU, 2P1D / colocated v1", pd / 3 / colo_v1 if colo_v1 else float("inf"),
             float("nan"))]
    print("%-48s %10s %10s" % ("goodput (rps)", "fleetsim", "DistServe"))
    for name, got, paper in rows:
        print("%-48s %10.2f %10s" % (name, got, "-" if paper != paper else "%.1f" % paper))
    ok = abs(pre_only / PAPER["prefill_only"] - 1) < 0.03 and \
        abs(dec_only / PAPER["decode_only"] - 1) < 0.03 and colo_v0 > 0 and pd / 3 > colo_v0
    print("distserve_goodput: %s" % ("ok" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
