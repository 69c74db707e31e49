/*
 * fs_service_engine: the serving engine of request mode (fs_service_int.h).
 * A replica is one LLM serving engine at iteration level, as vLLM runs one
 * (docs/services.md "The engine" names the vLLM source each rule follows):
 *
 * - routing: a request goes, at arrival, to the ready replica with the
 *   fewest requests on it (running + waiting), and waits in that replica's
 *   own queue; with no ready replica it waits in the service's queue;
 * - scheduler v1 (vLLM's current engine, chunked prefill): every iteration
 *   first gives each running sequence its next tokens (one for a decoding
 *   sequence, the rest of a prefill) within the token budget
 *   max_num_batched_tokens, then admits waiting sequences FCFS while budget,
 *   max_num_seqs and the KV cache allow (none in an iteration that had to
 *   preempt);
 * - scheduler v0 (the older engine): an iteration either prefills newly
 *   admitted prompts (decode paused) or decodes every running sequence;
 * - KV cache: blocks of 16 tokens; a running sequence that cannot grow
 *   preempts the newest running one, which is recomputed later;
 * - prefix cache (requests.prefix): a finished request leaves its prefix's
 *   full blocks cached under its prefix id; a request admitted later with
 *   that id shares them (referenced, its prefill starts after them); the
 *   unused ones are evicted LRU (an entry's tail first) when blocks are
 *   short; router prefix_affinity sends a request to a replica that has
 *   its prefix;
 * - disaggregated serving (services[].disaggregated): prefill replicas only
 *   prefill; a sequence whose prefill is done (its first token out) is
 *   handed to a decode replica, which pulls its KV cache when it has a slot
 *   and the blocks (the prefill replica holds them until the transfer
 *   ends) and only decodes; a decode preemption is recomputed on a prefill
 *   replica;
 * - step time: an iteration with p prefill tokens and b decoding sequences
 *   takes p / prefill + step(b), step linear in b from 1/decode_single to
 *   max_batch/decode (the performance row), plus us_per_kv_token x the
 *   context tokens its decoding sequences attend to (0 by default).
 *
 * Fast by construction: while every running sequence decodes and nothing
 * can be admitted, the iterations are identical, so one event covers all of
 * them up to the next finish or KV shortage (a macro step); an arrival (or
 * a transfer that lands) cuts it at the next iteration boundary.  Events:
 * arrival, iteration end; disaggregated: transfer end, and per instant a
 * hand-off pass and a re-prefill pass.
 */
#include "fs_service_int.h"

#include <math.h>
#include <string.h>

#define KV_BLOCK 16u
#define STEP_PRIO (FS_PRIO_ARRIVAL + 5)   /* after every arrival of its instant */
/* disaggregated serving, within one instant: arrivals; transfers that end
 * (the prefill replicas' blocks freed); prefill iterations end and begin;
 * the prefills done are routed to decode replicas; decode iterations end
 * and begin; the sequences they preempted are routed to prefill replicas;
 * an idle prefill replica that got one begins */
#define XFER_PRIO (FS_PRIO_ARRIVAL + 4)
#define HANDOFF_PRIO (FS_PRIO_ARRIVAL + 6)
#define DECODE_PRIO (FS_PRIO_ARRIVAL + 7)
#define REPREFILL_PRIO (FS_PRIO_ARRIVAL + 8)
#define REWAKE_PRIO (FS_PRIO_ARRIVAL + 9)

int fs_sveng_push(svc_t *s, const req_t *r, int front)
{
    if (s->q_n == s->q_cap &&
        fs_svc_ring_grow((void **)&s->q, &s->q_cap, s->q_head, s->q_n, sizeof *s->q))
        return FS_ENOMEM;
    if (front) {
        s->q_head = (s->q_head + s->q_cap - 1) % s->q_cap;
        s->q[s->q_head] = *r;
    } else {
        s->q[(s->q_head + s->q_n) % s->q_cap] = *r;
    }
    s->q_n++;
    return 0;
}

req_t fs_sveng_pop(svc_t *s)
{
    req_t r = s->q[s->q_head];
    s->q_head = (s->q_head + 1) % s->q_cap;
    s->q_n--;
    return r;
}

/* ---- a replica's waiting queue ------------------------------------------------ */

static int wq_push(eng_t *e, const seq_t *q, int front)
{
    if (e->wq_n == e->wq_cap &&
        fs_svc_ring_grow((void **)&e->wq, &e->wq_cap, e->wq_head, e->wq_n, sizeof *e->wq))
        return FS_ENOMEM;
    if (front) {
        e->wq_head = (e->wq_head + e->wq_cap - 1) % e->wq_cap;
        e->wq[e->wq_head] = *q;
    } else {
        e->wq[(e->wq_head + e->wq_n) % e->wq_cap] = *q;
    }
    e->wq_n++;
    return 0;
}

static seq_t *wq_front(eng_t *e) { return &e->wq[e->wq_head]; }

static void wq_drop_front(eng_t *e)
{
    e->wq_head = (e->wq_head + 1) % e->wq_cap;
    e->wq_n--;
}

/* ---- the KV cache (step time: fs_service_step.c) -------------------------------- */

static uint32_t blocks_for(uint64_t tokens)
{
    return (uint32_t)((tokens + KV_BLOCK - 1) / KV_BLOCK);
}

/* The service's count of blocks in use gets this engine's: held by
 * sequences or by cache entries they share (unused cached blocks are free
 * for vLLM's kv_cache_usage too). */
static void kv_report(eng_t *e)
{
    if (!e->kv_blocks)
        return;
    uint64_t used = (uint64_t)e->kv_blocks - e->kv_free - e->evictable;
    *e->kv_used = *e->kv_used + used - e->used_rep;
    e->used_rep = used;
}

/* Frees `need` (<= e->evictable) cached blocks no sequence uses: from the
 * entry released longest ago, its tail blocks first (vLLM frees a request's
 * blocks tail first into the LRU free queue). */
