/*
 * The composable scheduler: an order (fs_order.h) x mode x backfill x
 * preemption, over shape classes of treaps.  fs_sched.h explains the
 * structure and its costs; docs/policies.md the semantics.  This file is the
 * policy (its ops, the pass driver, timers) and the queue and running set
 * the passes share; fs_sched_int.h lists the files of each pass.
 */
#include "fs_sched_int.h"

#include <stdio.h>
#include <string.h>

enum { TM_ORDER = 1, TM_BF = 2 };

/* ---- errors ------------------------------------------------------------------------ */

#define K2_UNDECLARED "its order gave it a second key but does not declare k2 (fs_order_ops_t.k2)"

/* Job `slot` is why the callback fails with code: "job ID: what" for the
 * run's error (sched_fail).  Returns code. */
static int job_why(sched_t *s, fs_model_t *m, uint32_t slot, int code, const char *what)
{
    snprintf(s->why, sizeof s->why, "job %llu: %s",
             (unsigned long long)fs_model_job(m, slot)->job.id, what);
    return code;
}

/* A callback failed with rc: the run's error says where (scheduling pass,
 * policy timer), which policy (sched and its order) and what: the job and
 * what went wrong with it (job_why), or the error's description.  A
 * message the model set first (a placement's) stays. */
static int sched_fail(sched_t *s, fs_model_t *m, const char *where, int rc)
{
    fs_error_t e;
    fs_error_clear(&e);
    fs_error_set(&e, rc, "%s (policy sched, queue %s): %s", where, s->ord->name,
                 s->why[0] ? s->why : fs_error_describe(rc));
    fs_model_error(m, &e);
    s->why[0] = '\0';
    return rc;
}

/* ---- scratch lists ----------------------------------------------------------------- */

void fs_sched_collect(sched_t *s, uint32_t t, size_t *n)
{
    while (t) {
        fs_sched_collect(s, s->nd[t].l, n);
        s->scr[(*n)++] = t;
        t = s->nd[t].r;
    }
}

void fs_sched_collect_lim(sched_t *s, uint32_t t, size_t *n, size_t lim)
{
    while (t && *n < lim) {
        fs_sched_collect_lim(s, s->nd[t].l, n, lim);
        if (*n >= lim)
            return;
        s->scr[(*n)++] = t;
        t = s->nd[t].r;
    }
}

/* ---- shape classes ----------------------------------------------------------- */

/* Class of a job shape, created on first use.  Returns its index or -1. */
static long class_of(sched_t *s, uint32_t gpus, uint32_t milli, uint64_t res, int32_t tp)
{
    /* room for a new class first, so that the map never gets ahead */
    if (fs_grow((void **)&s->cls, &s->cap_cls, s->shapes.n + 1, sizeof *s->cls))
        return -1;
    int added;
    long c = fs_shapemap_get(&s->shapes, gpus, milli, res, tp, &added);
    if (c >= 0 && added)
        s->cls[c] = (cls_t){.root = 0, .head = 0};
    return c;
}

/* ---- queue and running set ----------------------------------------------------- */

/* Grows side array *a (elem bytes per node) from old to cap nodes (fs_grow:
 * cap is old, or 64, doubled), zeroing
 * the new part.  Returns 0 or FS_ENOMEM (*a unchanged). */
static int side_grow(void **a, size_t old, size_t cap, size_t elem)
{
    size_t have = old;
    if (fs_grow(a, &have, cap, elem))
        return FS_ENOMEM;
    memset((char *)*a + old * elem, 0, (have - old) * elem);
    return 0;
}

