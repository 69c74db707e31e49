#!/usr/bin/python3
"""Reference implementation of fleetsim's iteration-level serving engine (issue 35), and a check
of the C engine against it request by request.

Written from the engine's specification alone (the rules of one replica: routing at arrival,
scheduler v1 with chunked prefill and scheduler v0, KV blocks of 16 tokens, iteration durations
rounded half up to whole microseconds); it shares no code with models/fs_service_engine.c.

  serving_ref.py check --fleetsim BIN --src SRC --shared DIR [--work DIR] [--case NAME]...
                       [--tol S] [--list]

For each case (the first hour of the Azure LLM 2023 conversation and code traces at 1, 2 and 4
fixed replicas ready at 0, schedulers v1 and v0, and a v1 and a v0 case whose KV cache binds)
it writes a scenario, runs `BIN run SCEN -o OUT.h5 -q`, reads OUT.h5's /requests, simulates the
same requests here and compares every reported request's ttft, tpot and end (and replica and
preemptions when the table has them) to the microsecond, and that fleetsim reports exactly the
requests the reference finishes by the horizon.  DIR is the shared data folder
(DIR/azure-llm-2023/...); SRC the source tree (the performance row is read from
SRC/scenarios/serving-azure.yaml).

Exit status: 0 all agree, 1 a difference (or a run that fails), 2 bad usage, 77 skipped (h5py or
numpy missing, or the shared data folder is not there).

Choices where the specification leaves room (the C engine must make the same):
  * Order within one instant t: first every iteration that ends at t completes (tokens emitted,
    finished requests leave their replica and free their blocks), then the arrivals at t are
    routed one by one in trace order (each sees the counts left by the ones before and by the
    requests that finished at t), then every replica that is not inside an iteration and has
    work starts one at t.  (fleetsim's own priorities: completions 10 before arrivals 50.)
  * A replica that schedules nothing (say its only waiting request does not fit its free
    blocks) is idle; only an arrival routed to it starts it again.
  * v1 step 1 stops as soon as the budget is 0 before looking at the next running sequence.
  * A request is reported when its last token comes at or before the horizon (events at the
    horizon itself run); arrivals at or after the horizon never happen.
"""
import argparse
import collections
import gzip
import heapq
import math
import os
import re
import subprocess
import sys
import time

BLOCK = 16
HORIZON_US = 3600 * 1000000


# ---- the engine ---------------------------------------------------------------------------

def step_us(b, B, step1, stepb):
    """Decode step (us, a double) with b decoding sequences."""
    if b == 0:
        return 0.0
    if B == 1:
        return stepb
    return step1 + ((stepb - step1) * float(b - 1)) / float(B - 1)


def iter_dur(p, b, P, B, step1, stepb):
    """Iteration duration (whole us) with p prefill tokens and b decoding sequences."""
    d = math.floor(float(p) * 1e6 / P + step_us(b, B, step1, stepb) + 0.5)
    if d < 1 and p + b > 0:
        d = 1
    return int(d)


class Result:
    __slots__ = ("replica", "first_us", "end_us", "preemptions")

    def __init__(self, replica, first_us, end_us, preemptions):
        self.replica = replica
        self.first_us = first_us
        self.end_us = end_us
        self.preemptions = preemptions

    def __repr__(self):
        return "Result(replica=%d, first_us=%d, end_us=%d, preemptions=%d)" % (
            self.replica, self.first_us, self.end_us, self.preemptions)