static void evict(eng_t *e, uint64_t need)
{
    while (need > 0) {
        uint32_t best = 0;
        for (uint32_t id = 1; id < e->n_pc; id++) {
            const struct pcent *c = &e->pc[id];
            if (c->blocks && !c->ref && (!best || c->stamp < e->pc[best].stamp))
                best = id;
        }
        if (!best)
            return;
        struct pcent *c = &e->pc[best];
        uint32_t take = c->blocks < need ? c->blocks : (uint32_t)need;
        c->blocks -= take;
        e->evictable -= take;
        e->kv_free += take;
        need -= take;
    }
}

/* Blocks for seq q to hold `tokens`: 1 if had (e->kv_free taken), 0 if the
 * cache has not enough free blocks.  An unlimited cache always has them. */
static int kv_grow(eng_t *e, seq_t *q, uint64_t tokens)
{
    uint32_t need = blocks_for(tokens);
    if (need <= q->blocks)
        return 1;
    uint32_t more = need - q->blocks;
    if (e->kv_blocks) {
        if (more > e->kv_free + e->evictable)
            return 0;
        if (more > e->kv_free)
            evict(e, more - e->kv_free);
        e->kv_free -= more;
    }
    q->blocks = need;
    kv_report(e);
    return 1;
}

/* Seq q gives its blocks back: its own ones are freed, except (keep, a
 * finished request) its prefix's full blocks beyond what the cache entry
 * of its id holds, which join that entry; the entry's blocks it shared
 * are released (evictable once no sequence uses them). */
static void kv_release_keep(eng_t *e, seq_t *q, int keep)
{
    struct pcent *c = e->pc && q->r.pid ? &e->pc[q->r.pid] : NULL;
    uint32_t add = 0;
    if (c && keep) {
        uint32_t nb = q->r.plen / KV_BLOCK;     /* c->blocks >= q->hit while shared */
        if (nb > c->blocks)
            add = nb - c->blocks;
    }
    if (e->kv_blocks)
        e->kv_free += q->blocks - q->hit - add;
    if (c && (q->hit || add)) {
        c->blocks += add;
        if (q->hit)
            c->ref--;
        if (c->ref == 0) {
            e->evictable += q->hit ? c->blocks : add;
            c->stamp = ++e->stamp;
        }
    }
    q->blocks = 0;
    q->hit = 0;
    kv_report(e);
}

static void kv_release(eng_t *e, seq_t *q) { kv_release_keep(e, q, 0); }

/* Blocks of its prefix seq q finds cached at its admission with `total`
 * tokens to compute: the entry's, at most the prefix's full blocks, and
 * not its last token (vLLM's get_computed_blocks recomputes it). */
static uint32_t prefix_lookup(const eng_t *e, const req_t *r, uint64_t total)
{
    if (!e->pc || !r->pid || total == 0)
        return 0;
    uint32_t h = e->pc[r->pid].blocks;
    if (r->plen / KV_BLOCK < h)
        h = r->plen / KV_BLOCK;
    if ((total - 1) / KV_BLOCK < h)
        h = (uint32_t)((total - 1) / KV_BLOCK);
    return h;
}

/* Seq q (just admitted) shares h blocks of its prefix's entry. */
static void prefix_ref(eng_t *e, seq_t *q, uint32_t h)
{
    struct pcent *c = &e->pc[q->r.pid];
    if (c->ref++ == 0)
        e->evictable -= c->blocks;
    q->hit = h;
    q->blocks = h;
    q->computed = h * KV_BLOCK;
}

/* A macro step (k identical decode iterations from t0) allocates each
 * iteration's block at its end; the reference's engine does so when the
 * iteration starts: before the cache is looked at, take the blocks of the
 * iterations started before now (evicting as they would have). */
static void settle_blocks(eng_t *e, fs_time_t now)
{
    if (!e->armed || e->k <= 1 || now <= e->t0)
        return;
    uint64_t cnt = fs_svstep_macro_iters(e, now, 1);
    for (uint32_t i = 0; i < e->n_run; i++)
        kv_grow(e, &e->run[i], (uint64_t)e->run[i].computed + (uint64_t)cnt);
}

/* ---- requests on replicas ------------------------------------------------------ */

static void replica_count(svc_t *s, replica_t *r, int d)
{
    r->busy = (uint32_t)((int64_t)r->busy + d);
    s->busy = (uint32_t)((int64_t)s->busy + d);
    if (r->doomed)
        s->busy_doomed = (uint32_t)((int64_t)s->busy_doomed + d);
}

static int arm_p(services_t *a, svc_t *s, fs_model_t *m, uint32_t i, fs_time_t at, int prio)
{
    eng_t *e = s->rep[i].e;
    e->armed = 1;
    e->at = at;
    return fs_model_module_event(m, a->id, at, prio, EVD(EV_DONE, s->idx, i, 0), &e->ev);
}

static int arm(services_t *a, svc_t *s, fs_model_t *m, uint32_t i, fs_time_t at)
{
    return arm_p(a, s, m, i, at, s->rep[i].role == ROLE_DECODE ? DECODE_PRIO : STEP_PRIO);
}

/* Replica i has something new for its scheduler: an idle one starts an
 * iteration in this instant (at prio); one in a macro step stops it at
 * the next iteration boundary, where the news is seen. */
static int wake(services_t *a, svc_t *s, fs_model_t *m, uint32_t i, int prio)
{
    eng_t *e = s->rep[i].e;
    fs_time_t now = fs_model_now(m);
    if (!e->armed)
        return arm_p(a, s, m, i, now, prio);
    if (e->k > 1 && e->at > now) {  /* a macro step: cut at the next boundary */
        fs_time_t at = fs_svstep_macro_end(e, fs_svstep_macro_iters(e, now, 1));
        if (at < e->at) {
            fs_model_cancel(m, e->ev);
            return arm(a, s, m, i, at);
        }
    }
    return 0;
}

/* Request q joins replica i's waiting queue.  An idle replica starts an
 * iteration in this instant (after its other arrivals); one in a macro step
 * stops it at the next iteration boundary, where the request is seen. */
