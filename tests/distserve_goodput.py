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

A second table (`--paper-profile`) runs every mode again with no calibration at all, on the step
times the paper's authors fitted for OPT-13B on one A100-80GB and their simulator runs
(github.com/LLMServe/DistServe simdistserve/estimators/profile_data/profiler-a100-80g.{vllm,
distserve}.json as of commit 4c68ed9, TP 1; time_estimator.py: a prefill batch takes a + b x
tokens + c x sum of squared prompt lengths ms, a decode step a + b x context tokens + c x batch
ms, with other coefficients from batch 95 up), plus what the simulator adds to every iteration
(worker.py: 2 ms + 0.0001 ms a context token, and 1 ms more a prefill batch; --fit-only leaves
these out), each written as a fleetsim profile table: the vLLM fit for every mode (as it stands,
then scaled to the two single-phase figures), then as their simulator compares the systems, the
vLLM fit for the colocated replica and the DistServe fit for prefill and decode instances.

  distserve_goodput.py --fleetsim BIN [--work DIR] [--minutes M]
                      [--paper-profile [--fit-only]]

Exit status: 0 (the table printed; the calibration met and disaggregation's gain > 1; with
--paper-profile: the hand-computed iterations of check_paper_steps() met; on the vLLM fit, 2P1D
per GPU within 5% of the paper's 3.3 and the gain within 15% of its 2.1; the gain above 1 in every
column), 1 otherwise, 77 when h5py or numpy is
missing.
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
      - {{gpu: A100, {row}max_batch: {B}, kv_tokens: {kv}}}
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
        decode = B / (stepb_us * 1e-6) if stepb_us > 0 else 0
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
        if self.args.profiles:
            path = self.args.profiles["colocated" if mode.startswith("colocated") else "disagg"]
            row = "profile: '%s', " % path
        else:
            row = "prefill: %r, decode: %r, decode_single: %r, " % (prefill, decode, d1)
        with open(y, "w") as f:
            f.write(SCEN.format(minutes=self.args.minutes, colo=1, rate=repr(rate), row=row,
                                B=B, kv=KV_TOKENS, sched=sched, disagg=disagg))
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


# The DistServe authors' fits of their step times for OPT-13B, TP 1, A100-80GB (ms; see the
# docstring), as their simulator reads them today (simdistserve/estimators/profile_data/
# profiler-a100-80g.{vllm,distserve}.json, "Realign the curve", commit 4c68ed9 of 2024-05-01, the
# last change to these files): "vllm" for the colocated baseline, "distserve" for the prefill and
# decode instances of the disaggregated system (clusters/vllm.py and clusters/disagg.py pass the
# engine type to every worker).  Each: prefill (a, b, c), decode below 95 sequences, from 95 up.
FITS = {
    "vllm": ((22.052204789310185, 0.14050923870128956, 8.076584822611088e-06),
             (23.475041008414784, 0.000592934466077393, 0.060726861260369455),
             (20.206356173691958, 0.0004907727036234946, 0.1200031385587413)),
    "distserve": ((18.10254647486372, 0.1019122572698738, 7.122264314252114e-06),
                  (19.934702624895458, 0.0006269356524350583, 0.03850697740828398),
                  (7.1661889468253595, 0.0005798000403396046, 0.15831096191764046)),
}
LARGE_FROM = 95
# What the authors' simulator adds to every iteration of the fit (simdistserve/base/worker.py,
# one worker, no pipeline): do_prefill adds the pipeline constant 1 ms (time_estimator.py,
# pp_const = 1 x pp) and both do_prefill and do_decode add add_ray_overhead: 2 ms + 0.0001 ms a
# context token in the iteration (a prompt in prefill counts its 512 tokens, a decoding sequence
# its prompt plus the tokens decoded so far).
SIM_PREFILL_CONST_MS = 1.0
SIM_STEP_MS = 2.0
SIM_MS_PER_CONTEXT_TOKEN = 0.0001


def paper_step_ms(engine, prompts=0, bs=0, ctx=0, g=1.0, f=1.0, sim_overhead=True):
    """One iteration of the authors' simulator in ms for `engine` ("vllm" or "distserve"):
    `prompts` whole 512-token prompts prefilled (decode paused), or `bs` sequences decoded at
    `ctx` tokens of context each (the fit's token_generated_list is ctx + 1 a sequence); g and f
    scale every prefill and every decode iteration, overheads included.  sim_overhead=False: the
    fit alone."""
    pre, small, large = FITS[engine]
    if prompts:
        a, b, c = pre
        ms = a + b * 512 * prompts + c * prompts * 512 ** 2
        if sim_overhead:
            ms += SIM_PREFILL_CONST_MS + SIM_STEP_MS + SIM_MS_PER_CONTEXT_TOKEN * 512 * prompts
        return ms * g
    a, b, c = small if bs < LARGE_FROM else large
    ms = a + b * bs * (ctx + 1) + c * bs
    if sim_overhead:
        ms += SIM_STEP_MS + SIM_MS_PER_CONTEXT_TOKEN * bs * ctx
    return ms * f