static int ensure_nodes(sched_t *s, uint32_t slot)
{
    size_t old = s->nd_cap;
    if ((size_t)slot + 2 <= old)
        return 0;
    size_t cap = old ? old : 64;
    while (cap < (size_t)slot + 2)
        cap *= 2;
    if ((s->has_bands && side_grow((void **)&s->nb, old, cap, sizeof *s->nb)) ||
        (s->preempt && side_grow((void **)&s->rank, old, cap, sizeof *s->rank)) ||
        (s->ord->k2 && side_grow((void **)&s->k2, old, cap, sizeof *s->k2)) ||
        (s->backfill == FS_BACKFILL_CONSERVATIVE && !s->bf_slurm &&
         side_grow((void **)&s->rsv, old, cap, sizeof *s->rsv)) ||
        (s->bf_slurm && side_grow((void **)&s->rep, old, cap, sizeof *s->rep)))
        return FS_ENOMEM;
    void *mem = fs_malloc(cap * sizeof *s->nd + 64);
    if (!mem)
        return FS_ENOMEM;
    tnode_t *nd = (tnode_t *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
    if (old)
        memcpy(nd, s->nd, old * sizeof *nd);
    memset(nd + old, 0, (cap - old) * sizeof *nd);
    fs_free(s->nd_mem);
    s->nd_mem = mem;
    s->nd = nd;
    s->nd_cap = cap;
    return 0;
}


static int q_insert(sched_t *s, fs_model_t *m, uint32_t slot)
{
    const fs_jobrt_t *j = fs_model_job(m, slot);
    uint32_t x = slot + 1;
    tnode_t *n = &s->nd[x];
    long c = class_of(s, j->job.gpus, j->job.gpu_milli, fs_jobq_pod_res(&j->job), j->type_pools);
    if (c < 0)
        return FS_ENOMEM;
    fs_okey_t k = s->ord->key(s->ost, m, slot);
    if (k.k2 != 0 && !s->k2)
        return FS_EINTERNAL;    /* an order with k2 must say so (fs_order_ops_t.k2) */
    n->k1 = k.k1;
    if (s->k2)
        s->k2[x] = k.k2;
    n->seq = j->seq;
    n->est = fs_order_plan(m, slot);
    n->g = j->job.gpus;
    n->cp = (uint32_t)c;
    cls_t *cl = &s->cls[c];
    if (s->banded) {
        s->nb[x].kep = s->kepoch;
        s->nb[x].band = s->ord->band(s->ost, m, slot);
        if (fs_sband_room(s, cl, s->nb[x].band))
            return FS_ENOMEM;
        fs_sband_insert(s, m, cl, x);
        fs_sband_head(s, cl);
    } else {
        cl->root = fs_stree_insert(s->nd, s->k2, cl->root, x, 0);
        if (!cl->head || fs_stree_less(s->nd, s->k2, x, cl->head))
            cl->head = x;
        if (s->qhead && fs_stree_less(s->nd, s->k2, x, s->qhead))
            s->qhead = x;
    }
    s->queued++;
    return 0;
}

static void q_remove(sched_t *s, fs_model_t *m, uint32_t slot)
{
    uint32_t x = slot + 1;
    cls_t *c = &s->cls[s->nd[x].cp];
    if (s->qhead == x)
        s->qhead = 0;
    if (s->banded) {
        fs_sband_remove(s, m, c, x);
    } else {
        c->root = fs_stree_erase(s->nd, s->k2, c->root, x, 0);
        if (c->head == x)
            c->head = fs_stree_first(s->nd, c->root);
    }
    s->queued--;
}

/* 0, or FS_ELIMIT: 2^32 GPUs or more would run in one pool (tnode_t.aug_g). */
static int r_insert(sched_t *s, fs_model_t *m, uint32_t slot)
{
    uint32_t x = slot + 1;
    tnode_t *n = &s->nd[x];
    uint32_t p = fs_model_job(m, slot)->r->place.pool;
    if (s->run_g[p] + n->g > UINT32_MAX)
        return FS_ELIMIT;
    s->run_g[p] += n->g;
    fs_time_t plan = fs_order_plan(m, slot);
    n->k1 = (double)(fs_model_now(m) + plan);
    if (s->k2)
        s->k2[x] = 0;
    n->est = plan;
    n->cp = p;
    if (s->rcache && fs_sslurm_add(s, x)) {
        s->run_g[p] -= n->g;
        return FS_ENOMEM;
    }
    s->run[p] = fs_stree_insert_run(s->nd, s->k2, s->run[p], x);
    s->running++;
    return 0;
}

static void r_remove(sched_t *s, uint32_t slot)
{
    s->settled = 0;
    s->st_keep = 0;
    if (s->rep)
        s->rep[slot + 1]++;     /* its entry in the running-ends cache is stale */
    uint32_t p = s->nd[slot + 1].cp;
    s->run_g[p] -= s->nd[slot + 1].g;
    s->run[p] = fs_stree_erase_run(s->nd, s->k2, s->run[p], slot + 1);
    s->running--;
}

int fs_sched_start(sched_t *s, fs_model_t *m, uint32_t slot)
{
    int rc = fs_model_start(m, slot);
    if (rc != 1)
        return rc;
    s->cls[s->nd[slot + 1].cp].cand_at = 0;
    q_remove(s, m, slot);
    rc = r_insert(s, m, slot);
    if (rc == FS_ELIMIT)
        return job_why(s, m, slot, rc, "2^32 GPUs or more would run in its pool");
    if (rc)
        return rc;
    if (s->ord->started)
        s->ord->started(s->ost, m, slot);
    return 1;
}

int fs_sched_preempt(sched_t *s, fs_model_t *m, uint32_t slot)
{
    int rc = fs_model_preempt(m, slot);
    if (rc)
        return rc;
    r_remove(s, slot);
    if (s->ord->stopped)
        s->ord->stopped(s->ost, m, slot, 0);
    s->preemptions++;
    rc = q_insert(s, m, slot);
    return rc == FS_EINTERNAL ? job_why(s, m, slot, rc, K2_UNDECLARED) : rc;
}

int fs_sched_scratch(sched_t *s, size_t n)
{
    if (fs_grow((void **)&s->scr, &s->scr_cap, n + 1, sizeof *s->scr))
        return FS_ENOMEM;
    if (fs_grow((void **)&s->want, &s->want_cap, n + 1, sizeof *s->want))
        return FS_ENOMEM;
    return 0;
}

size_t fs_sched_collect_queued(sched_t *s)
{
    size_t n = 0;
    for (size_t c = 0; c < s->shapes.n; c++)
        fs_sched_collect(s, s->cls[c].root, &n);
    return n;
}

/* Keys of queued jobs changed: rebuild every class treap from its sorted
 * nodes as a Cartesian tree (O(n) after the sort: a stack of the right
 * spine).  O(q log q) in all, with a small constant. */
static int rekey(sched_t *s, fs_model_t *m)
{
    s->qhead = 0;
    s->st_keep = 0;
    if (s->banded)
        return fs_sband_rekey(s, m);
    if (fs_sched_scratch(s, s->queued))
        return FS_ENOMEM;
    size_t n = fs_sched_collect_queued(s);
    tnode_t *nd = s->nd;
    for (size_t i = 0; i < n; i++) {
        fs_okey_t k = s->ord->key(s->ost, m, s->scr[i] - 1);
        if (k.k2 != 0 && !s->k2)    /* an order with k2 must say so (fs_order_ops_t.k2) */
            return job_why(s, m, s->scr[i] - 1, FS_EINTERNAL, K2_UNDECLARED);
        nd[s->scr[i]].k1 = k.k1;
        if (s->k2)
            s->k2[s->scr[i]] = k.k2;
    }
    /* merge sort by (class, key) (stable and reentrant; qsort has no context) */
    uint32_t *a = s->scr;
    if (fs_grow((void **)&s->tmp32, &s->tmp32_cap, n + 1, sizeof *s->tmp32))
        return FS_ENOMEM;
    uint32_t *tmp = s->tmp32;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                uint32_t x = a[i], y = a[j];
                int ylt = nd[y].cp != nd[x].cp ? nd[y].cp < nd[x].cp : fs_stree_less(nd, s->k2, y, x);
                tmp[k++] = ylt ? a[j++] : a[i++];
            }
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        memcpy(a, tmp, n * sizeof *a);
    }
    for (size_t c = 0; c < s->shapes.n; c++)
        s->cls[c].root = s->cls[c].head = 0;
    /* tmp is reused as the stack of the right spine */
    size_t i = 0;
    while (i < n) {
        uint32_t c = nd[a[i]].cp;
        size_t top = 0;
        s->cls[c].head = a[i];
        for (; i < n && nd[a[i]].cp == c; i++) {
            uint32_t x = a[i], last = 0;
            nd[x].l = nd[x].r = 0;
            while (top > 0 && fs_stree_pri(&nd[tmp[top - 1]]) < fs_stree_pri(&nd[x]))
                last = tmp[--top];
            nd[x].l = last;
            if (top > 0)
                nd[tmp[top - 1]].r = x;
            tmp[top++] = x;
        }
        s->cls[c].root = tmp[0];
        fs_stree_pull_all(nd, s->cls[c].root);
    }
    return 0;
}