static int route_to(services_t *a, svc_t *s, fs_model_t *m, uint32_t i, const req_t *q)
{
    replica_t *r = fs_svc_rep(s, i);
    eng_t *e = r->e;
    seq_t sq = {.r = *q, .first = -1, .admitted = -1};
    int rc = wq_push(e, &sq, 0);
    if (rc)
        return rc;
    replica_count(s, r, 1);
    s->waiting_rep++;
    return wake(a, s, m, i, STEP_PRIO);
}

/* The ready replica (not retired) of group role (colocated: 0) with the
 * fewest requests on it, lowest index on ties (central: only one with room
 * in its batch); UINT32_MAX if none. */
static uint32_t least_loaded(const svc_t *s, int room, int role)
{
    uint32_t best = UINT32_MAX, bb = UINT32_MAX;
    for (uint32_t i = 0; i < s->n_rep; i++) {
        const replica_t *r = &s->rep[i];
        if (r->state == R_READY && !r->doomed && r->busy < bb && r->role == role &&
            (!room || r->busy < r->batch)) {
            best = i;
            bb = r->busy;
        }
    }
    return best;
}

/* round_robin: the next ready replica (not retired) of group role after
 * the last one used (*rr), in index order. */
static uint32_t next_in_turn(svc_t *s, int role, uint32_t *rr)
{
    for (uint32_t k = 1; k <= s->n_rep; k++) {
        uint32_t i = (uint32_t)((*rr + k) % s->n_rep);
        const replica_t *r = &s->rep[i];
        if (r->state == R_READY && !r->doomed && r->role == role) {
            *rr = i;
            return i;
        }
    }
    return UINT32_MAX;
}

/* prefix_affinity: the least loaded ready replica (not retired) that has
 * the prefix of q cached (lowest index on ties), else least_loaded. */
static uint32_t affinity(svc_t *s, const req_t *q, fs_time_t now)
{
    uint32_t best = UINT32_MAX, bb = UINT32_MAX;
    if (q->pid) {
        for (uint32_t i = 0; i < s->n_rep; i++) {
            replica_t *r = &s->rep[i];
            if (r->state != R_READY || r->doomed || !r->e || !r->e->pc || r->busy >= bb ||
                r->role != ROLE_PREFILL)
                continue;
            settle_blocks(r->e, now);
            if (r->e->pc[q->pid].blocks > 0) {
                best = i;
                bb = r->busy;
            }
        }
    }
    return best != UINT32_MAX ? best : least_loaded(s, 0, ROLE_PREFILL);
}

/* drain_dq: below */
static int drain_dq(services_t *a, svc_t *s, fs_model_t *m);

/* Sends the service's waiting requests to ready replicas. */
int fs_sveng_dispatch(services_t *a, svc_t *s, fs_model_t *m)
{
    if (s->cfg->mode != FS_SVC_REQUEST)
        return 0;
    if (s->cfg->engine_sched == FS_SVC_SLOTS)
        return fs_svslot_dispatch(a, s, m);
    int router = s->cfg->router;
    while (s->q_n > 0) {
        uint32_t best = router == FS_ROUTE_RR       ? next_in_turn(s, ROLE_PREFILL, &s->rr)
                        : router == FS_ROUTE_PREFIX ? affinity(s, &s->q[s->q_head],
                                                               fs_model_now(m))
                                                    : least_loaded(s, router == FS_ROUTE_CENTRAL,
                                                                   ROLE_PREFILL);
        if (best == UINT32_MAX)
            break;
        fs_svc_settle(s, fs_model_now(m));
        req_t q = fs_sveng_pop(s);
        int rc = route_to(a, s, m, best, &q);
        if (rc)
            return rc;
    }
    return s->disagg ? drain_dq(a, s, m) : 0;
}

/* ---- the end of a request ---------------------------------------------------------- */

/* A request completed (row: its figures): the service's counts, the SLO,
 * the run's histograms and the bucket's percentiles, and its /requests
 * row.  Both engines (v1 / v0 here, slots) end a request through it. */
int fs_sveng_record(services_t *a, svc_t *s, fs_model_t *m, const fs_request_row_t *row)
{
    double ttft = row->ttft, tpot = row->tpot;
    const fs_service_cfg_t *c = s->cfg;
    int met = ttft <= fs_time_to_s(c->slo_ttft) + 1e-9 &&
              (c->slo_tpot == 0 || isnan(tpot) || tpot <= fs_time_to_s(c->slo_tpot) + 1e-9);
    int win = s->bk.start >= s->warmup;    /* the run's figures: after the warm-up */
    s->completed++;
    s->bk.completed++;
    s->bk.met += (uint64_t)met;
    s->tokens += row->output;
    s->bk.tokens += row->output;
    s->bk.tokens_in += row->input;
    if (win) {
        s->win_n += 1;
        s->win_met += met;
        s->ttft_sum += ttft;
        fs_svmet_hist_add(s->h_ttft, ttft, 1);
    }
    if (fs_svmet_push_d(&s->bk.ttft, &s->bk.n_ttft, &s->bk.cap_ttft, ttft))
        return FS_ENOMEM;
    if (!isnan(tpot)) {
        if (win)
            fs_svmet_hist_add(s->h_tpot, tpot, 1);
        if (fs_svmet_push_d(&s->bk.tpot, &s->bk.n_tpot, &s->bk.cap_tpot, tpot))
            return FS_ENOMEM;
    }
    const fs_sink_t *sk = fs_model_sink(m);
    if (a->want_requests && sk->request) {
        int rc = sk->request(sk->ud, row);
        if (rc) {
            fs_model_error(m, sk->err);
            return rc;
        }
    }
    return 0;
}

