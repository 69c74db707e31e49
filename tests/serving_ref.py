#!/usr/bin/python3
"""Reference implementation of fleetsim's iteration-level serving engine (issue 35), and a check
of the C engine against it request by request.

Written from the engine's specification alone (the rules of one replica: routing at arrival,
scheduler v1 with chunked prefill and scheduler v0, KV blocks of 16 tokens, iteration durations
rounded half up to whole microseconds); it shares no code with models/fs_service_engine.c.

  serving_ref.py check --fleetsim BIN --src SRC --shared DIR [--work DIR] [--case NAME]...
                       [--tol S] [--list] [--disagg]

--disagg runs the disaggregated cases instead (prefill and decode replica groups, KV transfers:
simulate_disagg, whose docstring states the rules), comparing also each request's decode
replica and KV transfer time.

For each case (the first hour of the Azure LLM 2023 conversation and code traces at 1, 2 and 4
fixed replicas ready at 0, schedulers v1 and v0, and a v1 and a v0 case whose KV cache binds;
and synthetic hours with shared prefixes, routers least_loaded and prefix_affinity, replayed from
fleetsim's own /requests; "-ctx" cases with the step time's context term us_per_kv_token and
"-prof" cases timed by the measured profile tests/data/profiles/h100-8b.csv)
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


def iter_dur(p, b, P, B, step1, stepb, ctx=0, kv_us=0.0):
    """Iteration duration (whole us) with p prefill tokens and b decoding sequences whose KV
    caches hold ctx tokens in all: the prefill and decode part rounded half up (at least 1 us),
    plus the context term kv_us x ctx, kv_us taken in whole 1e-9 us and the product rounded half
    up in integers."""
    d = math.floor(float(p) * 1e6 / P + step_us(b, B, step1, stepb) + 0.5)
    if d < 1 and p + b > 0:
        d = 1
    per = int(math.floor(kv_us * 1e9 + 0.5))    # 1e-9 us per context token
    return int(d) + (per * ctx + 500000000) // 1000000000


class Result:
    __slots__ = ("replica", "first_us", "end_us", "preemptions", "prefix_hit")

    def __init__(self, replica, first_us, end_us, preemptions, prefix_hit=0):
        self.replica = replica
        self.first_us = first_us
        self.end_us = end_us
        self.preemptions = preemptions
        self.prefix_hit = prefix_hit

    def __repr__(self):
        return "Result(replica=%d, first_us=%d, end_us=%d, preemptions=%d, prefix_hit=%d)" % (
            self.replica, self.first_us, self.end_us, self.preemptions, self.prefix_hit)


class PrefixCache:
    """One replica's prefix cache: per prefix id, the full blocks of that prefix kept after a
    request that computed them finished, how many running sequences share them, and a stamp
    (a counter bumped each time the entry is left unused: LRU).  `unused` counts the blocks of
    entries nobody shares: they are free on demand, taken from the entry with the oldest stamp,
    its last blocks first."""

    def __init__(self):
        self.entries = {}       # pid -> [blocks, users, stamp]
        self.unused = 0
        self.clock = 0
        self.evicted = 0

    def blocks(self, pid):
        e = self.entries.get(pid)
        return e[0] if e else 0

    def take(self, pid):
        """A sequence starts sharing the entry of pid."""
        e = self.entries[pid]
        if e[1] == 0:
            self.unused -= e[0]
        e[1] += 1

    def untake(self, pid, restamp):
        """A sequence stops sharing it (restamp: it was used, not just tried)."""
        e = self.entries[pid]
        e[1] -= 1
        if e[1] == 0:
            self.unused += e[0]
            if restamp:
                self.clock += 1
                e[2] = self.clock

    def evict(self, n):
        """Frees n unused blocks (n <= self.unused)."""
        while n > 0:
            pid = min((p for p, e in self.entries.items() if e[0] > 0 and e[1] == 0),
                      key=lambda p: self.entries[p][2])
            e = self.entries[pid]
            k = min(e[0], n)
            e[0] -= k
            self.unused -= k
            self.evicted += k
            n -= k


def read_profile(path):
    """A step-time profile CSV (batch, prefill_tokens, context_tokens, step_us; # comments):
    {"pre": [(tokens, us)] sorted, "batches": [...], "ctx": [...], "dec": {(b, x): us}}."""
    pre, dec = [], {}
    with open(path) as f:
        lines = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    head = [h.strip().lower() for h in lines[0].split(",")]
    ix = [head.index(k) for k in ("batch", "prefill_tokens", "context_tokens", "step_us")]
    for l in lines[1:]:
        v = l.split(",")
        b, p, x, us = int(v[ix[0]]), int(v[ix[1]]), int(v[ix[2]]), float(v[ix[3]])
        if b == 0:
            pre.append((p, us))
        else:
            dec[(b, x)] = us
    pre.sort()
    return {"pre": pre, "batches": sorted({k[0] for k in dec}), "ctx": sorted({k[1] for k in dec}),
            "dec": dec}


def _line(y0, y1, x, x0, x1):
    return y0 + (y1 - y0) * float(x - x0) / float(x1 - x0)


def profile_us(prof, p, b, ctx):
    """The profile's iteration time (us, a double): prefill piecewise linear from (0, 0)
    through the prefill rows (the last segment extended); decode at the first context column
    >= ctx / b (the last beyond), piecewise linear in the batch between the grid's batches
    (the end values beyond them)."""
    x = 0.0
    if p > 0:
        pts = [(0, 0.0)] + prof["pre"]
        k = next((i for i in range(1, len(pts)) if pts[i][0] >= p), len(pts) - 1)
        x += _line(pts[k - 1][1], pts[k][1], p, pts[k - 1][0], pts[k][0])
    if b > 0:
        cs = prof["ctx"]
        col = next((c for c in cs if b * c >= ctx), cs[-1])
        bs = prof["batches"]
        d = prof["dec"]
        if b <= bs[0] or len(bs) == 1:
            x += d[(bs[0], col)]
        elif b > bs[-1]:
            x += d[(bs[-1], col)]
        else:
            i = next(i for i in range(len(bs) - 1) if bs[i] < b <= bs[i + 1])
            x += _line(d[(bs[i], col)], d[(bs[i + 1], col)], b, bs[i], bs[i + 1])
    return x


def simulate(requests, replicas, P, B, step1, stepb, T=2048, K=0, scheduler="v1",
             horizon_us=HORIZON_US, token_log=None, router="least_loaded", stats=None,
             kv_us=0.0, profile=None):
    """Runs the engine on `requests` = [(arrival_us, in, out[, prefix_id, prefix_len]), ...]
    sorted by arrival.

    replicas: how many, all ready at time 0; P prefill tokens/s; B max_num_seqs; step1, stepb the
    decode step (us, doubles) at 1 and B decoding sequences; T max_num_batched_tokens; K KV cache
    tokens (0 unlimited); scheduler "v1" or "v0"; kv_us the step time's context term, us per
    token in the KV caches of the iteration's decoding sequences (tokens computed before it);
    profile (read_profile) times every iteration instead, rounded half up (at least 1 us).  Events after horizon_us do not run, arrivals at
    or after it never come.  Returns one entry per request: a Result (replica, first_us, end_us,
    preemptions, prefix_hit) when its last token came by the horizon, else None.  token_log, a
    dict, gets token_log[i] = [time of each token emitted by request i] (for the hand tests);
    stats, a dict, gets stats["evicted"] = cached prefix blocks evicted.

    Prefix caching (requests with a prefix id > 0): when a request finishes, the full blocks of
    its prefix, floor(prefix_len / 16), stay cached on its replica under its id (if the entry
    holds fewer, its own blocks beyond the entry's extend it; its other blocks are freed).  A
    request admitted with an id the replica has cached starts with computed = 16 x h tokens,
    h = min(entry blocks, floor(prefix_len / 16), floor((tokens to compute - 1) / 16)), and
    shares the whole entry (reference-counted: not evictable) until it finishes or is
    preempted; its prefill is the rest.  Unused entries' blocks count as free: a sequence that
    needs more blocks than are free takes them from the unused entry left unused longest ago
    (its last blocks first).  router "prefix_affinity": a request with a prefix goes to the
    replica with its id cached (entry blocks > 0) and the fewest requests, else least loaded.
    """
    if scheduler not in ("v1", "v0"):
        raise ValueError("scheduler must be v1 or v0")
    if B < 1 or P <= 0 or T < 1 or replicas < 1:
        raise ValueError("bad parameters")
    n = len(requests)
    ARR = [int(r[0]) for r in requests]
    IN = [int(r[1]) for r in requests]
    OUT = [int(r[2]) for r in requests]
    PID = [int(r[3]) if len(r) > 3 else 0 for r in requests]
    PLEN = [int(r[4]) if len(r) > 4 else 0 for r in requests]
    if router not in ("least_loaded", "prefix_affinity"):
        raise ValueError("router must be least_loaded or prefix_affinity")
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
    HIT = [0] * n          # cached prefix blocks shared since its last admission
    FHIT = [0] * n         # cached prefix tokens it used at its last admission

    unlimited = K == 0
    cap_blocks = K // BLOCK
    INF_BLOCKS = 1 << 62
    running = [[] for _ in range(replicas)]
    waiting = [collections.deque() for _ in range(replicas)]
    free = [INF_BLOCKS if unlimited else cap_blocks for _ in range(replicas)]
    count = [0] * replicas          # running + waiting
    busy = [False] * replicas       # inside an iteration
    sched = [None] * replicas       # (sids, news) of the iteration in progress
    cache = [PrefixCache() for _ in range(replicas)]

    def can_have(r, need):
        """need more blocks: taken from the free ones, then from unused cached prefixes."""
        if need <= free[r]:
            return True
        if unlimited or need > free[r] + cache[r].unused:
            return False
        short = need - free[r]
        cache[r].evict(short)
        free[r] += short
        return True

    def release(r, s, finished):
        """s gives its blocks back (finished: its prefix's full blocks join the cache)."""
        pid = PID[s]
        keep = 0
        pc = cache[r]
        if finished and pid:
            nb = PLEN[s] // BLOCK
            have = pc.blocks(pid)
            if nb > have:
                keep = nb - have
        free[r] += BLK[s] - HIT[s] - keep
        if keep:
            e = pc.entries.setdefault(pid, [0, 0, 0])
            e[0] += keep
            if e[1] == 0 and not HIT[s]:
                pc.unused += keep
                pc.clock += 1
                e[2] = pc.clock
        if HIT[s]:
            pc.untake(pid, True)
        BLK[s] = 0
        HIT[s] = 0

    def admit_one(r, s, budget, whole):
        """The admission of waiting sequence s: (tokens to prefill now, target) or None when
        its blocks are not to be had.  whole: v0 (no chunk; None also when over budget)."""
        tot = IN[s] + GEN[s]
        pid = PID[s]
        h = 0
        if pid:
            h = min(cache[r].blocks(pid), PLEN[s] // BLOCK, (tot - 1) // BLOCK)
        new = tot - h * BLOCK
        if whole:
            if new > budget[0] and budget[1]:
                return None
        elif new > budget[0]:
            new = budget[0]
        nb = (h * BLOCK + new + BLOCK - 1) // BLOCK - h
        if h:
            cache[r].take(pid)
        if not can_have(r, nb):
            if h:
                cache[r].untake(pid, False)
            return None
        free[r] -= nb
        BLK[s] = h + nb
        HIT[s] = h
        COMP[s] = h * BLOCK
        TGT[s] = tot
        DEC[s] = False
        return new
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
                FHIT[s] = HIT[s] * BLOCK
                release(r, s, True)
                count[r] -= 1
                done = True
        if done:
            running[r] = [s for s in running[r] if END[s] < 0]

    def preempt_last(r):
        run = running[r]
        v = run.pop()
        release(r, v, False)
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
            while not can_have(r, need):
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
                new = admit_one(r, s, [budget, 0], False)
                if new is None:
                    break
                wait.popleft()
                run.append(s)
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
            new = admit_one(r, s, [budget, len(sids)], True)
            if new is None:
                break
            wait.popleft()
            run.append(s)
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
            while not can_have(r, need):
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
        ctx = sum(COMP[s] for s in sids if DEC[s]) if kv_us or profile else 0
        if profile:
            d = max(1, int(math.floor(profile_us(profile, p, b, ctx) + 0.5)))
        else:
            d = iter_dur(p, b, P, B, step1, stepb, ctx, kv_us)
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
            if router == "prefix_affinity" and PID[ai]:
                have = [r for r in range(replicas) if cache[r].blocks(PID[ai]) > 0]
                if have:
                    best = min(have, key=lambda r: (count[r], r))
            s = ai
            REP[s] = best
            waiting[best].append(s)
            count[best] += 1
            touched.append(best)
            ai += 1
        for r in sorted(set(touched)):
            start(r, t)

    if stats is not None:
        stats["evicted"] = sum(c.evicted for c in cache)
    out = []
    for i in range(n):
        if END[i] >= 0:
            out.append(Result(REP[i], FIRST[i], END[i], PRE[i], FHIT[i]))
        else:
            out.append(None)
    return out


# ---- disaggregated serving (prefill and decode replica groups) ----------------------------

class DisaggResult:
    __slots__ = ("replica", "decode_replica", "first_us", "end_us", "preemptions", "xfer_us")

    def __init__(self, replica, decode_replica, first_us, end_us, preemptions, xfer_us):
        self.replica = replica
        self.decode_replica = decode_replica
        self.first_us = first_us
        self.end_us = end_us
        self.preemptions = preemptions
        self.xfer_us = xfer_us


def simulate_disagg(requests, n_prefill, n_decode, pre, dec, kv_bytes, bandwidth, T=2048,
                    scheduler="v1", horizon_us=HORIZON_US):
    """Disaggregated serving (docs/services.md "Disaggregated serving"), from its rules alone.

    requests = [(arrival_us, in, out), ...] sorted by arrival.  pre and dec: each group's engine
    (P, B, step1, stepb, K) as engine_params gives them plus K, its KV tokens (0 unlimited).
    Replicas are numbered as fleetsim numbers them: prefill 0..n_prefill-1, then decode.

    A request goes (fewest requests on it, lowest index) to a prefill replica, which runs the
    scheduler's prefill (v1 chunks within T, v0 whole prompts) and never decodes: when a
    sequence's prefill ends it emits a token (its first, TTFT) and leaves the replica (its count)
    but its KV blocks stay there.  In the same instant it is routed to the decode replica with
    the fewest sequences (waiting for KV room, in transfer, running) and joins the back of that
    replica's queue.  A decode replica, at each iteration start: the sequences whose transfer
    has ended join its batch (in the order the transfers started); every running sequence
    decodes one token (blocks for computed + 1; the newest preempted while one cannot grow: it
    loses its decode blocks and goes, in this instant, to the front of the least loaded prefill
    replica's queue, to be prefilled again there, in + gen tokens, emitting a token); then,
    when nothing was preempted, transfers start from the queue's front while running + in
    transfer < B and the blocks of the sequence's context (ceil(computed / 16)) are free.  A
    transfer of c context tokens takes max(1, floor(c * kv_bytes / bandwidth * 1e6 + 0.5)) us;
    transfers do not contend.  When it ends the prefill replica frees the sequence's blocks.

    Order within an instant t: arrivals routed; transfers ending at t (prefill blocks freed);
    prefill iterations ending at t complete, then every idle prefill replica with waiting work
    starts one; the prefills done at t are routed to decode replicas in prefill replica order;
    decode iterations ending at t complete, then every idle decode replica with work starts;
    the sequences preempted at t go to prefill replicas (in decode replica order, each in the
    order preempted); idle prefill replicas start.
    Returns per request a DisaggResult or None (not finished by the horizon).
    """
    if scheduler not in ("v1", "v0"):
        raise ValueError("scheduler must be v1 or v0")
    n = len(requests)
    ARR = [int(r[0]) for r in requests]
    IN = [int(r[1]) for r in requests]
    OUT = [int(r[2]) for r in requests]
    GEN = [0] * n
    COMP = [0] * n
    TGT = [0] * n
    BLK = [0] * n
    DEC = [False] * n
    FIRST = [-1] * n
    END = [-1] * n
    PRE = [0] * n
    PREP = [-1] * n        # replica of its last prefill
    DREP = [-1] * n        # replica of its last token
    XFER = [0] * n
    HELD = [0] * n         # blocks its last prefill replica holds for it until the transfer ends
    v1 = scheduler == "v1"
    groups = [pre, dec]
    NR = n_prefill + n_decode
    role = [0] * n_prefill + [1] * n_decode
    par = [groups[role[r]] for r in range(NR)]
    BIG = 1 << 62
    free = [par[r][4] // BLOCK if par[r][4] else BIG for r in range(NR)]
    cap = [par[r][4] // BLOCK if par[r][4] else 0 for r in range(NR)]
    run = [[] for _ in range(NR)]
    wait = [collections.deque() for _ in range(NR)]     # prefill: prompts; decode: KV queue
    xfer = [[] for _ in range(NR)]                      # decode: [end_us, seq] in start order
    count = [0] * NR
    cur = [None] * NR                                   # (seqs, news) of the iteration
    heap = []
    xheap = []                                          # (end_us, order, decode replica, seq)
    xorder = [0]

    def blocks(tokens):
        return (tokens + BLOCK - 1) // BLOCK

    def preempt_last(r, out):
        v = run[r].pop()
        free[r] += BLK[v]
        BLK[v] = 0
        COMP[v] = 0
        DEC[v] = False
        PRE[v] += 1
        out.append(v)
        return v

    def sched_prefill(r):
        """(seqs, news, p) of prefill replica r's next iteration; preempted ones to the front
        of its own queue."""
        B = par[r][1]
        seqs, news, p = [], [], 0
        if v1:
            budget = T
            pre_out = []
            i = 0
            while i < len(run[r]) and budget > 0:
                s = run[r][i]
                new = min(IN[s] + GEN[s] - COMP[s], budget)
                need = blocks(COMP[s] + new) - BLK[s]
                stop = False
                while need > free[r]:
                    v = preempt_last(r, pre_out)
                    wait[r].appendleft(v)
                    if v == s:
                        stop = True
                        break
                if stop:
                    break
                free[r] -= need
                BLK[s] += need
                seqs.append(s)
                news.append(new)
                budget -= new
                p += new
                i += 1
            if not pre_out:
                while wait[r] and budget > 0 and len(run[r]) < B:
                    s = wait[r][0]
                    tot = IN[s] + GEN[s]
                    new = min(tot, budget)
                    nb = blocks(new)
                    if nb > free[r]:
                        break
                    wait[r].popleft()
                    free[r] -= nb
                    BLK[s] = nb
                    COMP[s] = 0
                    TGT[s] = tot
                    DEC[s] = False
                    run[r].append(s)
                    seqs.append(s)
                    news.append(new)
                    budget -= new
                    p += new
        else:
            budget = T
            while wait[r] and len(run[r]) < B:
                s = wait[r][0]
                tot = IN[s] + GEN[s]
                if tot > budget and seqs:
                    break
                nb = blocks(tot)
                if nb > free[r]:
                    break
                wait[r].popleft()
                free[r] -= nb
                BLK[s] = nb
                COMP[s] = 0
                TGT[s] = tot
                DEC[s] = False
                run[r].append(s)
                seqs.append(s)
                news.append(tot)
                budget -= tot
                p += tot
        return seqs, news, p

    def start_prefill(r, t):
        if cur[r] is not None or not (run[r] or wait[r]):
            return
        seqs, news, p = sched_prefill(r)
        if not seqs:
            return
        P, B, s1, sb = par[r][:4]
        cur[r] = (seqs, news)
        heapq.heappush(heap, (t + iter_dur(p, 0, P, B, s1, sb), r))

    def xfer_time(c):
        d = math.floor(c * kv_bytes / bandwidth * 1e6 + 0.5)
        return int(d) if d >= 1 else 1

    def start_decode(r, t, preempted):
        if cur[r] is not None:
            return
        B = par[r][1]
        keep = []
        for e in xfer[r]:
            if e[0] <= t:
                run[r].append(e[1])
            else:
                keep.append(e)
        xfer[r] = keep
        seqs = []
        mine = []
        i = 0
        while i < len(run[r]):       # every one decodes: the budget T >= B never binds
            s = run[r][i]
            need = blocks(COMP[s] + 1) - BLK[s]
            stop = False
            while need > free[r]:
                v = preempt_last(r, mine)
                if v == s:
                    stop = True
                    break
            if stop:
                break
            free[r] -= need
            BLK[s] += need
            seqs.append(s)
            i += 1
        if mine:
            for v in mine:
                count[r] -= 1
                preempted.append(v)
        else:
            while wait[r] and len(run[r]) + len(xfer[r]) < B:
                s = wait[r][0]
                if cap[r] and blocks(IN[s] + OUT[s]) > cap[r]:
                    raise ValueError("request %d never fits decode replica %d" % (s, r))
                nb = blocks(COMP[s])
                if nb > free[r]:
                    break
                wait[r].popleft()
                free[r] -= nb
                BLK[s] = nb
                d = xfer_time(COMP[s])
                XFER[s] += d
                xfer[r].append([t + d, s])
                xorder[0] += 1
                heapq.heappush(xheap, (t + d, xorder[0], r, s))
        if seqs:
            P, B, s1, sb = par[r][:4]
            cur[r] = (seqs, [1] * len(seqs))
            heapq.heappush(heap, (t + iter_dur(0, len(seqs), P, B, s1, sb), r))

    def least(rs):
        best = rs[0]
        for r in rs:
            if count[r] < count[best]:
                best = r
        return best

    prefills = list(range(n_prefill))
    decodes = list(range(n_prefill, NR))
    ai = 0
    NEVER = 1 << 62
    while True:
        ta = ARR[ai] if ai < n and ARR[ai] < horizon_us else NEVER
        ti = heap[0][0] if heap else NEVER
        tx = xheap[0][0] if xheap else NEVER
        t = min(ta, ti, tx)
        if t == NEVER or t > horizon_us:
            break
        # 1. arrivals
        while ai < n and ARR[ai] == t and t < horizon_us:
            r = least(prefills)
            wait[r].append(ai)
            count[r] += 1
            ai += 1
        # 2. transfers that end: the prefill replica's blocks freed
        while xheap and xheap[0][0] == t:
            _, _, r, s = heapq.heappop(xheap)
            free[PREP[s]] += HELD[s]
            HELD[s] = 0
        ending = []
        while heap and heap[0][0] == t:
            ending.append(heapq.heappop(heap)[1])
        ending.sort()
        # 3. prefill iterations end; idle prefill replicas start
        handoff = []
        for r in ending:
            if role[r] != 0:
                continue
            seqs, news = cur[r]
            cur[r] = None
            for s, k in zip(seqs, news):
                COMP[s] += k
                if COMP[s] == TGT[s]:
                    GEN[s] += 1
                    DEC[s] = True
                    if FIRST[s] < 0:
                        FIRST[s] = t
            stay = []
            for s in run[r]:
                if not DEC[s]:
                    stay.append(s)
                    continue
                count[r] -= 1
                PREP[s] = r
                if GEN[s] == OUT[s]:
                    END[s] = t
                    DREP[s] = r
                    free[r] += BLK[s]
                else:
                    HELD[s] = BLK[s]
                    handoff.append(s)
                BLK[s] = 0
            run[r] = stay
        for r in prefills:
            start_prefill(r, t)
        # 4. prefills done go to decode replicas
        for s in handoff:
            r = least(decodes)
            wait[r].append(s)
            count[r] += 1
        # 5. decode iterations end; idle decode replicas start
        for r in ending:
            if role[r] != 1:
                continue
            seqs, _ = cur[r]
            cur[r] = None
            for s in seqs:
                COMP[s] += 1
                GEN[s] += 1
            stay = []
            for s in run[r]:
                if GEN[s] == OUT[s]:
                    END[s] = t
                    DREP[s] = r
                    free[r] += BLK[s]
                    BLK[s] = 0
                    count[r] -= 1
                else:
                    stay.append(s)
            run[r] = stay
        preempted = []
        for r in decodes:
            start_decode(r, t, preempted)
        # 6. preempted decodes back to prefill replicas; idle prefill replicas start
        if preempted:
            for s in preempted:
                r = least(prefills)
                wait[r].appendleft(s)
                count[r] += 1
            for r in prefills:
                start_prefill(r, t)
    out = []
    for i in range(n):
        out.append(DisaggResult(PREP[i], DREP[i], FIRST[i], END[i], PRE[i], XFER[i])
                   if END[i] >= 0 else None)
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


# The parts every case's scenario shares: the fleet (a training workload, which fleetsim needs,
# of a few 1-GPU jobs that leave room on the 8 GPUs) and the service's engine and output.
FLEET = """cluster:
  pools:
    - {{name: main, gpu: H100, nodes: 1, gpus_per_node: 8}}
workload:
  synthetic:
    arrivals: {{process: poisson, rate: 1/h}}
    gpus: {{1: 1.0}}
    duration: {{dist: constant, value: 1m}}
scheduler: {{queue: priority, preemption: order, checkpoint_interval: 30m}}
"""

ENGINE_TAIL = """    performance:
      - gpu: H100
        prefill: {prefill}
        decode: {decode}
        max_batch: {max_batch}
        decode_single: {decode_single}
        kv_tokens: {kv}
        us_per_kv_token: {ctx}
{extra}    engine: {{scheduler: {sched}, max_num_batched_tokens: {T}}}
    autoscale: {{metric: none}}
output: {{requests: true}}
"""

SCENARIO = """\
# serving_ref.py case {name}: {replicas} fixed replica(s) ready at 0 (no start-up delay, no
# autoscaling), scheduler {sched}; the training workload (fleetsim needs one) is a few 1-GPU
# jobs that leave room on the 8 GPUs.
name: serving-ref-{name}
seed: 1
horizon: 1h
until: horizon
warmup: 0s
""" + FLEET + """services:
  - name: {svc}
    gpus: 1
    min_replicas: {replicas}
    max_replicas: {replicas}
    requests:
      process: trace
      trace: {trace}
""" + ENGINE_TAIL


SCENARIO_PREFIX = """\
# serving_ref.py case {name}: synthetic requests with shared prefixes (requests.prefix), all
# arriving in the first hour (profile), served by {replicas} fixed replica(s) ready at 0 with
# router {router}, scheduler {sched}; the horizon (2 h) lets every request finish, so /requests
# holds every request the run generated and the reference replays exactly those.
name: serving-ref-{name}
seed: 3
horizon: 2h
until: horizon
warmup: 0s
""" + FLEET + """services:
  - name: chat
    gpus: 1
    min_replicas: {replicas}
    max_replicas: {replicas}
    router: {router}
    requests:
      process: poisson
      rate: {rate}/s
      profile: {{hourly: {{0: 1}}}}
      input: {{dist: lognormal, median: 1200, sigma: 0.7}}
      output: {{dist: lognormal, median: 150, sigma: 0.8}}
      prefix: {{ids: 60, popularity: zipf, s: 1.0, tokens: {{dist: uniform, lo: 100, hi: 2000}}}}
""" + ENGINE_TAIL


def cases():
    """(name, trace, replicas, scheduler, kv_tokens, router); trace "prefix": the synthetic
    workload of SCENARIO_PREFIX"""
    out = []
    for trace in ("conv", "code"):
        for n in (1, 2, 4):
            for sched in ("v1", "v0"):
                out.append(("%s-%d-%s" % (trace, n, sched), trace, n, sched, 0, "least_loaded"))
    # the KV cache binds: 2 replicas of the conversation trace with 65,536 tokens of KV each
    # (v1: 1,173 preemptions of 500 requests, all finish; every request fits alone: the
    # longest needs in + out - 1 = 14,088 tokens), and v0 with 49,152 (47 of 43 requests)
    out.append(("conv-2-v1-kv64k", "conv", 2, "v1", 65536, "least_loaded"))
    out.append(("conv-2-v0-kv48k", "conv", 2, "v0", 49152, "least_loaded"))
    # shared prefixes (60 ids, Zipf s = 1, 100-2,000 tokens each): 3 replicas whose 32,768
    # tokens of KV (2,048 blocks) cannot hold every prefix besides the running batch, so unused
    # cached prefixes are evicted; least_loaded and prefix_affinity, v1 and v0; and an
    # unlimited cache (nothing evicted)
    for router, tag in (("least_loaded", "ll"), ("prefix_affinity", "pa")):
        out.append(("prefix-3-v1-kv32k-%s" % tag, "prefix", 3, "v1", 32768, router))
        out.append(("prefix-3-v0-kv32k-%s" % tag, "prefix", 3, "v0", 32768, router))
        out.append(("prefix-3-v1-%s" % tag, "prefix", 3, "v1", 0, router))
    # the step time's context term on (CTX_US: an 8B model's KV read on an H100, 48.907 ns
    # per token): v1 and v0, the KV cache binding, a bursty hour and shared prefixes
    for name in ("conv-2-v1", "conv-2-v0", "code-1-v1", "conv-2-v1-kv64k", "conv-2-v0-kv48k",
                 "prefix-3-v1-kv32k-pa"):
        base = [c for c in out if c[0] == name][0]
        out.append((name + "-ctx",) + base[1:])
    # a measured profile (tests/data/profiles/h100-8b.csv: prefill rows and a decode grid of
    # batch x context) instead of the row's numbers
    for name in ("conv-2-v1", "conv-2-v0", "code-1-v1", "conv-2-v1-kv64k", "prefix-3-v1-kv32k-pa"):
        base = [c for c in out if c[0] == name][0]
        out.append((name + "-prof",) + base[1:])
    return out


def case_profile(name, src):
    """The case's profile path, or None."""
    if name.endswith("-prof"):
        return os.path.join(os.path.abspath(src), "tests", "data", "profiles", "h100-8b.csv")
    return None


def case_extra(name, src):
    prof = case_profile(name, src)
    return "        profile: %s\n" % prof if prof else ""


CTX_US = 0.048907       # us per context token of the "-ctx" cases


def case_ctx(name):
    """The case's us_per_kv_token."""
    return CTX_US if name.endswith("-ctx") else 0.0


def fmt_num(x):
    return repr(float(x)) if x != int(x) else str(int(x))


def run_case(case, args, perf, np, h5py):
    name, trace, replicas, sched, kv, router = case
    T = 2048
    synthetic = trace == "prefix"
    trace_path = os.path.join(args.shared, "azure-llm-2023",
                              "AzureLLMInferenceTrace_%s.csv.gz" % trace)
    scen = os.path.join(args.work, name + ".yaml")
    h5 = os.path.join(args.work, name + ".h5")
    with open(scen, "w") as f:
        if synthetic:   # 0.05/s a day is 1.2/s in the first hour
            f.write(SCENARIO_PREFIX.format(name=name, replicas=replicas, sched=sched,
                                           router=router, rate="0.05", prefill=fmt_num(perf[0]),
                                           decode=fmt_num(perf[1]), max_batch=perf[2],
                                           decode_single=fmt_num(perf[3]), kv=kv, T=T,
                                           ctx=fmt_num(case_ctx(name)),
                                           extra=case_extra(name, args.src)))
        else:
            f.write(SCENARIO.format(name=name, replicas=replicas, sched=sched, svc=trace,
                                    trace=trace_path, prefill=fmt_num(perf[0]),
                                    decode=fmt_num(perf[1]), max_batch=perf[2],
                                    decode_single=fmt_num(perf[3]), kv=kv, T=T,
                                    ctx=fmt_num(case_ctx(name)),
                                    extra=case_extra(name, args.src)))
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
        generated = int(f["services"]["requests"][0]) if synthetic else None
    cols = tab.dtype.names
    t0 = time.time()
    horizon = HORIZON_US
    if synthetic:
        # the requests fleetsim generated, from its own /requests (every one finished: the
        # service's request count says so); arrivals are distinct microseconds
        if generated != len(tab):
            print("%s: FAIL: %d requests generated, %d in /requests (the case needs every "
                  "request finished by the horizon)" % (name, generated, len(tab)))
            return False
        horizon = 2 * HORIZON_US
        order = np.argsort(tab["arrival"], kind="stable")
        reqs = [(int(round(float(tab["arrival"][k]) * 1e6)), int(tab["input"][k]),
                 int(tab["output"][k]), int(tab["prefix"][k]), int(tab["prefix_len"][k]))
                for k in order]
    else:
        reqs = read_azure_trace(trace_path)
    P, B, step1, stepb = engine_params(*perf)
    st = {}
    res = simulate(reqs, replicas, P, B, step1, stepb, T=T, K=kv, scheduler=sched,
                   horizon_us=horizon, router=router, stats=st, kv_us=case_ctx(name),
                   profile=read_profile(case_profile(name, args.src))
                   if case_profile(name, args.src) else None)
    t_py = time.time() - t0

    # the reference's finished requests by (arrival_us, in, out)
    ref = collections.defaultdict(list)
    n_ref = 0
    hits = 0
    for q, r in zip(reqs, res):
        if r is None:
            continue
        at, i, o = q[:3]
        n_ref += 1
        hits += r.prefix_hit > 0
        ttft = (r.first_us - at) / 1e6
        tpot = (r.end_us - r.first_us) / 1e6 / (o - 1) if o > 1 else float("nan")
        ref[(at, i, o)].append((r.end_us / 1e6, ttft, tpot, r.replica, r.preemptions,
                                r.prefix_hit))
    got = collections.defaultdict(list)
    arr_us = np.rint(tab["arrival"] * 1e6).astype(np.int64)
    has_rep = "replica" in cols
    has_pre = "preemptions" in cols
    has_hit = "prefix_hit" in cols
    for k in range(len(tab)):
        key = (int(arr_us[k]), int(tab["input"][k]), int(tab["output"][k]))
        got[key].append((float(tab["end"][k]), float(tab["ttft"][k]), float(tab["tpot"][k]),
                         int(tab["replica"][k]) if has_rep else None,
                         int(tab["preemptions"][k]) if has_pre else None,
                         int(tab["prefix_hit"][k]) if has_hit else None))

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
            if has_hit and a[5] != b[5]:
                ok = False
            if not ok:
                bad.append("request arrival %.6f s in %d out %d: fleetsim ttft %.6f tpot %.6f "
                           "end %.6f%s%s%s, reference ttft %.6f tpot %.6f end %.6f replica %d "
                           "preemptions %d prefix_hit %d" % (
                               key[0] / 1e6, key[1], key[2], b[1], b[2], b[0],
                               " replica %d" % b[3] if has_rep else "",
                               " preemptions %d" % b[4] if has_pre else "",
                               " prefix_hit %d" % b[5] if has_hit else "",
                               a[1], a[2], a[0], a[3], a[4], a[5]))
    pre_total = sum(r.preemptions for r in res if r is not None)
    missing = [c for c in ("replica", "preemptions") if c not in cols]
    for line in bad[:10]:
        print("%s: MISMATCH %s" % (name, line))
    if len(bad) > 10:
        print("%s: ... %d more mismatches" % (name, len(bad) - 10))
    print("%s: %s: %d requests compared (fleetsim %d rows, reference %d finished of %d), "
          "max |diff| ttft %.3g s tpot %.3g s end %.3g s; preemptions %d%s; fleetsim %.1f s, "
          "reference %.1f s%s" % (
              name, "ok" if not bad else "FAIL", compared, len(tab), n_ref, len(reqs), dmax[0],
              dmax[1], dmax[2], pre_total,
              "; prefix hits %d (%.1f%%), cached blocks evicted %d" % (
                  hits, 100.0 * hits / max(n_ref, 1), st["evicted"]) if synthetic else "", t_c, t_py,
              "; no column %s in /requests" % " or ".join(missing) if missing else ""))
    return not bad


# Disaggregated cases: prefill replicas on the H100 pool (serving-azure.yaml's row), decode
# replicas on an A100 pool (a row of half its rates, and a KV cache that binds where the case
# says), the KV of Llama-3-8B (131,072 bytes a token) moved at the case's bandwidth.
SCENARIO_DISAGG = """\
# serving_ref.py case {name}: disaggregated serving, {np} prefill replica(s) on H100 and {nd}
# decode replica(s) on A100, fixed and ready at 0, scheduler {sched}.
name: serving-ref-{name}
seed: 1
horizon: 1h
until: horizon
warmup: 0s
cluster:
  pools:
    - {{name: main, gpu: H100, nodes: 1, gpus_per_node: 8}}
    - {{name: dec, gpu: A100, nodes: 1, gpus_per_node: 8}}
workload:
  synthetic:
    arrivals: {{process: poisson, rate: 1/h}}
    gpus: {{1: 1.0}}
    duration: {{dist: constant, value: 1m}}
scheduler: {{queue: priority, preemption: order, checkpoint_interval: 30m}}
services:
  - name: {svc}
    gpus: 1
    requests:
      process: trace
      trace: {trace}
    performance:
      - {{gpu: H100, prefill: {prefill}, decode: {decode}, max_batch: {max_batch}, decode_single: {decode_single}, kv_tokens: {kvp}}}
      - {{gpu: A100, prefill: {prefill2}, decode: {decode2}, max_batch: {max_batch}, decode_single: {decode_single2}, kv_tokens: {kvd}}}
    engine: {{scheduler: {sched}, max_num_batched_tokens: {T}}}
    autoscale: {{metric: none}}
    disaggregated:
      prefill: {{replicas: {np}, gpu: H100}}
      decode: {{replicas: {nd}, gpu: A100}}
      kv_transfer: {{bandwidth: {bw}, bytes_per_token: {kvb}}}
output: {{requests: true}}
"""

KV_BYTES_8B = 131072


def disagg_cases():
    """(name, trace, prefill replicas, decode replicas, scheduler, prefill KV, decode KV,
    bandwidth bytes/s)"""
    return [
        # nothing binds: 2 + 2 replicas, 10 GB/s (a 2,000-token prompt moves in 26 ms)
        ("disagg-conv-2p2d-v1", "conv", 2, 2, "v1", 0, 0, 10e9),
        # the decode side's KV cache binds (32,768 tokens on each A100 replica): decode
        # preemptions go back to the prefill replica; slow 2 GB/s links
        ("disagg-conv-2p2d-v1-kvdec", "conv", 2, 2, "v1", 0, 32768, 2e9),
        # scheduler v0, the code hour (long prompts), both caches limited
        ("disagg-code-2p1d-v0-kv", "code", 2, 1, "v0", 65536, 16384, 25e9),
    ]


def run_disagg_case(case, args, perf, np, h5py):
    name, trace, npre, ndec, sched, kvp, kvd, bw = case
    T = 2048
    trace_path = os.path.join(args.shared, "azure-llm-2023",
                              "AzureLLMInferenceTrace_%s.csv.gz" % trace)
    scen = os.path.join(args.work, name + ".yaml")
    h5 = os.path.join(args.work, name + ".h5")
    prefill, decode, max_batch, dsingle = perf
    with open(scen, "w") as f:
        f.write(SCENARIO_DISAGG.format(
            name=name, svc=trace, trace=trace_path, np=npre, nd=ndec, sched=sched, T=T,
            prefill=fmt_num(prefill), decode=fmt_num(decode), max_batch=max_batch,
            decode_single=fmt_num(dsingle), prefill2=fmt_num(prefill / 2),
            decode2=fmt_num(decode / 2), decode_single2=fmt_num(dsingle / 2), kvp=kvp, kvd=kvd,
            bw=fmt_num(bw), kvb=KV_BYTES_8B))
    if os.path.exists(h5):
        os.unlink(h5)
    t0 = time.time()
    pr = subprocess.run([args.fleetsim, "run", scen, "-o", h5, "-q"], stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, universal_newlines=True)
    t_c = time.time() - t0
    if pr.returncode != 0:
        print("%s: FAIL: fleetsim run exited %d:\n%s" % (name, pr.returncode, pr.stdout.strip()))
        return False
    with h5py.File(h5, "r") as f:
        tab = f["requests"][()]
    for col in ("decode_replica", "kv_transfer"):
        if col not in tab.dtype.names:
            print("%s: FAIL: /requests has no column %s" % (name, col))
            return False
    reqs = read_azure_trace(trace_path)
    t0 = time.time()
    pre = engine_params(*perf) + (kvp,)
    dec = engine_params(prefill / 2, decode / 2, max_batch, dsingle / 2) + (kvd,)
    res = simulate_disagg(reqs, npre, ndec, pre, dec, KV_BYTES_8B, bw, T=T, scheduler=sched)
    t_py = time.time() - t0
    ref = collections.defaultdict(list)
    n_ref = 0
    for q, r in zip(reqs, res):
        if r is None:
            continue
        at, i, o = q
        n_ref += 1
        tpot = (r.end_us - r.first_us) / 1e6 / (o - 1) if o > 1 else float("nan")
        ref[(at, i, o)].append((r.end_us / 1e6, (r.first_us - at) / 1e6, tpot, r.replica,
                                r.decode_replica, r.preemptions, r.xfer_us / 1e6))
    got = collections.defaultdict(list)
    arr_us = np.rint(tab["arrival"] * 1e6).astype(np.int64)
    for k in range(len(tab)):
        key = (int(arr_us[k]), int(tab["input"][k]), int(tab["output"][k]))
        got[key].append((float(tab["end"][k]), float(tab["ttft"][k]), float(tab["tpot"][k]),
                         int(tab["replica"][k]), int(tab["decode_replica"][k]),
                         int(tab["preemptions"][k]), float(tab["kv_transfer"][k])))

    def close(a, b):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= args.tol

    bad = []
    dmax = [0.0, 0.0, 0.0]
    compared = 0
    for key in sorted(set(ref) | set(got)):
        rs = sorted(ref.get(key, []))
        gs = sorted(got.get(key, []))
        if len(rs) != len(gs):
            bad.append("request arrival %.6f s in %d out %d: fleetsim reports %d, the reference "
                       "finishes %d" % (key[0] / 1e6, key[1], key[2], len(gs), len(rs)))
        for a, b in zip(rs, gs):
            compared += 1
            for j in range(3):
                if not (math.isnan(a[j]) or math.isnan(b[j])):
                    dmax[j] = max(dmax[j], abs(a[j] - b[j]))
            ok = all(close(a[j], b[j]) for j in (0, 1, 2, 6)) and a[3:6] == b[3:6]
            if not ok:
                bad.append("request arrival %.6f s in %d out %d: fleetsim end %.6f ttft %.6f "
                           "tpot %.6f replica %d decode %d preemptions %d transfer %.6f; "
                           "reference %.6f %.6f %.6f %d %d %d %.6f" % ((key[0] / 1e6,) + key[1:] +
                                                                      b + a))
    for line in bad[:10]:
        print("%s: MISMATCH %s" % (name, line))
    if len(bad) > 10:
        print("%s: ... %d more mismatches" % (name, len(bad) - 10))
    pre_total = sum(r.preemptions for r in res if r is not None)
    print("%s: %s: %d requests compared (fleetsim %d rows, reference %d finished of %d), max "
          "|diff| end %.3g s ttft %.3g s tpot %.3g s; preemptions %d; fleetsim %.1f s, "
          "reference %.1f s" % (name, "ok" if not bad else "FAIL", compared, len(tab), n_ref,
                                len(reqs), dmax[0], dmax[1], dmax[2], pre_total, t_c, t_py))
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
    c.add_argument("--disagg", action="store_true",
                   help="the disaggregated cases (prefill and decode groups) instead")
    args = ap.parse_args(argv)
    if args.cmd != "check":
        ap.print_usage()
        return 2
    if args.list:
        for k in (disagg_cases() if args.disagg else cases()):
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
    sel = disagg_cases() if args.disagg else cases()
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
        ok = (run_disagg_case if args.disagg else run_case)(k, args, perf, np, h5py) and ok
    print("serving_ref: %s" % ("all cases agree" if ok else "DIFFERENCES"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