void fs_sched_log_resv(sched_t *s, fs_model_t *m, uint32_t x, fs_time_t at)
{
    if (!s->record)
        return;
    if (x >= s->logged_cap) {
        size_t old = s->logged_cap;
        if (side_grow((void **)&s->logged, old, s->nd_cap, 1))
            return;
        s->logged_cap = s->nd_cap;
    }
    if (s->logged[x])
        return;
    s->logged[x] = 1;
    if (fs_grow((void **)&s->log, &s->cap_log, s->n_log + 1, sizeof *s->log))
        return;
    s->log[s->n_log++] = (fs_sched_resv_t){fs_model_job(m, x - 1)->job.id, at};
}


/* ---- timers ------------------------------------------------------------------------ */

static int set_timers(sched_t *s, fs_model_t *m)
{
    fs_time_t now = fs_model_now(m);
    if (s->ord->next_change) {
        fs_time_t t = s->ord->next_change(s->ost, m);
        if (t <= now)
            t = FS_TIME_NEVER;
        if (t != s->tm_order_at) {
            if (s->tm_order_at != FS_TIME_NEVER)
                fs_model_cancel(m, s->tm_order);
            s->tm_order_at = t;
            if (t != FS_TIME_NEVER && fs_model_timer(m, t, TM_ORDER, &s->tm_order))
                return FS_ENOMEM;
        }
    }
    if (s->bf_slurm && s->queued > 0 && s->tm_bf_at == FS_TIME_NEVER) {
        fs_time_t iv = s->cfg->bf.interval;
        s->tm_bf_at = (now / iv + 1) * iv;
        if (fs_model_timer(m, s->tm_bf_at, TM_BF, &s->tm_bf))
            return FS_ENOMEM;
    }
    return 0;
}