static int finish(services_t *a, svc_t *s, fs_model_t *m, uint32_t ri, const seq_t *q)
{
    fs_time_t now = fs_model_now(m);
    /* on a decode replica: its prefill (and prefix hit) was on replica src */
    int dec = s->rep[ri].role == ROLE_DECODE;
    uint32_t hit = dec ? q->src_hit : q->hit;
    if (hit) {
        s->prefix_hits++;
        s->bk.prefix_hits++;
        s->prefix_tokens += (uint64_t)hit * KV_BLOCK;
        s->bk.prefix_tokens += (uint64_t)hit * KV_BLOCK;
    }
    fs_request_row_t row = {.service = s->idx, .input = q->r.in, .output = q->r.out,
                            .retries = q->r.retries, .replica = dec ? q->src : ri,
                            .decode_replica = ri, .kv_transfer = fs_time_to_s(q->xfer_us),
                            .preemptions = q->preempt, .prefix = q->r.pid,
                            .prefix_len = q->r.plen, .prefix_hit = hit * KV_BLOCK,
                            .arrival = fs_time_to_s(q->r.arrival),
                            .admitted = fs_time_to_s(q->admitted),
                            .ttft = fs_time_to_s(q->first - q->r.arrival),
                            .tpot = q->r.out > 1 ? fs_time_to_s(now - q->first) /
                                                       (double)(q->r.out - 1)
                                                 : NAN,
                            .end = fs_time_to_s(now)};
    return fs_sveng_record(a, s, m, &row);
}

/* ---- one iteration --------------------------------------------------------------- */

/* Seq k of the running list to the front of the waiting queue (recompute). */
static int preempt(svc_t *s, eng_t *e, uint32_t k)
{
    seq_t q = e->run[k];
    kv_release(e, &q);
    q.computed = 0;
    q.decoding = 0;
    q.sched = 0;
    q.preempt++;
    memmove(e->run + k, e->run + k + 1, (e->n_run - k - 1) * sizeof *e->run);
    e->n_run--;
    s->running--;
    s->preemptions++;
    s->bk.preemptions++;
    s->waiting_rep++;
    return wq_push(e, &q, 1);
}

/* The running sequences' tokens of this iteration (v1 step 1, v0's decode
 * pass with budget UINT64_MAX): each its next tokens, the newest preempted
 * while one cannot grow.  *p, *b: prefill tokens and decoding sequences
 * scheduled; returns 1 if something was preempted, -1 on FS_ENOMEM. */
static int schedule_running(svc_t *s, eng_t *e, uint64_t *budget, uint64_t *p, uint32_t *b)
{
    int preempted = 0;
    for (uint32_t k = 0; k < e->n_run && *budget > 0;) {
        seq_t *q = &e->run[k];
        uint64_t total = (uint64_t)q->r.in + q->gen;
        uint64_t want = total - q->computed;
        if (want > *budget)
            want = *budget;
        int ok = 1;
        while (!kv_grow(e, q, q->computed + want)) {
            uint32_t last = e->n_run - 1;
            preempted = 1;
            if (preempt(s, e, last))
                return -1;
            if (last == k) {
                ok = 0;
                break;
            }
            q = &e->run[k];
        }
        if (!ok)
            break;
        q->sched = (uint32_t)want;
        *budget -= want;
        if (q->decoding)
            (*b)++;
        else
            *p += want;
        k++;
    }
    return preempted;
}

/* Admits waiting sequences (v1: chunks within the budget; v0: whole
 * prompts, one longer than the budget alone).  Adds their prefill tokens
 * to *p; returns how many, or -1 with the run's error set when the head of
 * the queue can never fit the replica's KV cache (it would stall the
 * replica for ever: vLLM refuses such a prompt). */
static int64_t admit(svc_t *s, fs_model_t *m, const replica_t *r, uint64_t *budget, uint64_t *p,
                     int v0)
{
    eng_t *e = r->e;
    uint32_t n = 0;
    fs_time_t now = fs_model_now(m);
    while (e->wq_n > 0 && *budget > 0 && e->n_run < r->batch) {
        seq_t *w = wq_front(e);
        uint64_t total = (uint64_t)w->r.in + w->gen, want = total;
        if (e->max_len && w->r.in > e->max_len) {
            fs_error_t err;
            fs_error_set(&err, FS_EINVAL, "services.%u: a prompt of %u tokens is longer than "
                         "the replica's max_model_len (%u tokens; vLLM refuses it): shorten "
                         "requests.input or raise max_model_len", s->idx, w->r.in, e->max_len);
            fs_model_error(m, &err);
            return -1;
        }
        if (e->kv_blocks && blocks_for((uint64_t)w->r.in + w->r.out) > e->kv_blocks) {
            fs_error_t err;
            fs_error_set(&err, FS_EINVAL, "services.%u: a request of %u prompt and %u output "
                         "tokens needs %u KV blocks of 16 tokens, more than a replica's "
                         "performance row kv_tokens holds (%u blocks): raise kv_tokens",
                         s->idx, w->r.in, w->r.out, blocks_for((uint64_t)w->r.in + w->r.out),
                         e->kv_blocks);
            fs_model_error(m, &err);
            return -1;
        }
        uint32_t h = prefix_lookup(e, &w->r, total);
        want = total - (uint64_t)h * KV_BLOCK;   /* its prefill starts after the cached blocks */
        if (v0) {
            if (want > *budget && n > 0)
                break;
        } else if (want > *budget) {
            want = *budget;
        }
        seq_t q = *w;
        q.computed = 0;
        q.blocks = 0;
        q.hit = 0;
        q.target = (uint32_t)total;
        if (h)
            prefix_ref(e, &q, h);
        if (!kv_grow(e, &q, (uint64_t)q.computed + want)) {
            if (h) {    /* not admitted: the entry as it was */
                struct pcent *c = &e->pc[q.r.pid];
                if (--c->ref == 0)
                    e->evictable += c->blocks;
                kv_report(e);
            }
            break;
        }
        if (q.admitted < 0)
            q.admitted = now;
        q.sched = (uint32_t)want;
        q.decoding = 0;
        wq_drop_front(e);
        s->waiting_rep--;
        e->run[e->n_run++] = q;
        s->running++;
        *budget = want >= *budget ? 0 : *budget - want;
        *p += want;
        n++;
    }
    return n;
}

/* Iterations from now on that decode every running sequence with nothing
 * else to do: how many are identical (up to the first finish and the
 * last one whose KV blocks are all had). */