def simulate(requests, replicas, P, B, step1, stepb, T=2048, K=0, scheduler="v1",
             horizon_us=HORIZON_US, token_log=None):
    """Runs the engine on `requests` = [(arrival_us, in, out), ...] sorted by arrival.

    replicas: how many, all ready at time 0; P prefill tokens/s; B max_num_seqs; step1, stepb the
    decode step (us, doubles) at 1 and B decoding sequences; T max_num_batched_tokens; K KV cache
    tokens (0 unlimited); scheduler "v1" or "v0".  Events after horizon_us do not run, arrivals at
    or after it never come.  Returns one entry per request: a Result (replica, first_us, end_us,
    preemptions) when its last token came by the horizon, else None.  token_log, a dict, gets
    token_log[i] = [time of each token emitted by request i] (for the hand tests).
    """
    if scheduler not in ("v1", "v0"):
        raise ValueError("scheduler must be v1 or v0")
    if B < 1 or P <= 0 or T < 1 or replicas < 1:
        raise ValueError("bad parameters")
    n = len(requests)
    ARR = [int(r[0]) for r in requests]
    IN = [int(r[1]) for r in requests]
    OUT = [int(r[2]) for r in requests]
    for i in range(n):
        if OUT[i] < 1:
            raise ValueError("request %d: out must be >= 1" % i)
        if i and ARR[i] < ARR[i - 1]:
            raise ValueError("requests must be sorted by arrival")
    GEN = [0] * n          # output tokens emitted
    COMP = [0] * n         # tokens whose KV is computed
    TGT = [0] * n          # tokens to prefill since its last admission
    BLK = [0] * n          # KV blocks held
    DEC = [False] * n      # its prefill since the last admission is complete
    FIRST = [-1] * n
    END = [-1] * n
    PRE = [0] * n
    REP = [-1] * n

    unlimited = K == 0
    cap_blocks = K // BLOCK
    INF_BLOCKS = 1 << 62
    running = [[] for _ in range(replicas)]
    waiting = [collections.deque() for _ in range(replicas)]
    free = [INF_BLOCKS if unlimited else cap_blocks for _ in range(replicas)]
    count = [0] * replicas          # running + waiting
    busy = [False] * replicas       # inside an iteration
    sched = [None] * replicas       # (sids, news) of the iteration in progress
    heap = []                       # (end_us, replica) of the iterations in progress
    v1 = scheduler == "v1"
    log = token_log

    def emit(s, t):
        if log is not None:
            log.setdefault(s, []).append(t)

    def end_iteration(r, t):
        sids, news = sched[r]
        sched[r] = None
        busy[r] = False
        done = False
        for k in range(len(sids)):
            s = sids[k]
            c = COMP[s] + news[k]
            COMP[s] = c
            if DEC[s]:
                GEN[s] += 1
            elif c == TGT[s]:
                GEN[s] += 1
                DEC[s] = True
                if FIRST[s] < 0:
                    FIRST[s] = t
            else:
                continue
            if log is not None:
                emit(s, t)
            if GEN[s] == OUT[s]:
                END[s] = t
                free[r] += BLK[s]
                BLK[s] = 0
                count[r] -= 1
                done = True
        if done:
            running[r] = [s for s in running[r] if END[s] < 0]

    def preempt_last(r):
        run = running[r]
        v = run.pop()
        free[r] += BLK[v]
        BLK[v] = 0
        COMP[v] = 0
        DEC[v] = False
        PRE[v] += 1
        waiting[r].appendleft(v)
        return v

    def schedule_v1(r):
        run = running[r]
        wait = waiting[r]
        budget = T
        preempted = False
        sids = []
        news = []
        p = 0
        b = 0
        # 1. running sequences, in admission order
        i = 0
        while i < len(run):
            if budget <= 0:
                break
            s = run[i]
            new = IN[s] + GEN[s] - COMP[s]
            if new > budget:
                new = budget
            need = (COMP[s] + new + BLOCK - 1) // BLOCK - BLK[s]
            stop = False
            while need > free[r]:
                v = preempt_last(r)
                preempted = True
                if v == s:
                    stop = True
                    break
            if stop:
                break
            free[r] -= need
            BLK[s] += need
            sids.append(s)
            news.append(new)
            budget -= new
            if DEC[s]:
                b += 1
            else:
                p += new
            i += 1
        # 2. waiting sequences, only when nothing was preempted
        if not preempted:
            while wait and budget > 0 and len(run) < B:
                s = wait[0]
                tot = IN[s] + GEN[s]
                new = tot if tot < budget else budget
                nb = (new + BLOCK - 1) // BLOCK
                if nb > free[r]:
                    break
                wait.popleft()
                run.append(s)
                TGT[s] = tot
                COMP[s] = 0
                DEC[s] = False
                BLK[s] = nb
                free[r] -= nb
                sids.append(s)
                news.append(new)
                budget -= new
                p += new
        return sids, news, p, b

    def schedule_v0(r):
        run = running[r]
        wait = waiting[r]
        budget = T
        sids = []
        news = []
        # 1. prefill of waiting sequences, whole prompts
        p = 0
        while wait and len(run) < B:
            s = wait[0]
            new = IN[s] + GEN[s]
            if new > budget and sids:
                break
            nb = (new + BLOCK - 1) // BLOCK
            if nb > free[r]:
                break
            wait.popleft()
            run.append(s)
            TGT[s] = new
            COMP[s] = 0
            DEC[s] = False
            BLK[s] = nb
            free[r] -= nb
            sids.append(s)
            news.append(new)
            budget -= new
            p += new
        if sids:
            return sids, news, p, 0
        # 2. a decode iteration over every running sequence
        i = 0
        while i < len(run):
            s = run[i]
            need = (COMP[s] + 1 + BLOCK - 1) // BLOCK - BLK[s]
            stop = False
            while need > free[r]:
                v = preempt_last(r)
                if v == s:
                    stop = True
                    break
            if stop:
                break
            free[r] -= need
            BLK[s] += need
            sids.append(s)
            news.append(1)
            i += 1
        return sids, news, 0, len(sids)

    schedule = schedule_v1 if v1 else schedule_v0

    def start(r, t):
        if busy[r] or count[r] == 0:
            return
        sids, news, p, b = schedule(r)
        if not sids:
            return      # idle until an arrival
        d = iter_dur(p, b, P, B, step1, stepb)
        sched[r] = (sids, news)
        busy[r] = True
        heapq.heappush(heap, (t + d, r))

    ai = 0
    NEVER = 1 << 62
    while True:
        ta = ARR[ai] if ai < n else NEVER
        if ta >= horizon_us:
            ta = NEVER
        ti = heap[0][0] if heap else NEVER
        t = ta if ta < ti else ti
        if t == NEVER or t > horizon_us:
            break
        touched = []
        while heap and heap[0][0] == t:
            _, r = heapq.heappop(heap)
            end_iteration(r, t)
            touched.append(r)
        while ai < n and ARR[ai] == t and t < horizon_us:
            best = 0
            for r in range(1, replicas):
                if count[r] < count[best]:
                    best = r
            s = ai
            REP[s] = best
            waiting[best].append(s)
            count[best] += 1
            touched.append(best)
            ai += 1
        for r in sorted(set(touched)):
            start(r, t)

    out = []
    for i in range(n):
        if END[i] >= 0:
            out.append(Result(REP[i], FIRST[i], END[i], PRE[i]))
        else:
            out.append(None)
    return out