/* ---- policy ops ---------------------------------------------------------------------- */

static void sched_destroy(void *state);

static void keyf(char *key, size_t keylen, const char *path)
{
    if (key && keylen)
        snprintf(key, keylen, "%s", path);
}

/* The rules of a scheduler block (the policy check hook): a known order,
 * backfill without preemption, the order's own rules. */
static int sched_check_cfg(const fs_sched_cfg_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    const fs_order_ops_t *ord = fs_order_get(cfg->queue);
    if (!ord) {
        keyf(key, keylen, "scheduler.queue");
        return fs_error_set(err, FS_EINVAL, "scheduler.queue: no order with index %d", cfg->queue);
    }
    int pre = cfg->preemption == FS_PREEMPT_ORDER ||
              (cfg->preemption == FS_PREEMPT_AUTO && ord->preemptive);
    if (pre && cfg->backfill != FS_BACKFILL_NONE) {
        keyf(key, keylen, "scheduler.backfill");
        return fs_error_set(err, FS_EINVAL,
                            "scheduler: backfill '%s' cannot be combined with preemption (queue '%s' "
                            "preempts; set scheduler.preemption: none)",
                            cfg->backfill == FS_BACKFILL_EASY ? "easy" : "conservative", ord->name);
    }
    return ord->check ? ord->check(cfg, key, keylen, err) : 0;
}

static int sched_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    return sched_check_cfg(&cfg->scheduler, key, keylen, err);
}

static int sched_create(fs_model_t *m, const fs_sched_cfg_t *cfg, void **state, fs_error_t *err)
{
    int rc0 = sched_check_cfg(cfg, NULL, 0, err);
    if (rc0)
        return rc0;
    const fs_order_ops_t *ord = fs_order_get(cfg->queue);
    int pre = cfg->preemption == FS_PREEMPT_ORDER ||
              (cfg->preemption == FS_PREEMPT_AUTO && ord->preemptive);
    sched_t *s = fs_calloc(1, sizeof *s);
    if (!s || fs_shapemap_init(&s->shapes)) {
        fs_free(s);
        return fs_error_set(err, FS_ENOMEM, "scheduler: out of memory");
    }
    s->n_run = fs_model_cluster(m)->n_pools ? fs_model_cluster(m)->n_pools : 1;
    s->run = fs_calloc(s->n_run, sizeof *s->run);
    s->run_g = fs_calloc(s->n_run, sizeof *s->run_g);
    if (!s->run || !s->run_g) {
        sched_destroy(s);
        return fs_error_set(err, FS_ENOMEM, "scheduler: out of memory");
    }
    s->cfg = cfg;
    s->ord = ord;
    s->strict = cfg->mode == FS_FIFO_STRICT;
    s->backfill = cfg->backfill;
    s->preempt = pre;
    s->bf_slurm = cfg->backfill == FS_BACKFILL_CONSERVATIVE && cfg->bf.mode == FS_BF_SLURM;
    /* bands: where the class heads are all a pass reads (no backfill, no
     * preemption), or Slurm's bounded backfill (its first jobs merged from
     * the bands: fs_sslurm_first_queued) */
    s->banded = ord->band && ord->update_key && !pre &&
                (cfg->backfill == FS_BACKFILL_NONE || s->bf_slurm);
    s->has_bands = s->banded;
    s->fast = 1;
    s->rcache = s->bf_slurm;
    s->tm_order_at = s->tm_bf_at = FS_TIME_NEVER;
    if (ord->create) {
        int rc = ord->create(m, cfg, &s->ost, err);
        if (rc) {
            s->ord = NULL;
            sched_destroy(s);
            return rc;
        }
    }
    *state = s;
    return 0;
}