static uint32_t macro_len(const eng_t *e)
{
    uint32_t k = UINT32_MAX;
    for (uint32_t i = 0; i < e->n_run; i++) {
        uint32_t left = e->run[i].r.out - e->run[i].gen;
        if (left < k)
            k = left;
    }
    /* with a context term, at most 2^20 iterations per macro step: its sum
     * stays far from overflow; the next one goes on exactly as it would */
    if ((e->kv_fs || e->prof) && k > MACRO_CTX_MAX)
        k = MACRO_CTX_MAX;
    if (!e->kv_blocks || k <= 1)
        return k;
    /* blocks the first j iterations take: sequence i needs its next block
     * when computed + j passes blocks * 16 */
    uint32_t lo = 1, hi = k;   /* the answer is in [lo - 1, hi]: lo - 1 safe */
    while (lo <= hi) {
        uint32_t j = lo + (hi - lo) / 2;
        uint64_t need = 0;
        for (uint32_t i = 0; i < e->n_run; i++) {
            const seq_t *q = &e->run[i];
            uint32_t nb = blocks_for((uint64_t)q->computed + j);
            need += nb > q->blocks ? nb - q->blocks : 0;
        }
        if (need <= e->kv_free + e->evictable)
            lo = j + 1;
        else
            hi = j - 1;
    }
    return hi;
}

/* ---- disaggregated serving: hand-off, KV transfer, the decode group ------------- */

static int seq_append(seq_t **v, size_t *n, size_t *cap, const seq_t *q)
{
    if (fs_grow((void **)v, cap, *n + 1, sizeof **v))
        return FS_ENOMEM;
    (*v)[(*n)++] = *q;
    return 0;
}

/* Stable sort of v[0..n) by src (insertion: the lists of one instant are short). */
static void sort_by_src(seq_t *v, size_t n)
{
    for (size_t k = 1; k < n; k++) {
        seq_t t = v[k];
        size_t j = k;
        for (; j > 0 && v[j - 1].src > t.src; j--)
            v[j] = v[j - 1];
        v[j] = t;
    }
}

/* The decode replica for a prefilled sequence: in turn (round_robin), else
 * the least loaded (its sequences waiting for KV room, in transfer and
 * running); UINT32_MAX: none ready. */
static uint32_t pick_decode(svc_t *s)
{
    return s->cfg->router == FS_ROUTE_RR ? next_in_turn(s, ROLE_DECODE, &s->rr_dec)
                                         : least_loaded(s, 0, ROLE_DECODE);
}

/* Prefilled sequence q joins decode replica i's queue: the replica pulls
 * its KV cache when it has blocks for it (at an iteration's start). */
static int to_decode(services_t *a, svc_t *s, fs_model_t *m, uint32_t i, const seq_t *q)
{
    replica_t *r = fs_svc_rep(s, i);
    eng_t *e = r->e;
    if (e->kq_n == e->kq_cap &&
        fs_svc_ring_grow((void **)&e->kq, &e->kq_cap, e->kq_head, e->kq_n, sizeof *e->kq))
        return FS_ENOMEM;
    e->kq[(e->kq_head + e->kq_n) % e->kq_cap] = *q;
    e->kq_n++;
    replica_count(s, r, 1);
    return wake(a, s, m, i, DECODE_PRIO);
}

/* The prefilled sequences that wait for a ready decode replica go to one. */
static int drain_dq(services_t *a, svc_t *s, fs_model_t *m)
{
    while (s->dq_n > 0) {
        uint32_t d = pick_decode(s);
        if (d == UINT32_MAX)
            break;
        seq_t q = s->dq[s->dq_head];
        s->dq_head = (s->dq_head + 1) % s->dq_cap;
        s->dq_n--;
        int rc = to_decode(a, s, m, d, &q);
        if (rc)
            return rc;
    }
    return 0;
}

/* The prefill replica that holds q's KV cache frees it (the transfer ended,
 * or was given up); nothing if that replica has restarted since (its
 * cache was emptied then).  Its prefix's full blocks join that replica's
 * prefix cache, as when a request finishes there.  An idle prefill replica
 * with waiting requests may admit one now: it is woken (a: NULL, not: a
 * decode replica that stopped, whose requests are dispatched again). */
static int release_src(services_t *a, svc_t *s, fs_model_t *m, const seq_t *q)
{
    if (q->src >= s->n_rep)
        return 0;
    replica_t *p = fs_svc_rep(s, q->src);
    if (p->gen != q->src_gen || !p->e || p->state != R_READY)
        return 0;
    seq_t t = *q;
    t.blocks = q->src_blocks;
    t.hit = q->src_hit;
    kv_release_keep(p->e, &t, 1);
    return a && p->e->wq_n > 0 && !p->e->armed ? wake(a, s, m, q->src, STEP_PRIO) : 0;
}

/* A transfer into decode replica i ends now (EV_XFER): the prefill
 * replicas' blocks of those that end now are freed, and replica i sees
 * them at its next iteration (now if idle). */
int fs_sveng_xfer_end(services_t *a, svc_t *s, fs_model_t *m, uint32_t i)
{
    if (i >= s->n_rep)
        return FS_EINTERNAL;
    replica_t *r = fs_svc_rep(s, i);
    eng_t *e = r->e;
    if (!e || r->state != R_READY)
        return 0;   /* stopped since: its transfers were given up */
    fs_time_t now = fs_model_now(m);
    fs_svc_settle(s, now);
    int any = 0;
    for (size_t k = 0; k < e->n_xf; k++)
        if (e->xf[k].end <= now && !e->xf[k].done) {
            e->xf[k].done = 1;
            int rc = release_src(a, s, m, &e->xf[k].q);
            if (rc)
                return rc;
            any = 1;
        }
    return any ? wake(a, s, m, i, DECODE_PRIO) : 0;
}

/* The prefills done in this instant (EV_HANDOFF), in prefill replica
 * order, each to a decode replica (or to wait for a ready one). */
