#!/usr/bin/python3
"""Hand cases of the serving engine's reference (tests/serving_ref.py: simulate).

Every expected number below was worked out by hand from the engine's rules (iteration
durations floor(p * 1e6 / P + step(b) + 0.5) us; the sums are in the comments), not by running
the simulator.  The replica of every case is the one of scenarios/serving-azure.yaml:

  P = 10,000 prompt tokens/s, B = max_batch = 64, decode 2,400 tokens/s, decode_single 90:
  stepb = 64 / 2400 * 1e6 = 26,666.67 us, step1 = 1e6 / 90 = 11,111.11 us,
  step(b) = step1 + (stepb - step1) (b - 1) / 63, so
    step(1)  -> 11,111 us (11,111.11 + 0.5 rounded down)
    step(2)  = 11,111.11 + 15,555.56 / 63 = 11,358.02 -> 11,358 us
    step(63) = 11,111.11 + 15,555.56 * 62 / 63 = 26,419.75 -> 26,420 us
    step(64) = 26,666.67 -> 26,667 us
  a prefill of p tokens alone: p * 100 us (2,048 tokens: 204,800 us).

  serving_ref_hand.py         runs every case; exit 0 when all pass, 1 otherwise
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serving_ref import simulate, iter_dur  # noqa: E402

P, B = 10000.0, 64
STEPB = 64 / 2400 * 1e6
STEP1 = 1e6 / 90
T = 2048

failures = []


def check(name, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (name, got, want))
        print("FAIL %s: got %r, want %r" % (name, got, want))


def sim(reqs, replicas=1, K=0, scheduler="v1", log=None):
    return simulate(reqs, replicas, P, B, STEP1, STEPB, T=T, K=K, scheduler=scheduler,
                    token_log=log)


def case_durations():
    """The duration formula on the numbers above."""
    check("dur(2048, 0)", iter_dur(2048, 0, P, B, STEP1, STEPB), 204800)
    check("dur(0, 1)", iter_dur(0, 1, P, B, STEP1, STEPB), 11111)
    check("dur(0, 2)", iter_dur(0, 2, P, B, STEP1, STEPB), 11358)
    check("dur(0, 63)", iter_dur(0, 63, P, B, STEP1, STEPB), 26420)
    check("dur(0, 64)", iter_dur(0, 64, P, B, STEP1, STEPB), 26667)
    check("dur(2047, 1)", iter_dur(2047, 1, P, B, STEP1, STEPB), 215811)   # 204,700 + 11,111.11
    check("dur(1812, 1)", iter_dur(1812, 1, P, B, STEP1, STEPB), 192311)   # 181,200 + 11,111.11
    check("dur(1008, 1)", iter_dur(1008, 1, P, B, STEP1, STEPB), 111911)   # 100,800 + 11,111.11
    check("dur(0, 0)", iter_dur(0, 0, P, B, STEP1, STEPB), 0)
    # half up, not to even: 5 tokens at 2e6 tokens/s = 2.5 us -> 3; 4.5 us -> 5
    check("dur(2.5 us)", iter_dur(5, 0, 2e6, B, STEP1, STEPB), 3)
    check("dur(4.5 us)", iter_dur(9, 0, 2e6, B, STEP1, STEPB), 5)
    # a tiny prefill is at least 1 us
    check("dur(0.x us)", iter_dur(1, 0, 1e9, B, STEP1, STEPB), 1)


def case_a_burst():
    """(a) 32 prompts of 8,000 tokens at t = 0 on one replica, v1, T = 2,048.

    out = 1: every iteration prefills exactly 2,048 tokens (a prompt's last chunk shares the
    budget with the next prompt's first), 204,800 us each.  Prompt k (0-based) completes in
    iteration ceil(8000 (k + 1) / 2048): its first (and last) token at that many x 204,800 us.
    The last, k = 31: 256,000 / 2,048 = 125 iterations = 25,600,000 us = 25.6 s, the total
    work (256,000 tokens at 10,000 tokens/s); prompt 0 at iteration ceil(8000/2048) = 4:
    819,200 us.  (The old engine, 64 slots in parallel, gave every prompt 0.8 s.)
    """
    reqs = [(0, 8000, 1)] * 32
    res = sim(reqs)
    for k in range(32):
        it = -(-8000 * (k + 1) // 2048)
        check("a out=1 first[%d]" % k, res[k].first_us, it * 204800)
        check("a out=1 end[%d]" % k, res[k].end_us, it * 204800)
    check("a out=1 last first token", res[31].first_us, 25600000)
    check("a out=1 first first token", res[0].first_us, 819200)

    # out = 2: a prompt whose prefill completed is decoding in the next iteration, takes 1
    # token of the budget (p = 2,047, b = 1: 215,811 us) and finishes there.  Prompts complete
    # about 4 iterations apart, so at most one decoder per iteration; with k decoders so far,
    # the prefill tokens done after iteration j are 2048 j - k, and prompt k completes in
    # iteration j_k = ceil((8000 (k + 1) + k) / 2048):
    #   j_0 = 4, j_1 = ceil(16001/2048) = 8, ..., j_30 = ceil(248030/2048) = 122,
    #   j_31 = ceil(256031/2048) = 126.
    # Iterations 1..125: 31 with a decoder (j_k + 1 for k = 0..30, all <= 123) at 215,811 us
    # and 94 at 204,800 us; after 125 of them 2048 * 125 - 31 = 255,969 tokens are done, so
    # iteration 126 prefills the last 31 tokens alone: 3,100 us.
    #   last first token = 31 * 215,811 + 94 * 204,800 + 3,100 = 6,690,141 + 19,251,200 + 3,100
    #                    = 25,944,441 us (25.6 s of prefill + 31 decode steps of 11,111.11 us
    #                      + the rounding)
    #   its end = + step(1) 11,111 = 25,955,552 us
    #   prompt 0: first 4 * 204,800 = 819,200, end 819,200 + 215,811 = 1,035,011
    #   prompt 1: first 7 * 204,800 + 215,811 = 1,649,411 (iterations 1-4, 5 with prompt 0's
    #             decode, 6-8)
    reqs = [(0, 8000, 2)] * 32
    res = sim(reqs)
    check("a out=2 first[0]", res[0].first_us, 819200)
    check("a out=2 end[0]", res[0].end_us, 1035011)
    check("a out=2 first[1]", res[1].first_us, 1649411)
    check("a out=2 last first token", res[31].first_us, 25944441)
    check("a out=2 last end", res[31].end_us, 25955552)
    firsts = [r.first_us for r in res]
    check("a out=2 firsts increase", firsts == sorted(firsts) and len(set(firsts)) == 32, True)
    check("a out=2 last first token >= 25.6 s", res[31].first_us >= 25600000, True)


def case_b_batch_growth():
    """(b) A lone request's TPOT grows when 63 others join it.

    A: t = 0, in 100, out 1,000.  Iteration 1 prefills it alone: 10,000 us, first token at
    10,000.  Then decode alone, step(1) = 11,111 us: its m-th decode iteration ends at
    10,000 + 11,111 m.
    Alone: end = 10,000 + 999 * 11,111 = 11,109,889 us; TPOT 11,111 us.

    With 63 others (in 16, out 2,000) arriving at 1,000,000 us: A's 90th decode iteration runs
    998,879 .. 1,009,990 (A has 91 tokens then); the arrivals wait for its end.  Next iteration:
    A decodes (1 token) and the 63 prefill together, p = 63 * 16 = 1,008, b = 1:
    100,800 + 11,111.11 -> 111,911 us, ending at 1,121,901 (A: 92 tokens; the others' first
    token, TTFT 121,901).  From then on 64 decode: step(64) = 26,667 us, A's 908 remaining
    tokens end at 1,121,901 + 908 * 26,667 = 1,121,901 + 24,213,636 = 25,335,537 us.
    A's TPOT = (25,335,537 - 10,000) / 999 = 25,350.88 us (from 11,111).
    The others then have 1 + 908 = 909 tokens and decode 63 at a time, step(63) = 26,420 us:
    end = 25,335,537 + 1,091 * 26,420 = 25,335,537 + 28,824,220 = 54,159,757 us.
    """
    alone = sim([(0, 100, 1000)])
    check("b alone first", alone[0].first_us, 10000)
    check("b alone end", alone[0].end_us, 11109889)
    reqs = [(0, 100, 1000)] + [(1000000, 16, 2000)] * 63
    log = {}
    res = sim(reqs, log=log)
    check("b A first", res[0].first_us, 10000)
    check("b A end", res[0].end_us, 25335537)
    check("b A tokens before the join", log[0][90], 1009990)
    check("b A interval of the joint prefill", log[0][91] - log[0][90], 111911)
    check("b A interval at 64", log[0][92] - log[0][91], 26667)
    check("b A tpot grows", (res[0].end_us - res[0].first_us) / 999 > 25350, True)
    for k in (1, 63):
        check("b other %d first" % k, res[k].first_us, 1121901)
        check("b other %d end" % k, res[k].end_us, 54159757)


def case_c_chunked_prefill():
    """(c) A decoding request's token interval stretches to p/P + step(b) while a long prompt
    is chunked through (v1), and stops for the whole prompt under v0.

    A: t = 0, in 100, out 50; B: t = 50,000, in 10,000, out 1.
    v1: A prefills 0 .. 10,000 (first token), decodes alone at 11,111: tokens at 21,111,
    32,222, 43,333, 54,444 (5 tokens; B arrived at 50,000 inside that iteration).  From 54,444:
    A's decode + a chunk of B: p = 2,047, b = 1: 204,700 + 11,111.11 -> 215,811 us, four times
    (B's 8,188 tokens), then the last chunk 10,000 - 8,188 = 1,812: 181,200 + 11,111.11 ->
    192,311 us:
      54,444 -> 270,255 -> 486,066 -> 701,877 -> 917,688 -> 1,109,999
    B: first = end = 1,109,999, TTFT 1,059,999.  A has 10 tokens there; its 40 others at
    11,111: end = 1,109,999 + 444,440 = 1,554,439; TPOT (1,554,439 - 10,000) / 49 = 31,519.2.
    v0: the same until 54,444; then a prefill iteration of B alone (10,000 > T = 2,048 is
    admitted alone), decode paused: 1,000,000 us, B's token at 1,054,444 (TTFT 1,004,444), then
    A's 45 other tokens: 1,054,444 + 45 * 11,111 = 1,554,439 (the same end: the same work,
    A's longest gap 1,011,111 us instead of 215,811).
    """
    reqs = [(0, 100, 50), (50000, 10000, 1)]
    log = {}
    res = sim(reqs, log=log)
    check("c v1 A first", res[0].first_us, 10000)
    check("c v1 A token 5", log[0][4], 54444)
    gaps = [log[0][i + 1] - log[0][i] for i in range(4, 9)]
    check("c v1 A gaps while B is chunked", gaps, [215811, 215811, 215811, 215811, 192311])
    check("c v1 B first", res[1].first_us, 1109999)
    check("c v1 B end", res[1].end_us, 1109999)
    check("c v1 A end", res[0].end_us, 1554439)
    log = {}
    res = sim(reqs, scheduler="v0", log=log)
    check("c v0 B first", res[1].first_us, 1054444)
    check("c v0 A gap over B's prefill", log[0][5] - log[0][4], 1000000 + 11111)
    check("c v0 A end", res[0].end_us, 1554439)


def case_d_kv_preemption():
    """(d) A KV cache that fills preempts the newest sequence; it is recomputed.

    K = 175 tokens: floor(175 / 16) = 10 blocks.  A and B at t = 0, in 64, out 40.
    Iteration 1 prefills both (p = 128: 12,800 us), 4 blocks each, free 2; both first tokens
    at 12,800 (1 token, 64 computed).  Decode of 2: step(2) = 11,358 us; a decode at computed
    c needs ceil((c + 1) / 16) blocks: 5 for c = 64..79, so each takes its 5th block in the
    first decode (free 0) and 16 decodes fit: 12,800 + 16 * 11,358 = 194,528 us, 17 tokens each,
    computed 80.  Next iteration: A needs a 6th block, none free: B (the newest) is preempted
    (frees 5; computed 0; to the front of waiting), A takes 1 (free 4), and no admission in this
    iteration.  A decodes alone at 11,111 us; B's recompute needs 64 + 17 = 81 tokens, 6 blocks,
    more than the 4 (then 3) free while A runs.  A's tokens 18..40: 23 iterations:
    end = 194,528 + 23 * 11,111 = 450,081 (frees its 7 blocks).  Then B is prefilled again,
    81 tokens: 8,100 us, to 458,181 (its 18th token; first stays 12,800), and decodes its 22
    others alone: end = 458,181 + 22 * 11,111 = 702,623.  B: 1 preemption, A: none.
    v0 gives the same numbers: both prompts in one prefill iteration (128 <= T), the decode
    iteration at 194,528 preempts B the same way, and B's prefill (81 tokens, 6 blocks) waits
    for A's blocks.
    """
    reqs = [(0, 64, 40), (0, 64, 40)]
    for sched in ("v1", "v0"):
        log = {}
        res = sim(reqs, K=175, scheduler=sched, log=log)
        check("d %s A first" % sched, res[0].first_us, 12800)
        check("d %s B first" % sched, res[1].first_us, 12800)
        check("d %s A end" % sched, res[0].end_us, 450081)
        check("d %s B end" % sched, res[1].end_us, 702623)
        check("d %s A preemptions" % sched, res[0].preemptions, 0)
        check("d %s B preemptions" % sched, res[1].preemptions, 1)
        check("d %s B token 17" % sched, log[1][16], 194528)
        check("d %s B token 18 (recomputed)" % sched, log[1][17], 458181)
        check("d %s A tokens" % sched, len(log[0]), 40)
        check("d %s B tokens" % sched, len(log[1]), 40)
    # K = 191: floor(191 / 16) = 11 blocks (not 12).  Same numbers: at 194,528 A takes the
    # 11th block and B, needing its 6th, preempts itself (the last running is the current one:
    # step 1 stops); B's recompute (6 blocks) waits for A, as the 5 then 4 free are too few.
    # (12 blocks would let both reach 96 tokens before a preemption.)
    for sched in ("v1", "v0"):
        res = sim(reqs, K=191, scheduler=sched)
        check("d %s K=191 ends" % sched, [r.end_us for r in res], [450081, 702623])
        check("d %s K=191 preemptions" % sched, [r.preemptions for r in res], [0, 1])
    # The preempted sequence goes to the FRONT of waiting: C (t = 100,000, in 16, out 1, one
    # block) waits from 103,664 (no block free) and is behind B from 194,528, so it is admitted
    # only with B after A's end: p = 81 + 16 = 97: 9,700 us, 450,081 -> 459,781 (C's token, B's
    # 18th), then B's 22 others: 459,781 + 244,442 = 704,223.  The same under v0.
    for sched in ("v1", "v0"):
        res = sim(reqs + [(100000, 16, 1)], K=175, scheduler=sched)
        check("d %s +C ends" % sched, [r.end_us for r in res], [450081, 704223, 459781])
        check("d %s +C preemptions" % sched, [r.preemptions for r in res], [0, 1, 0])
    # unlimited: no preemption, both decode together 39 steps of 11,358 after 12,800
    res = sim(reqs)
    check("d unlimited end", [r.end_us for r in res], [12800 + 39 * 11358] * 2)
    check("d unlimited preemptions", [r.preemptions for r in res], [0, 0])


def case_f_no_admission_after_preemption():
    """(f) v1 admits nothing in an iteration that preempted, even what would fit.

    T = 64, K = 256 tokens (16 blocks).  A: t = 0, in 16, out 6; B: t = 1,600, in 240, out 1
    (15 blocks: A's 2 and B's 15 do not fit together).
      it 1, 0: A's prefill, 16 tokens, 1 block (free 15): 1,600 us.  A's first token 1,600.
      it 2, 1,600 (B arrived at that instant: seen): A decodes (blocks for 17: 2, free 14); B
        admitted with min(240, 63) = 63 tokens, 4 blocks (free 10): p = 63, b = 1:
        6,300 + 11,111.11 -> 17,411: ends 19,011.
      it 3: A (2 blocks), B 63 more -> 126: 8 blocks (free 6): 17,411, ends 36,422.
      it 4: B -> 189: 12 blocks (free 2): ends 53,833.  A has 4 tokens.
      it 5, 53,833: A decodes; B's last 51 tokens need 15 blocks, 3 more, 2 free: B (the last
        running) is preempted, it is the current one: step 1 stops; B frees 12 (free 14) and
        is the front of waiting, where its first chunk (63 tokens, 4 blocks) would fit, but
        nothing is admitted in this iteration: A alone, 11,111: ends 64,944 (A: 5 tokens).
      it 6, 64,944: A decodes, B admitted again with 63 tokens: 17,411, ends 82,355: A's 6th
        token, A ends 82,355 (frees 2: free 12).
      it 7: B alone, budget 64: 127 tokens, 6,400 us -> 88,755; it 8: 191 -> 95,155;
      it 9: the last 49: 4,900 us -> 100,055: B's token: first = end = 100,055, 1 preemption.
    (Admitting B in it 5 would give A's 5th and 6th tokens at 71,244 and 88,655.)
    """
    reqs = [(0, 16, 6), (1600, 240, 1)]
    log = {}
    res = simulate(reqs, 1, P, B, STEP1, STEPB, T=64, K=256, scheduler="v1", token_log=log)
    check("f A tokens", log[0], [1600, 19011, 36422, 53833, 64944, 82355])
    check("f A end", res[0].end_us, 82355)
    check("f B end", res[1].end_us, 100055)
    check("f B first", res[1].first_us, 100055)
    check("f B preemptions", res[1].preemptions, 1)


def case_e_order_and_routing():
    """(e) Event order and routing.

    One replica: A at 0 (in 100, out 3) prefills 0 .. 10,000.  B arrives at exactly 10,000
    (in 100, out 1): it is seen by the next iteration, A's decode + B's prefill: p = 100, b = 1:
    10,000 + 11,111.11 -> 21,111 us: B's token at 31,111 (TTFT 21,111), A's 2nd token there;
    A's last alone: 31,111 + 11,111 = 42,222.
    Two replicas: requests at 0, 0, 0 go to replicas 0, 1, 0 (fewest requests, lowest index).
    A request that finishes at t no longer counts for an arrival at t: D at 0 (in 200, out 1)
    on replica 0 ends at 20,000; C at 0 (in 100, out 1) on replica 1 ends at 10,000; E arriving
    at 10,000 goes to replica 1 (0 requests there, 1 on replica 0; were C still counted, the
    tie would send it to replica 0), its 10 tokens: first = end = 11,000.
    """
    res = sim([(0, 100, 3), (10000, 100, 1)])
    check("e B first", res[1].first_us, 31111)
    check("e A end", res[0].end_us, 42222)
    res = sim([(0, 100, 5)] * 3, replicas=2)
    check("e routing", [r.replica for r in res], [0, 1, 0])
    res = sim([(0, 200, 1), (0, 100, 1), (10000, 10, 1)], replicas=2)
    check("e D end", res[0].end_us, 20000)
    check("e C end", res[1].end_us, 10000)
    check("e replicas", [r.replica for r in res], [0, 1, 1])
    check("e E first", res[2].first_us, 11000)


def case_g_prefix_cache():
    """Prefix caching.  A (in 1,000, out 1, prefix 1 of 800 tokens) at 0 is prefilled whole:
    dur(1000, 0) = 100,000 us, so its only token ends it at 100,000; its prefix's 800 / 16 = 50
    full blocks stay cached.  B, the same shape and prefix, at 200,000 finds them: it prefills
    only its 200 other tokens, 20,000 us, ending at 220,000 (prefix_hit 800).  C (in 800, its
    whole prompt the prefix) at 300,000: at most floor((800 - 1) / 16) = 49 blocks are used (the
    last token is computed again, as vLLM's get_computed_blocks), so it prefills 16 tokens,
    1,600 us.  D with another prefix at 400,000: no hit, 100,000 us."""
    reqs = [(0, 1000, 1, 1, 800), (200000, 1000, 1, 1, 800), (300000, 800, 1, 1, 800),
            (400000, 1000, 1, 2, 800)]
    res = sim(reqs)
    check("g A end", res[0].end_us, 100000)
    check("g B end", res[1].end_us, 220000)
    check("g C end", res[2].end_us, 301600)
    check("g D end", res[3].end_us, 500000)
    check("g hits", [r.prefix_hit for r in res], [0, 800, 784, 0])
    # a small KV cache: 70 blocks (1,120 tokens).  A (63 blocks) leaves 50 cached and 20
    # free; D (63 blocks, another prefix) takes the 20 and evicts 43 of A's (its tail): 7 stay,
    # so B after D finds 7 blocks (112 tokens) and prefills 888 tokens, 88,800 us
    reqs = [(0, 1000, 1, 1, 800), (200000, 1000, 1, 2, 800), (400000, 1000, 1, 1, 800)]
    res = simulate(reqs, 1, P, B, STEP1, STEPB, T=T, K=70 * 16, router="least_loaded")
    check("g evicted: B end", res[2].end_us, 488800)
    check("g evicted: hits", [r.prefix_hit for r in res], [0, 0, 112])
    # prefix_affinity: X (no prefix, 100 output tokens) at 150,000 goes to replica 0 (ties:
    # lowest index), which holds A's prefix; B at 200,000 goes to replica 1 under least_loaded
    # (fewer requests) and to replica 0 under prefix_affinity
    reqs = [(0, 1000, 1, 1, 800), (150000, 100, 100), (200000, 1000, 1, 1, 800)]
    for router, rep, hit in (("least_loaded", 1, 0), ("prefix_affinity", 0, 800)):
        res = simulate(reqs, 2, P, B, STEP1, STEPB, T=T, router=router)
        check("g %s: B replica" % router, res[2].replica, rep)
        check("g %s: B hit" % router, res[2].prefix_hit, hit)


def main():
    for case in (case_durations, case_a_burst, case_b_batch_growth, case_c_chunked_prefill,
                 case_d_kv_preemption, case_e_order_and_routing,
                 case_f_no_admission_after_preemption, case_g_prefix_cache):
        n = len(failures)
        try:
            case()
        except Exception as e:  # a broken reference: a failure, not a crash
            failures.append("%s: %s: %s" % (case.__name__, type(e).__name__, e))
            print("FAIL %s raised %s: %s" % (case.__name__, type(e).__name__, e))
        print("%s %s" % ("ok  " if len(failures) == n else "FAIL", case.__name__))
    print("serving_ref_hand: %s" % ("all cases pass" if not failures else
                                    "%d checks failed" % len(failures)))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