static void sched_destroy(void *state)
{
    sched_t *s = state;
    if (!s)
        return;
    if (s->ord && s->ord->destroy)
        s->ord->destroy(s->ost);
    fs_free(s->nd_mem);
    fs_free(s->k2);
    fs_free(s->nb);
    fs_free(s->rank);
    fs_free(s->rsv);
    fs_free(s->logged);
    fs_free(s->run);
    fs_free(s->run_g);
    for (size_t c = 0; s->cls && c < s->shapes.n; c++) {
        fs_free(s->cls[c].b);
        fs_free(s->cls[c].tw);
    }
    fs_free(s->cls);
    fs_shapemap_release(&s->shapes);
    fs_free(s->log);
    fs_free(s->scr);
    fs_free(s->want);
    fs_prof_release(&s->prof);
    fs_free(s->tmp32);
    fs_free(s->qh);
    fs_free(s->qr);
    fs_free(s->sfx);
    fs_free(s->rep);
    fs_free(s->rc);
    fs_free(s->rc2);
    fs_free(s->radd);
    fs_free(s->kb);
    fs_free(s->ixb);
    fs_free(s->ixt);
    fs_free(s->ends);
    fs_capplan_free(&s->cap);
    fs_free(s);
}

static int sched_enqueue(void *state, fs_model_t *m, uint32_t slot)
{
    sched_t *s = state;
    if (ensure_nodes(s, slot))
        return FS_ENOMEM;
    uint32_t x = slot + 1;
    if (s->logged && x < s->logged_cap)
        s->logged[x] = 0;
    if (s->rsv)
        s->rsv[x].at = -1;
    if (s->rank)
        s->rank[x] = s->next_rank++;
    /* admitted once: a job requeued after a failure (restarts > 0) keeps
     * the order's state (attained service, priority) */
    if (s->ord->admit && fs_jobrt_restarts(fs_model_job(m, slot)) == 0) {
        int rc = s->ord->admit(s->ost, m, slot);
        if (rc)
            return rc;
    } else if (s->ord->requeued && fs_jobrt_restarts(fs_model_job(m, slot)) > 0) {
        s->ord->requeued(s->ost, m, slot);
    }
    int rc = q_insert(s, m, slot);
    int what = !rc && (s->settled || s->st_keep) ? fs_seasy_arrival(s, m, x) : FS_SEASY_KEEPS;
    if (what != FS_SEASY_KEEPS) {
        /* x may start.  EASY, x behind the blocked head: the head and its
         * shadow stay, and while x is the only such arrival, x is the only
         * job that may start (fs_seasy_pass) */
        int first = s->settled;
        s->settled = 0;
        if (s->backfill != FS_BACKFILL_EASY || what == FS_SEASY_AHEAD) {
            s->st_keep = 0;
        } else if (first) {
            s->st_keep = 1;
            s->st_new = x;
            s->st_nnew = 1;
        } else {
            s->st_nnew++;
        }
    }
    return rc;
}

static int sched_pass(void *state, fs_model_t *m)
{
    sched_t *s = state;
    int rc = 0;
    s->why[0] = '\0';
    if (s->ord->update && s->ord->update(s->ost, m)) {
        s->settled = 0;
        /* the order's list serves preemptive passes: the class treaps'
         * order is read by no one (their stored keys stay consistent) */
        if (!fs_sched_ranked(s))
            rc = rekey(s, m);
    }
    if (!rc) {
        if (fs_sched_ranked(s))
            rc = fs_spre_plan(s, m);
        else if (s->preempt)
            rc = fs_spre_pass(s, m);
        else if (s->backfill == FS_BACKFILL_CONSERVATIVE)
            rc = fs_scons_pass(s, m);
        else if (!fs_seasy_settled(s, m))
            rc = fs_seasy_pass(s, m);
    }
    if (!rc)
        rc = set_timers(s, m);
    return rc ? sched_fail(s, m, "scheduling pass", rc) : 0;
}