# ---- traces and scenarios ------------------------------------------------------------------

def _datetime_us(s):
    """fleetsim's reading of an Azure TIMESTAMP (traces/fs_rdr.c): us since the epoch, the
    fraction's first 6 digits kept (truncated)."""
    import datetime
    y, mo, d = int(s[0:4]), int(s[5:7]), int(s[8:10])
    h, mi, se = int(s[11:13]), int(s[14:16]), int(s[17:19])
    frac = 0
    rest = s[19:]
    if rest.startswith("."):
        digits = re.match(r"\.(\d+)", rest).group(1)
        frac = int((digits[:6]).ljust(6, "0"))
        rest = rest[1 + len(digits):]
    if rest not in ("", "Z"):
        raise ValueError("unsupported timestamp %r" % s)
    days = datetime.date(y, mo, d).toordinal()
    return ((days * 86400 + h * 3600 + mi * 60 + se) * 1000000) + frac


def read_azure_trace(path, horizon_us=HORIZON_US):
    """[(arrival_us from the first row, in, out)] of the rows before the horizon; out 0 -> 1."""
    reqs = []
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        header = f.readline().strip().split(",")
        if [h.lower() for h in header] != ["timestamp", "contexttokens", "generatedtokens"]:
            raise ValueError("%s: not an Azure LLM trace header: %s" % (path, header))
        origin = None
        for line in f:
            line = line.strip()
            if not line:
                continue
            ts, a, b = line.split(",")
            at = _datetime_us(ts)
            if origin is None:
                origin = at
            at -= origin
            if at >= horizon_us:
                break
            out = int(b)
            reqs.append((at, int(a), out if out > 0 else 1))
    return reqs


def read_performance(src):
    """prefill, decode, max_batch, decode_single of the first performance row of
    SRC/scenarios/serving-azure.yaml."""
    path = os.path.join(src, "scenarios", "serving-azure.yaml")
    with open(path) as f:
        text = f.read()
    m = re.search(r"performance:\s*\[\{([^}]*)\}", text)
    if not m:
        raise ValueError("%s: no performance row found" % path)
    row = {}
    for kv in m.group(1).split(","):
        k, v = kv.split(":", 1)
        row[k.strip()] = v.strip()
    return (float(row["prefill"]), float(row["decode"]), int(row.get("max_batch", "1")),
            float(row.get("decode_single", "0")))


def engine_params(prefill, decode, max_batch, decode_single):
    """P, B, step1, stepb as the specification derives them from a performance row."""
    stepb = max_batch / decode * 1e6
    step1 = 1e6 / decode_single if decode_single > 0 else stepb
    return prefill, max_batch, step1, stepb