int fs_sveng_handoff(services_t *a, svc_t *s, fs_model_t *m)
{
    s->ho_armed = 0;
    fs_svc_settle(s, fs_model_now(m));
    sort_by_src(s->ho, s->n_ho);
    for (size_t k = 0; k < s->n_ho; k++) {
        uint32_t d = pick_decode(s);
        int rc;
        if (d != UINT32_MAX) {
            rc = to_decode(a, s, m, d, &s->ho[k]);
        } else {
            rc = s->dq_n == s->dq_cap ? fs_svc_ring_grow((void **)&s->dq, &s->dq_cap,
                                                         s->dq_head, s->dq_n, sizeof *s->dq)
                                      : 0;
            if (!rc)
                s->dq[(s->dq_head + s->dq_n++) % s->dq_cap] = s->ho[k];
        }
        if (rc)
            return rc;
    }
    s->n_ho = 0;
    return 0;
}

/* The sequences decode replicas preempted in this instant (EV_REPREFILL),
 * in decode replica order (src) and the order preempted: each to the front
 * of a prefill replica's queue (the router's choice), to be recomputed
 * there (a decode replica does not prefill); with no prefill replica
 * ready, a retry in the service's queue. */
int fs_sveng_reprefill(services_t *a, svc_t *s, fs_model_t *m)
{
    fs_time_t now = fs_model_now(m);
    s->rp_armed = 0;
    fs_svc_settle(s, now);
    sort_by_src(s->rp, s->n_rp);
    for (size_t k = 0; k < s->n_rp; k++) {
        seq_t *q = &s->rp[k];
        int router = s->cfg->router;
        uint32_t p = router == FS_ROUTE_RR       ? next_in_turn(s, ROLE_PREFILL, &s->rr)
                     : router == FS_ROUTE_PREFIX ? affinity(s, &q->r, now)
                                                 : least_loaded(s, 0, ROLE_PREFILL);
        int rc;
        if (p == UINT32_MAX) {
            req_t r = q->r;
            r.retries++;
            s->retried++;
            s->waiting_rep--;
            rc = fs_sveng_push(s, &r, 1);
        } else {
            rc = wq_push(s->rep[p].e, q, 1);
            if (!rc) {
                replica_count(s, fs_svc_rep(s, p), 1);
                rc = wake(a, s, m, p, REWAKE_PRIO);
            }
        }
        if (rc)
            return rc;
    }
    s->n_rp = 0;
    return 0;
}

/* A transfer's length, us: tokens of KV at the pair's bandwidth, rounded
 * half up, at least 1. */
static fs_time_t xfer_us(const svc_t *s, const replica_t *src, const replica_t *dst,
                         uint64_t tokens)
{
    double bw = s->pd_bw[(size_t)src->pool * s->n_bw + dst->pool];
    double x = (double)tokens * s->kv_bytes / bw * 1e6;
    fs_time_t d = (fs_time_t)floor(x + 0.5);
    return d < 1 ? 1 : d;
}

/* Decode replica i pulls KV caches: from the front of its queue, while a
 * slot (running + in transfer < max_num_seqs) and the blocks of the
 * sequence's context are free; each transfer starts now.  -1 with the
 * run's error set when a request can never fit its KV cache. */
static int start_transfers(services_t *a, svc_t *s, fs_model_t *m, uint32_t i)
{
    replica_t *r = fs_svc_rep(s, i);
    eng_t *e = r->e;
    fs_time_t now = fs_model_now(m);
    while (e->kq_n > 0 && e->n_run + e->n_xf < r->batch) {
        seq_t *q = &e->kq[e->kq_head];
        if (e->kv_blocks && blocks_for((uint64_t)q->r.in + q->r.out) > e->kv_blocks) {
            fs_error_t err;
            fs_error_set(&err, FS_EINVAL, "services.%u: a request of %u prompt and %u output "
                         "tokens needs %u KV blocks of 16 tokens, more than a decode "
                         "replica's performance row kv_tokens holds (%u blocks): raise "
                         "kv_tokens", s->idx, q->r.in, q->r.out,
                         blocks_for((uint64_t)q->r.in + q->r.out), e->kv_blocks);
            fs_model_error(m, &err);
            return -1;
        }
        q->blocks = 0;
        q->hit = 0;
        if (!kv_grow(e, q, q->computed))
            break;
        fs_time_t d = q->src < s->n_rep ? xfer_us(s, fs_svc_rep(s, q->src), r, q->computed) : 1;
        q->xfer_us += d;
        if (fs_grow((void **)&e->xf, &e->cap_xf, e->n_xf + 1, sizeof *e->xf))
            return FS_ENOMEM;
        e->xf[e->n_xf++] = (xfer_t){.q = *q, .end = now + d};
        e->kq_head = (e->kq_head + 1) % e->kq_cap;
        e->kq_n--;
        s->waiting_rep--;
        int rc = fs_model_module_event(m, a->id, now + d, XFER_PRIO, EVD(EV_XFER, s->idx, i, 0),
                                       NULL);
        if (rc)
            return rc;
    }
    return 0;
}

/* Decode replica i's next iteration from now, or idle: the sequences whose
 * KV cache arrived join the batch (in the order their transfers started),
 * every running one decodes (v1 and v0 alike: nothing prefills here), the
 * newest preempted while one cannot grow (to a prefill replica: REPREFILL),
 * then (nothing preempted) transfers start for the queue's front. */