static size_t sched_queued(const void *state) { return ((const sched_t *)state)->queued; }

static void sched_job_end(void *state, fs_model_t *m, uint32_t slot)
{
    sched_t *s = state;
    r_remove(s, slot);
    if (s->ord->stopped)
        s->ord->stopped(s->ost, m, slot, 1);
}

/* A failure stopped the job (not finished: as a preemption for the order). */
static void sched_job_interrupted(void *state, fs_model_t *m, uint32_t slot)
{
    sched_t *s = state;
    r_remove(s, slot);
    if (s->ord->stopped)
        s->ord->stopped(s->ost, m, slot, 0);
}

static int sched_timer(void *state, fs_model_t *m, uint64_t data)
{
    sched_t *s = state;
    if (data == TM_BF) {
        s->tm_bf_at = FS_TIME_NEVER;
        s->bf_due = 1;
    } else {
        s->tm_order_at = FS_TIME_NEVER;
        /* with jobs waiting, the pass at the end of this instant settles
         * the order (after this instant's arrivals, as Tiresias does);
         * with none, settle now (2D-LAS demotions of running jobs) */
        s->why[0] = '\0';
        if (s->queued == 0 && s->ord->update && s->ord->update(s->ost, m) && !fs_sched_ranked(s)) {
            int rc = rekey(s, m);
            if (rc)
                return sched_fail(s, m, "policy timer", rc);
        }
    }
    int rc = s->queued == 0 ? set_timers(s, m) : 0;
    return rc ? sched_fail(s, m, "policy timer", rc) : 0;
}

/* A queued job leaves (a retired replica): out of its class, and every
 * cached conclusion of the last pass (settled head, EASY shadow, class
 * candidates) is dropped: the next pass looks at the queue afresh. */
static int sched_withdraw(void *state, fs_model_t *m, uint32_t slot)
{
    sched_t *s = state;
    uint32_t x = slot + 1;
    if (x >= s->nd_cap || fs_model_job(m, slot)->state != FS_JOBRT_QUEUED ||
        s->nd[x].cp >= s->shapes.n)
        return FS_EINVAL;
    s->cls[s->nd[x].cp].cand_at = 0;
    q_remove(s, m, slot);
    s->settled = 0;
    s->st_keep = 0;
    if (s->ord->withdrawn)
        s->ord->withdrawn(s->ost, m, slot);
    return 0;
}

static void sched_stats(const void *state, fs_policy_stats_t *out)
{
    out->backfilled = ((const sched_t *)state)->backfilled;
}

const fs_policy_ops_t fs_policy_sched = {
    .name = "sched",
    .check = sched_check,
    .create = sched_create,
    .destroy = sched_destroy,
    .enqueue = sched_enqueue,
    .pass = sched_pass,
    .queued = sched_queued,
    .job_end = sched_job_end,
    .timer = sched_timer,
    .job_interrupted = sched_job_interrupted,
    .stats = sched_stats,
    .withdraw = sched_withdraw,
};

/* ---- instrumentation ------------------------------------------------------------------ */

void fs_sched_record(void *state, int on) { ((sched_t *)state)->record = on; }

void fs_sched_set_fast(void *state, int on)
{
    sched_t *s = state;
    s->fast = on != 0;
    if (!on)
        s->banded = s->rcache = 0;
    if (s->ord->set_fast)
        s->ord->set_fast(s->ost, on);
}

const fs_sched_resv_t *fs_sched_reservations(const void *state, size_t *n)
{
    const sched_t *s = state;
    *n = s->n_log;
    return s->log;
}

uint64_t fs_sched_preemptions(const void *state) { return ((const sched_t *)state)->preemptions; }
uint64_t fs_sched_backfilled(const void *state) { return ((const sched_t *)state)->backfilled; }
uint64_t fs_sched_loose(const void *state) { return ((const sched_t *)state)->n_loose; }

size_t fs_sched_slot_bytes(const void *state)
{
    const sched_t *s = state;
    return sizeof *s->nd + (s->ord->k2 ? sizeof *s->k2 : 0) + (s->has_bands ? sizeof *s->nb : 0) +
           (s->preempt ? sizeof *s->rank : 0) +
           (s->backfill == FS_BACKFILL_CONSERVATIVE && !s->bf_slurm ? sizeof *s->rsv : 0) +
           (s->bf_slurm ? sizeof *s->rep : 0);
}