SCENARIO = """\
# serving_ref.py case {name}: {replicas} fixed replica(s) ready at 0 (no start-up delay, no
# autoscaling), scheduler {sched}; the training workload (fleetsim needs one) is a few 1-GPU
# jobs that leave room on the 8 GPUs.
name: serving-ref-{name}
seed: 1
horizon: 1h
until: horizon
warmup: 0s
cluster:
  pools:
    - {{name: main, gpu: H100, nodes: 1, gpus_per_node: 8}}
workload:
  synthetic:
    arrivals: {{process: poisson, rate: 1/h}}
    gpus: {{1: 1.0}}
    duration: {{dist: constant, value: 1m}}
scheduler: {{queue: priority, preemption: order, checkpoint_interval: 30m}}
services:
  - name: {svc}
    gpus: 1
    min_replicas: {replicas}
    max_replicas: {replicas}
    requests:
      process: trace
      trace: {trace}
    performance:
      - gpu: H100
        prefill: {prefill}
        decode: {decode}
        max_batch: {max_batch}
        decode_single: {decode_single}
        kv_tokens: {kv}
    engine: {{scheduler: {sched}, max_num_batched_tokens: {T}}}
    autoscale: {{metric: none}}
output: {{requests: true}}
"""


def cases():
    """(name, trace, replicas, scheduler, kv_tokens)"""
    out = []
    for trace in ("conv", "code"):
        for n in (1, 2, 4):
            for sched in ("v1", "v0"):
                out.append(("%s-%d-%s" % (trace, n, sched), trace, n, sched, 0))
    # the KV cache binds: 2 replicas of the conversation trace with 65,536 tokens of KV each
    # (v1: 1,173 preemptions of 500 requests, all finish; every request fits alone: the
    # longest needs in + out - 1 = 14,088 tokens), and v0 with 49,152 (47 of 43 requests)
    out.append(("conv-2-v1-kv64k", "conv", 2, "v1", 65536))
    out.append(("conv-2-v0-kv48k", "conv", 2, "v0", 49152))
    return out


def fmt_num(x):
    return repr(float(x)) if x != int(x) else str(int(x))