def check_paper_steps():
    """Iterations worked out by hand from the constants above (ms).  vLLM, one 512-token
    prompt: 22.05220 + 0.14050924 x 512 + 8.07658e-6 x 512^2 = 96.1102, + 1 + 2 + 0.0512 =
    99.1614; one sequence at 544 tokens: 23.47504 + 0.00059293 x 545 + 0.06072686 + 2 + 0.0544 =
    25.9133.  DistServe, one prompt: 18.10255 + 0.10191226 x 512 + 7.12226e-6 x 512^2 + 3.0512 =
    75.1999; 100 sequences at 544 tokens (the large-batch fit): 7.16619 + 0.0005798 x 100 x 545
    + 0.15831096 x 100 + 2 + 5.44 = 62.0364.  False if the step function no longer gives them."""
    cases = [(paper_step_ms("vllm", prompts=1, sim_overhead=False), 96.1102),
             (paper_step_ms("vllm", prompts=1), 99.1614),
             (paper_step_ms("vllm", bs=1, ctx=544), 25.9133),
             (paper_step_ms("distserve", prompts=1), 75.1999),
             (paper_step_ms("distserve", bs=100, ctx=544), 62.0364)]
    return all(abs(got - want) < 1e-3 for got, want in cases)


def write_paper_profile(path, engine, g=1.0, f=1.0, sim_overhead=True):
    """The authors' simulator's step times for `engine` (the fit plus the simulator's
    per-iteration overheads, or the fit alone with sim_overhead=False) as a fleetsim profile
    (docs/services.md "A measured profile"): prefill rows at k whole 512-token prompts (v0
    batches whole prompts: exact), decode rows on a grid of batches (the fit is linear in the
    batch on each side of 95: exact between grid points) and contexts per sequence of 528-576
    tokens (the engine takes the column at or above the mean context: at most 16 tokens, 0.01 ms
    a sequence, over).  g and f scale every prefill and decode time."""
    lines = ["# DistServe's %s fit, OPT-13B, TP 1, A100-80GB (tests/distserve_goodput.py)" % engine,
             "batch,prefill_tokens,context_tokens,step_us"]
    for k in range(1, 33):
        ms = paper_step_ms(engine, prompts=k, g=g, sim_overhead=sim_overhead)
        lines.append("0,%d,0,%.3f" % (512 * k, ms * 1e3))
    for bs in (1, 2, 4, 8, 16, 32, 64, LARGE_FROM - 1, LARGE_FROM, MAX_BATCH):
        for ctx in (528, 544, 560, 576):
            ms = paper_step_ms(engine, bs=bs, ctx=ctx, f=f, sim_overhead=sim_overhead)
            lines.append("%d,0,%d,%.3f" % (bs, ctx, ms * 1e3))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def write_paper_profiles(args, g=1.0, f=1.0, disagg_engine="vllm"):
    """The colocated replica's profile (the vLLM fit) and the disaggregated modes' (the
    `disagg_engine` fit)."""
    write_paper_profile(args.profiles["colocated"], "vllm", g, f, args.sim_overhead)
    write_paper_profile(args.profiles["disagg"], disagg_engine, g, f, args.sim_overhead)


def scale_paper_profile(r):
    """Factors g (prefill) and f (decode) on the authors' fits meeting the two single-phase figures
    exactly (as calibrate() does for the linear row, two numbers for two figures, but keeping the
    fit's shape: a fixed cost per prefill batch and a decode step mostly fixed); the profile is
    rewritten with them."""
    lo, hi = 0.5, 3.0
    while hi - lo > 0.002 * lo:
        g = 0.5 * (lo + hi)
        write_paper_profiles(r.args, g, 1.0)
        if r.run(PAPER["prefill_only"], 0, 0, "prefill_only")[0] <= P90_TTFT:
            lo = g
        else:
            hi = g
    g = lo
    lo, hi = 0.5, 4.0
    while hi - lo > 0.002 * lo:
        f = 0.5 * (lo + hi)
        write_paper_profiles(r.args, g, f)
        if r.run(PAPER["decode_only"], 0, 0, "decode_only")[1] <= P90_TPOT:
            lo = f
        else:
            hi = f
    write_paper_profiles(r.args, g, lo)
    return g, lo