static int begin_decode(services_t *a, svc_t *s, fs_model_t *m, uint32_t i)
{
    replica_t *r = fs_svc_rep(s, i);
    eng_t *e = r->e;
    fs_time_t now = fs_model_now(m);
    size_t w = 0;
    for (size_t k = 0; k < e->n_xf; k++) {
        xfer_t *x = &e->xf[k];
        if (x->end <= now && x->done) {
            x->q.sched = 0;
            e->run[e->n_run++] = x->q;
            s->running++;
        } else {
            e->xf[w++] = *x;
        }
    }
    e->n_xf = w;
    for (uint32_t k = 0; k < e->n_run; k++)
        e->run[k].sched = 0;
    uint64_t budget = s->cfg->engine_sched == FS_SVC_V0 ? UINT64_MAX : s->cfg->max_tokens, p = 0;
    uint32_t b = 0;
    int pr = schedule_running(s, e, &budget, &p, &b);
    if (pr < 0)
        return FS_ENOMEM;
    if (pr > 0) {   /* the preempted, in the order preempted (back of the queue first) */
        while (e->wq_n > 0) {
            size_t last = (e->wq_head + e->wq_n - 1) % e->wq_cap;
            seq_t q = e->wq[last];
            e->wq_n--;
            q.src = i;
            if (seq_append(&s->rp, &s->n_rp, &s->cap_rp, &q))
                return FS_ENOMEM;
            replica_count(s, r, -1);
        }
        if (!s->rp_armed) {
            s->rp_armed = 1;
            int rc = fs_model_module_event(m, a->id, now, REPREFILL_PRIO,
                                           EVD(EV_REPREFILL, s->idx, 0, 0), NULL);
            if (rc)
                return rc;
        }
    } else if (start_transfers(a, s, m, i)) {
        return FS_EINVAL;
    }
    if (b == 0) {
        e->armed = 0;
        e->k = 0;
        return 0;
    }
    e->t0 = now;
    fs_svstep_times(r, e, p, b);
    e->k = 1;
    /* nothing preempted: the next iterations are this one again up to the
     * first finish or KV shortage (a transfer that ends cuts it) */
    if (pr == 0 && b == e->n_run) {
        uint32_t k = macro_len(e);
        if (k > 1)
            e->k = k;
    }
    return arm(a, s, m, i, fs_svstep_macro_end(e, e->k));
}

/* The next iteration from now, or idle. */
static int begin(services_t *a, svc_t *s, fs_model_t *m, uint32_t i)
{
    if (s->rep[i].role == ROLE_DECODE)
        return begin_decode(a, s, m, i);
    int64_t na = 0;
    replica_t *r = fs_svc_rep(s, i);
    eng_t *e = r->e;
    fs_time_t now = fs_model_now(m);
    int v0 = s->cfg->engine_sched == FS_SVC_V0;
    uint64_t budget = s->cfg->max_tokens, p = 0;
    uint32_t b = 0, admitted = 0;
    int pr = 0;
    for (uint32_t k = 0; k < e->n_run; k++)
        e->run[k].sched = 0;
    if (v0) {   /* a prefill iteration if a prompt can be admitted, else decode */
        na = admit(s, m, r, &budget, &p, 1);
        admitted = na > 0 ? (uint32_t)na : 0;
        if (na == 0) {
            uint64_t all = UINT64_MAX;
            pr = schedule_running(s, e, &all, &p, &b);
        }
    } else {    /* running first, then (no preemption) waiting */
        pr = schedule_running(s, e, &budget, &p, &b);
        if (pr == 0) {
            na = admit(s, m, r, &budget, &p, 0);
            admitted = na > 0 ? (uint32_t)na : 0;
        }
    }
    if (na < 0)
        return FS_EINVAL;
    if (pr < 0)
        return FS_ENOMEM;
    if (p == 0 && b == 0) {
        e->armed = 0;
        e->k = 0;
        return 0;
    }
    e->t0 = now;
    fs_svstep_times(r, e, p, b);
    e->k = 1;
    /* every running sequence decodes, and nothing was admitted or preempted:
     * what kept the waiting ones out (no room in the batch, the budget, the
     * KV cache) lasts until a sequence finishes, so the next iterations are
     * this one again up to the first finish or KV shortage */
    if (p == 0 && pr == 0 && admitted == 0 && b == e->n_run) {
        uint32_t k = macro_len(e);
        if (k > 1)
            e->k = k;
    }
    return arm(a, s, m, i, fs_svstep_macro_end(e, e->k));
}

/* The end of replica i's iteration (or of j iterations of a macro step):
 * tokens emitted, finished requests out, the next iteration. */
int fs_sveng_done(services_t *a, svc_t *s, fs_model_t *m, uint32_t i, uint32_t arg)
{
    if (s->cfg->engine_sched == FS_SVC_SLOTS)
        return fs_svslot_done(a, s, m, i, arg);
    if (i >= s->n_rep || !s->rep[i].e || !s->rep[i].e->armed)
        return FS_EINTERNAL;
    replica_t *r = fs_svc_rep(s, i);
    eng_t *e = r->e;
    fs_time_t now = fs_model_now(m);
    fs_svc_settle(s, now);   /* e->armed stays set: requests routed here now just wait */
    if (e->k > 0) {
        if (e->k > 1) {     /* j identical decode iterations */
            uint32_t j = (uint32_t)fs_svstep_macro_iters(e, now, 0);
            for (uint32_t k = 0; k < e->n_run; k++) {
                seq_t *q = &e->run[k];
                q->computed += j;
                q->gen += j;
                kv_grow(e, q, q->computed);   /* macro_len: they are free */
            }
        } else {
            for (uint32_t k = 0; k < e->n_run; k++) {
                seq_t *q = &e->run[k];
                if (q->sched == 0)
                    continue;
                q->computed += q->sched;
                if (q->decoding) {
                    q->gen++;
                } else if (q->computed >= q->target) {
                    q->gen++;
                    q->decoding = 1;
                    if (q->first < 0)
                        q->first = now;
                }
                q->sched = 0;
            }
        }
        uint32_t w = 0;
        for (uint32_t k = 0; k < e->n_run; k++) {
            seq_t *q = &e->run[k];
            if (q->gen >= q->r.out) {
                int rc = finish(a, s, m, i, q);
                if (rc)
                    return rc;
                kv_release_keep(e, q, r->role != ROLE_DECODE);
                replica_count(s, r, -1);
                s->running--;
            } else if (s->disagg && r->role == ROLE_PREFILL && q->decoding) {
                /* its prefill is done (first token out): to a decode replica in this
                 * instant (HANDOFF), its KV blocks held here until the transfer ends */
                seq_t h = *q;
                h.src = i;
                h.src_gen = r->gen;
                h.src_blocks = q->blocks;
                h.src_hit = q->hit;
                h.blocks = 0;
                h.hit = 0;
                h.sched = 0;
                if (seq_append(&s->ho, &s->n_ho, &s->cap_ho, &h))
                    return FS_ENOMEM;
                replica_count(s, r, -1);
                s->running--;
                s->waiting_rep++;
                if (!s->ho_armed) {
                    s->ho_armed = 1;
                    int rc = fs_model_module_event(m, a->id, now, HANDOFF_PRIO,
                                                   EVD(EV_HANDOFF, s->idx, 0, 0), NULL);
                    if (rc)
                        return rc;
                }
            } else {
                e->run[w++] = *q;
            }
        }
        e->n_run = w;
        e->k = 0;
    }
    if (r->doomed && r->busy == 0) {
        e->armed = 0;
        return fs_svc_retire_now(s, m, i);
    }
    if (s->cfg->router == FS_ROUTE_CENTRAL && s->q_n > 0 && r->role != ROLE_DECODE) {
        int rc = fs_sveng_dispatch(a, s, m);
        if (rc)
            return rc;
    }
    return begin(a, s, m, i);
}