def run_case(case, args, perf, np, h5py):
    name, trace, replicas, sched, kv = case
    T = 2048
    trace_path = os.path.join(args.shared, "azure-llm-2023",
                              "AzureLLMInferenceTrace_%s.csv.gz" % trace)
    scen = os.path.join(args.work, name + ".yaml")
    h5 = os.path.join(args.work, name + ".h5")
    with open(scen, "w") as f:
        f.write(SCENARIO.format(name=name, replicas=replicas, sched=sched, svc=trace,
                                trace=trace_path, prefill=fmt_num(perf[0]),
                                decode=fmt_num(perf[1]), max_batch=perf[2],
                                decode_single=fmt_num(perf[3]), kv=kv, T=T))
    t0 = time.time()
    if os.path.exists(h5):
        os.unlink(h5)
    try:
        pr = subprocess.run([args.fleetsim, "run", scen, "-o", h5, "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True)
    except OSError as e:
        print("%s: FAIL: cannot run %s: %s" % (name, args.fleetsim, e))
        return False
    t_c = time.time() - t0
    if pr.returncode != 0:
        print("%s: FAIL: fleetsim run exited %d:\n%s" % (name, pr.returncode, pr.stdout.strip()))
        return False
    with h5py.File(h5, "r") as f:
        if "requests" not in f:
            print("%s: FAIL: %s has no /requests" % (name, h5))
            return False
        tab = f["requests"][()]
    cols = tab.dtype.names
    t0 = time.time()
    reqs = read_azure_trace(trace_path)
    P, B, step1, stepb = engine_params(*perf)
    res = simulate(reqs, replicas, P, B, step1, stepb, T=T, K=kv, scheduler=sched)
    t_py = time.time() - t0

    # the reference's finished requests by (arrival_us, in, out)
    ref = collections.defaultdict(list)
    n_ref = 0
    for (at, i, o), r in zip(reqs, res):
        if r is None:
            continue
        n_ref += 1
        ttft = (r.first_us - at) / 1e6
        tpot = (r.end_us - r.first_us) / 1e6 / (o - 1) if o > 1 else float("nan")
        ref[(at, i, o)].append((r.end_us / 1e6, ttft, tpot, r.replica, r.preemptions))
    got = collections.defaultdict(list)
    arr_us = np.rint(tab["arrival"] * 1e6).astype(np.int64)
    has_rep = "replica" in cols
    has_pre = "preemptions" in cols
    for k in range(len(tab)):
        key = (int(arr_us[k]), int(tab["input"][k]), int(tab["output"][k]))
        got[key].append((float(tab["end"][k]), float(tab["ttft"][k]), float(tab["tpot"][k]),
                         int(tab["replica"][k]) if has_rep else None,
                         int(tab["preemptions"][k]) if has_pre else None))

    bad = []
    dmax = [0.0, 0.0, 0.0]
    compared = 0

    def close(a, b):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= args.tol

    for key in sorted(set(ref) | set(got)):
        rs = sorted(ref.get(key, []))
        gs = sorted(got.get(key, []))
        if len(rs) != len(gs):
            bad.append("request arrival %.6f s in %d out %d: fleetsim reports %d, the reference "
                       "finishes %d by the horizon" % (key[0] / 1e6, key[1], key[2], len(gs),
                                                       len(rs)))
        for a, b in zip(rs, gs):
            compared += 1
            for j, (ra, gb) in enumerate(((a[1], b[1]), (a[2], b[2]), (a[0], b[0]))):
                if not (math.isnan(ra) or math.isnan(gb)):
                    dmax[j] = max(dmax[j], abs(ra - gb))
            ok = close(a[0], b[0]) and close(a[1], b[1]) and close(a[2], b[2])
            if has_rep and a[3] != b[3]:
                ok = False
            if has_pre and a[4] != b[4]:
                ok = False
            if not ok:
                bad.append("request arrival %.6f s in %d out %d: fleetsim ttft %.6f tpot %.6f "
                           "end %.6f%s%s, reference ttft %.6f tpot %.6f end %.6f replica %d "
                           "preemptions %d" % (
                               key[0] / 1e6, key[1], key[2], b[1], b[2], b[0],
                               " replica %d" % b[3] if has_rep else "",
                               " preemptions %d" % b[4] if has_pre else "",
                               a[1], a[2], a[0], a[3], a[4]))
    pre_total = sum(r.preemptions for r in res if r is not None)
    missing = [c for c in ("replica", "preemptions") if c not in cols]
    for line in bad[:10]:
        print("%s: MISMATCH %s" % (name, line))
    if len(bad) > 10:
        print("%s: ... %d more mismatches" % (name, len(bad) - 10))
    print("%s: %s: %d requests compared (fleetsim %d rows, reference %d finished of %d), "
          "max |diff| ttft %.3g s tpot %.3g s end %.3g s; preemptions %d; fleetsim %.1f s, "
          "reference %.1f s%s" % (
              name, "ok" if not bad else "FAIL", compared, len(tab), n_ref, len(reqs), dmax[0],
              dmax[1], dmax[2], pre_total, t_c, t_py,
              "; no column %s in /requests" % " or ".join(missing) if missing else ""))
    return not bad


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd")
    c = sub.add_parser("check", help="run fleetsim on each case and compare with the reference")
    c.add_argument("--fleetsim", required=True)
    c.add_argument("--src", required=True)
    c.add_argument("--shared", required=True, help="the shared data folder (azure-llm-2023/...)")
    c.add_argument("--work", help="folder for the scenarios and results (default: a temporary one)")
    c.add_argument("--case", action="append", help="run only this case (repeatable)")
    c.add_argument("--tol", type=float, default=5e-7,
                   help="largest |difference| of ttft, tpot, end, s (default 5e-7: every time is "
                        "a whole microsecond on both sides, so a 1 us difference fails)")
    c.add_argument("--list", action="store_true", help="list the cases")
    args = ap.parse_args(argv)
    if args.cmd != "check":
        ap.print_usage()
        return 2
    if args.list:
        for k in cases():
            print(k[0])
        return 0
    try:
        import h5py
        import numpy as np
    except ImportError as e:
        print("serving_ref: skipped, %s (install python3-h5py and python3-numpy)" % e)
        return 77
    data = os.path.join(args.shared, "azure-llm-2023")
    if not (os.path.exists(os.path.join(data, "AzureLLMInferenceTrace_conv.csv.gz")) and
            os.path.exists(os.path.join(data, "AzureLLMInferenceTrace_code.csv.gz"))):
        print("serving_ref: skipped, no Azure LLM 2023 traces in %s" % data)
        return 77
    args.shared = os.path.abspath(args.shared)
    perf = read_performance(args.src)
    sel = cases()
    if args.case:
        names = [k[0] for k in sel]
        for want in args.case:
            if want not in names:
                print("serving_ref: no case %r (cases: %s)" % (want, " ".join(names)))
                return 2
        sel = [k for k in sel if k[0] in args.case]
    tmp = None
    if not args.work:
        import tempfile
        tmp = tempfile.TemporaryDirectory(prefix="serving_ref.")
        args.work = tmp.name
    os.makedirs(args.work, exist_ok=True)
    ok = True
    for k in sel:
        ok = run_case(k, args, perf, np, h5py) and ok
    print("serving_ref: %s" % ("all cases agree" if ok else "DIFFERENCES"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