def paper_profile_table(r):
    """Every mode on the authors' vLLM fit, no calibration (A); on the same fit scaled to the two
    single-phase figures (B); and as their simulator runs the comparison, the vLLM fit colocated
    and their DistServe fit for the disaggregated modes, no calibration (C)."""
    write_paper_profiles(r.args)
    res = [profile_rows(r)]
    g, f = scale_paper_profile(r)
    res.append(profile_rows(r))
    write_paper_profiles(r.args, disagg_engine="distserve")
    res.append(profile_rows(r))
    names = ["prefill-only replica", "decode-only replica", "colocated, TTFT SLO only, v0",
             "colocated, TPOT SLO only, v0", "colocated, both SLOs, v0", "2P1D, 3 GPUs",
             "2P1D per GPU", "gain per GPU, 2P1D / colocated v0"]
    paper = [PAPER["prefill_only"], PAPER["decode_only"], 3.0, PAPER["colocated"],
             PAPER["colocated"], 10.0, PAPER["2p1d_per_gpu"], PAPER["gain"]]
    print("on DistServe's own step times for OPT-13B%s (A: the vLLM fit, no calibration; B: the "
          "vLLM fit x %.3f (prefill) and x %.3f (decode), meeting the single-phase figures; C: "
          "the vLLM fit colocated, the DistServe fit disaggregated, as their simulator does)"
          % (" with the simulator's per-iteration overheads" if r.args.sim_overhead
             else ", the fits alone", g, f))
    print("%-40s %8s %8s %8s %10s" % ("goodput (rps)", "A", "B", "C", "DistServe"))
    for k, name in enumerate(names):
        print("%-40s %8.2f %8.2f %8.2f %10.1f" % (name, res[0][k], res[1][k], res[2][k],
                                                   paper[k]))
    # which side of the gain departs from the paper, and by how much
    for col, rr in zip("ABC", res):
        print("%s: 2P1D per GPU %+.0f%%, colocated %+.0f%%, gain %+.0f%% against the paper" % (
            col, 100 * (rr[6] / PAPER["2p1d_per_gpu"] - 1), 100 * (rr[4] / PAPER["colocated"] - 1),
            100 * (rr[7] / PAPER["gain"] - 1)))
    # the gain is the figure's point: on the authors' vLLM step times, with no calibration, the
    # disaggregated side is the paper's to 5% and the gain the paper's to 15%; disaggregation
    # gains in every column
    ok = check_paper_steps() and all(rr[4] > 0 and rr[7] > 1 for rr in res) and \
        abs(res[0][6] / PAPER["2p1d_per_gpu"] - 1) < 0.05 and \
        abs(res[0][7] / PAPER["gain"] - 1) < 0.15
    print("distserve_goodput --paper-profile: %s" % ("ok" if ok else "FAIL"))
    return 0 if ok else 1


def profile_rows(r):
    """The goodputs of paper_profile_table's rows on the current profile."""
    pre_only = r.goodput(0, 0, "prefill_only", ("ttft",))
    dec_only = r.goodput(0, 0, "decode_only", ("tpot",))
    colo_ttft = r.goodput(0, 0, "colocated-v0", ("ttft",))
    colo_tpot = r.goodput(0, 0, "colocated-v0", ("tpot",))
    colo = r.goodput(0, 0, "colocated-v0")
    pd = r.goodput(0, 0, "2p1d")
    return [pre_only, dec_only, colo_ttft, colo_tpot, colo, pd, pd / 3,
            pd / 3 / colo if colo else float("inf")]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fleetsim", required=True)
    ap.add_argument("--work")
    ap.add_argument("--minutes", type=int, default=20)
    ap.add_argument("--paper-profile", action="store_true",
                    help="run on the DistServe authors' vLLM step times instead (no calibration)")
    ap.add_argument("--fit-only", dest="sim_overhead", action="store_false",
                    help="with --paper-profile: the authors' fit alone, without the per-iteration "
                         "overheads their simulator adds to it")
    args = ap.parse_args(argv)
    args.profiles = None
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
    if args.paper_profile:
        args.profiles = {m: os.path.abspath(os.path.join(args.work, "opt13b-a100-%s.csv" % m))
                         for m in ("colocated", "disagg")}
        if not check_paper_steps():
            print("distserve_goodput --paper-profile: FAIL, the step function does not give the "
                  "hand-computed iterations of check_paper_steps()")
            return 1
        return paper_profile_table(r)
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