/* Replica r starts serving with performance row p: an empty engine. */
int fs_sveng_start(svc_t *s, replica_t *r, const fs_svc_perf_cfg_t *p)
{
    eng_t *e = r->e;
    if (!e)
        return 0;
    e->prof = NULL;
    if (p->profile) {   /* read once per run (the loader checked it) */
        size_t row = (size_t)(p - s->cfg->perf);
        if (!s->prof && !(s->prof = fs_calloc(s->cfg->n_perf, sizeof *s->prof)))
            return FS_ENOMEM;
        if (!s->prof[row]) {
            fs_error_t err;
            int rc = fs_svprof_load(p->profile, &s->prof[row], &err);
            if (rc)
                return rc;
        }
        e->prof = s->prof[row];
    }
    e->n_run = 0;
    e->wq_head = e->wq_n = 0;
    e->kq_head = e->kq_n = 0;
    e->n_xf = 0;
    e->armed = 0;
    e->k = 0;
    if (e->counted)
        s->kv_total -= e->kv_blocks;
    e->kv_blocks = (uint32_t)(p->kv_tokens / KV_BLOCK);
    e->kv_free = e->kv_blocks;
    e->kv_fs = (uint64_t)floor(p->us_per_kv_token * (double)KV_FS_PER_US + 0.5);
    e->max_len = p->max_model_len;
    e->kv_used = &s->kv_used;
    e->used_rep = 0;
    e->evictable = 0;
    e->stamp = 0;
    if (e->pc)
        memset(e->pc, 0, e->n_pc * sizeof *e->pc);
    s->kv_total += e->kv_blocks;
    e->counted = 1;
    return 0;
}

void fs_sveng_free_profiles(svc_t *s)
{
    for (size_t i = 0; s->prof && i < s->cfg->n_perf; i++)
        fs_svprof_free(s->prof[i]);
    fs_free(s->prof);
    s->prof = NULL;
}

/* Replica r's engine stops for good (retired): its cache leaves the
 * service's total. */
void fs_sveng_stop(svc_t *s, replica_t *r)
{
    eng_t *e = r->e;
    if (e && e->counted) {
        s->kv_total -= e->kv_blocks;
        e->counted = 0;
    }
}

/* Every request on replica r (running, then waiting) goes back to the head
 * of the service's queue, in arrival order; its progress is lost. */
int fs_sveng_requeue(fs_model_t *m, svc_t *s, replica_t *r)
{
    if (s->cfg->engine_sched == FS_SVC_SLOTS)
        return fs_svslot_requeue(m, s, r);
    eng_t *e = r->e;
    if (!e)
        return 0;
    fs_svc_settle(s, fs_model_now(m));
    if (e->armed)
        fs_model_cancel(m, e->ev);
    e->armed = 0;
    e->k = 0;
    /* a decode replica: the sequences waiting for its KV room and those in
     * transfer are retried too, the prefill replicas' blocks they held freed */
    while (e->kq_n > 0) {
        seq_t q = e->kq[e->kq_head];
        e->kq_head = (e->kq_head + 1) % e->kq_cap;
        e->kq_n--;
        int rc = release_src(NULL, s, m, &q);
        if (!rc)
            rc = wq_push(e, &q, 0);     /* counted as waiting already */
        if (rc)
            return rc;
    }
    for (size_t k = 0; k < e->n_xf; k++) {
        int rc = e->xf[k].done ? 0 : release_src(NULL, s, m, &e->xf[k].q);
        if (!rc)
            rc = wq_push(e, &e->xf[k].q, 0);
        if (rc)
            return rc;
        s->waiting_rep++;
    }
    e->n_xf = 0;
    s->waiting_rep -= (uint32_t)e->wq_n;
    for (;;) {      /* latest arrival first, each pushed at the front */
        seq_t *best = NULL;
        for (uint32_t k = 0; k < e->n_run; k++)
            if (!best || e->run[k].r.arrival > best->r.arrival)
                best = &e->run[k];
        for (size_t k = 0; k < e->wq_n; k++) {
            seq_t *q = &e->wq[(e->wq_head + k) % e->wq_cap];
            if (!best || q->r.arrival > best->r.arrival)
                best = q;
        }
        if (!best)
            break;
        req_t q = best->r;
        q.retries++;
        s->retried++;
        replica_count(s, r, -1);
        if (best >= e->run && best < e->run + e->n_run)
            s->running--;
        /* take it out: a running one by moving the last over it, a waiting
         * one likewise within the ring (order no longer matters) */
        if (best >= e->run && best < e->run + e->n_run) {
            *best = e->run[--e->n_run];
        } else {
            size_t last = (e->wq_head + e->wq_n - 1) % e->wq_cap;
            *best = e->wq[last];
            e->wq_n--;
        }
        int rc = fs_sveng_push(s, &q, 1);
        if (rc)
            return rc;
    }
    e->n_run = 0;
    e->wq_n = 0;
    if (e->counted)
        s->kv_used -= e->used_rep;
    e->used_rep = 0;
    e->kv_free = e->kv_blocks;
    e->evictable = 0;
    if (e->pc)
        memset(e->pc, 0, e->n_pc * sizeof *e->pc);
    fs_sveng_stop(s, r);
    return 0;
}
