/*
 * fs_sched_cons: conservative backfill in the composable scheduler
 * (fs_sched_int.h): a reservation for every queued job in a profile of GPUs
 * free over time (fs_profile.h), built afresh at each pass: exact (the
 * reservations kept from pass to pass, never later) or Slurm mode (bounded
 * by bf.max_job_test, bf.window and bf.resolution; fs_sched_slurm.c).
 * The outages of cluster.outages are in the profile, and a job starts only
 * on nodes whose next outage begins after its planned end (fs_capplan_*,
 * issue #42); EASY plans with the same pass while one is ahead.
 */
#include "fs_sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_order(const tnode_t *nd, const double *k2, uint32_t a, uint32_t b)
{
    return fs_stree_less(nd, k2, a, b) ? -1 : fs_stree_less(nd, k2, b, a) ? 1 : 0;
}

/* Sorts scr[0..n) by order key (insertion sort for small n, else merge). */
static int sort_nodes(sched_t *s, size_t n, int (*cmp)(const tnode_t *, const double *, uint32_t, uint32_t))
{
    uint32_t *a = s->scr;
    if (n < 2)
        return 0;
    if (fs_grow((void **)&s->tmp32, &s->tmp32_cap, n, sizeof *s->tmp32))
        return FS_ENOMEM;
    uint32_t *tmp = s->tmp32;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = cmp(s->nd, s->k2, a[j], a[i]) < 0 ? a[j++] : a[i++];
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        memcpy(a, tmp, n * sizeof *a);
    }
    return 0;
}

static int cmp_end(const void *a, const void *b)
{
    fs_time_t x = *(const fs_time_t *)a, y = *(const fs_time_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorts (end, GPUs) pairs by end, by insertion: O(n + inversions) on the
 * running treap's planned ends once rounded up to the resolution (each
 * moves past only the ends less than one resolution after it).  The
 * profile built from them sums the GPUs of equal ends, so the order among
 * those does not matter. */
static void sort_near(fs_time_t *ends, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        fs_time_t e = ends[2 * i], g = ends[2 * i + 1];
        size_t k = i;
        for (; k > 0 && ends[2 * (k - 1)] > e; k--) {
            ends[2 * k] = ends[2 * (k - 1)];
            ends[2 * k + 1] = ends[2 * (k - 1) + 1];
        }
        ends[2 * k] = e;
        ends[2 * k + 1] = g;
    }
}

/* The profile of GPUs free: free now, plus each running job's GPUs at its
 * planned end (the running treap is in planned-end order: one linear sweep;
 * Slurm mode's fast path: the kept running ends, rc).  Planned ends are
 * rounded to res (fs_sched_rounded_end); with rounding, ends are sorted
 * again.  0 or FS_ENOMEM. */
static int cons_profile(sched_t *s, fs_model_t *m, fs_time_t now, fs_time_t res, int out)
{
    size_t n = 0;
    if (s->rcache) {
        if (fs_sslurm_fold(s))
            return FS_ENOMEM;
        n = s->n_rc;
    } else {
        if (fs_sched_scratch(s, s->running > s->queued ? s->running : s->queued))
            return FS_ENOMEM;
        for (uint32_t p = 0; p < s->n_run; p++)
            fs_sched_collect(s, s->run[p], &n);
    }
    if (fs_prof_reset(&s->prof, s->fast, now, (int64_t)fs_sched_free_gpus(m)))
        return FS_ENOMEM;
    if (fs_grow((void **)&s->ends, &s->ends_cap, 2 * (n + 1), sizeof *s->ends))
        return FS_ENOMEM;
    fs_time_t *ends = s->ends;
    for (size_t i = 0; s->rcache && i < n; i++) {   /* sorted already */
        ends[2 * i] = s->rc[i].e < now ? now : s->rc[i].e;
        ends[2 * i + 1] = (fs_time_t)s->rc[i].g;
    }
    for (size_t i = 0; !s->rcache && i < n; i++) {
        const tnode_t *r = &s->nd[s->scr[i]];
        fs_time_t e = fs_sched_rounded_end(r, res);
        ends[2 * i] = e < now ? now : e;
        ends[2 * i + 1] = (fs_time_t)r->g;
    }
    if (!s->rcache && (s->n_run > 1 || (res > 0 && !s->fast)))  /* several pools; slow path */
        qsort(ends, n, 2 * sizeof *ends, cmp_end);
    else if (!s->rcache && res > 0) /* rounding moves an end by less than res: */
        sort_near(ends, n);         /* nearly sorted */
    if (fs_prof_append_n(&s->prof, ends, n))    /* equal ends summed into one step */
        return FS_ENOMEM;
    if (out) {      /* the outages known ahead (fs_capplan_takes) */
        if (fs_grow((void **)&s->ends, &s->ends_cap, 3 * s->cap.o.n, sizeof *s->ends))
            return FS_ENOMEM;
        size_t k = fs_capplan_takes(&s->cap, now, s->ends);
        for (size_t i = 0; i < k; i++)
            if (fs_prof_take(&s->prof, s->ends[3 * i], s->ends[3 * i + 1], s->ends[3 * i + 2]))
                return FS_ENOMEM;
    }
    return 0;
}

/* fs_sched_int.h: the backfill pass's starts and Slurm's main scheduler's
 * (fs_sslurm_main) with outages ahead. */
int fs_scons_start_planned(sched_t *s, fs_model_t *m, uint32_t x, fs_time_t now, fs_time_t d,
                           int out)
{
    if (!out)
        return fs_sched_start(s, m, x - 1);
    fs_capplan_t *c = &s->cap;
    fs_time_t e = d >= FS_TIME_NEVER - now ? FS_TIME_NEVER : now + d;
    const fs_shape_t *sh = &s->shapes.shapes[s->nd[x].cp];
    /* one pool of whole GPUs: a start that failed under a hold since the
     * cluster last changed, ending no later and needing no more GPUs,
     * says this one fails too (fast path) */
    int mono = s->fast && fs_model_one_pool(m) && sh->pools < 0 &&
               sh->milli >= FS_GPU_MILLI_WHOLE && !sh->res && sh->gpus;
    uint64_t g = s->nd[x].g;
    if (c->fnow != now || c->fgen != fs_model_cluster(m)->gen)
        c->n_fail = 0;
    for (size_t i = 0; mono && i < c->n_fail; i++)
        if (c->fail[i].e <= e && c->fail[i].g <= g)
            return 0;
    int rc = fs_capplan_hold(c, m, now, e);
    int held = c->n_held > 0;
    if (!rc)
        rc = fs_sched_start(s, m, x - 1);
    int rc2 = fs_capplan_release(c, m);
    if (rc == 0 && !rc2 && held && mono) {
        /* the entries kept are as true of the cluster after the release
         * (the hold and release changed its generation, not its state) */
        c->fnow = now;
        c->fgen = fs_model_cluster(m)->gen;
        size_t k = c->n_fail < sizeof c->fail / sizeof c->fail[0] ? c->n_fail++ : c->n_fail - 1;
        c->fail[k].e = e;
        c->fail[k].g = g;
    }
    return rc < 0 ? rc : rc2 ? rc2 : rc;
}

/* The queue in order into scr[0..*n) (Slurm mode: only the first
 * max_job_test, a merge of the classes' (or bands') runs:
 * fs_sslurm_first_queued); *lim: how many of them the pass plans.  0 or
 * FS_ENOMEM. */
static int cons_queue(sched_t *s, fs_model_t *m, size_t *n, size_t *lim)
{
    if (s->bf_slurm && s->fast) {
        *n = fs_sslurm_first_queued(s, m, s->cfg->bf.max_job_test);
        if (*n == (size_t)-1)
            return FS_ENOMEM;
        *lim = *n;
    } else if (s->bf_slurm) {       /* slow path: every class's first ones, sorted */
        size_t want = s->cfg->bf.max_job_test;
        if (fs_sched_scratch(s, want * (s->shapes.n + 1)))
            return FS_ENOMEM;
        *n = 0;
        for (size_t c = 0; c < s->shapes.n; c++) {
            size_t base = *n;
            fs_sched_collect_lim(s, s->cls[c].root, n, base + want);
        }
        if (sort_nodes(s, *n, cmp_order))
            return FS_ENOMEM;
        *lim = want < *n ? want : *n;
    } else {
        *n = fs_sched_collect_queued(s);
        if (sort_nodes(s, *n, cmp_order))
            return FS_ENOMEM;
        *lim = *n;
    }
    return 0;
}

/* Exact mode keeps reservations from pass to pass (Mu'alem and Feitelson's
 * conservative backfilling with compression): all of them, of the n jobs
 * in scr, are in the profile first; each job in order gives its own back
 * and takes the earliest slot, never later than the one it held (that slot
 * is still free).  Slurm mode replans from scratch, as Slurm does.  0 or
 * FS_ENOMEM. */
static int cons_kept(sched_t *s, fs_time_t now, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const trsv_t *r = &s->rsv[s->scr[i]];
        if (r->at >= 0 && fs_prof_take(&s->prof, r->at > now ? r->at : now, r->d,
                                       (int64_t)s->nd[s->scr[i]].g))
            return FS_ENOMEM;
    }
    return 0;
}

/* Plans the first lim jobs of scr in order: each starts now if the profile
 * and the cluster let it, else takes its reservation (Slurm mode: within
 * bf.window).  prune: the pass ends at the profile's first dip below the
 * jobs left (fs_sslurm_prune_prep).  0 or an error. */
static int cons_plan(sched_t *s, fs_model_t *m, fs_time_t now, fs_time_t res, size_t lim,
                     int prune, int out, int easy)
{
    int blocked = 0;
    for (size_t i = 0; i < lim; i++) {
        if (prune && fs_prof_dip(&s->prof, s->sfx[2 * i],
                                 s->sfx[2 * i + 1] >= FS_TIME_NEVER - now
                                     ? FS_TIME_NEVER
                                     : now + s->sfx[2 * i + 1]))
            break;
        uint32_t x = s->scr[i];
        trsv_t *r = s->rsv ? &s->rsv[x] : NULL;     /* exact mode: kept reservations */
        int64_t g = (int64_t)s->nd[x].g;
        if (r && r->at >= 0 && fs_prof_take(&s->prof, r->at > now ? r->at : now, r->d, -g))
            return FS_ENOMEM;
        if (r)
            r->at = -1;
        fs_time_t d = fs_sched_plan_d(s, x, res);
        /* EASY past its one reservation (banded orders; fast path): a job
         * starts now or waits, and the earliest slot is now exactly when no
         * step before now + d has fewer than g free (the profile's first
         * step is now): a dip test, which stops at the first short step, in
         * place of a search of the whole profile for a later slot no one
         * would take.  The slow path keeps the search (the reference). */
        fs_time_t t = easy && blocked && s->fast
                          ? (fs_prof_dip(&s->prof, g, d >= FS_TIME_NEVER - now ? FS_TIME_NEVER
                                                                                : now + d)
                                 ? FS_TIME_NEVER
                                 : now)
                          : fs_prof_earliest(&s->prof, g, d);
        if (t == FS_TIME_NEVER)
            continue;
        if (t == now && fs_sched_fits(m, x)) {
            int rc = fs_scons_start_planned(s, m, x, now, d, out);
            if (rc < 0)
                return rc;
            if (rc == 1) {
                if (blocked)
                    s->backfilled++;
                if (fs_prof_take(&s->prof, now, d, g))
                    return FS_ENOMEM;
                continue;
            }
        }
        if (easy && blocked)        /* EASY: one reservation, the first blocked job's */
            continue;
        blocked = 1;
        if (s->bf_slurm && t - now > s->cfg->bf.window)
            continue;
        fs_sched_log_resv(s, m, x, t);
        if (r) {
            r->at = t;
            r->d = d;
        }
        if (fs_prof_take(&s->prof, t, d, g))
            return FS_ENOMEM;
    }
    return 0;
}

/* Exact mode, one job queued and no reservation held (fast path; issue
 * #41: at a short queue most passes are an arrival that starts at once).
 * The profile is then the GPUs free now plus each running job's at its end,
 * never lower later, so cons_plan's earliest slot is now when the GPUs free
 * now are enough: the job starts if the cluster fits it, else it reserves
 * now, as cons_plan does, without the profile (O(running)) being built.
 * 0 (the pass is done), 1 (the full pass decides) or an error. */
static int cons_one(sched_t *s, fs_model_t *m, fs_time_t now)
{
    if (fs_sched_scratch(s, s->queued))
        return FS_ENOMEM;
    if (fs_sched_collect_queued(s) != 1)
        return 1;
    uint32_t x = s->scr[0];
    trsv_t *r = &s->rsv[x];
    if (r->at >= 0 || s->nd[x].g > fs_sched_free_gpus(m))
        return 1;
    fs_time_t d = fs_sched_plan_d(s, x, 0);
    if (fs_sched_fits(m, x)) {
        int rc = fs_sched_start(s, m, x - 1);
        if (rc != 0)
            return rc < 0 ? rc : 0;
    }
    fs_sched_log_resv(s, m, x, now);
    r->at = now;
    r->d = d;
    return 0;
}

int fs_scons_pass(sched_t *s, fs_model_t *m)
{
    fs_time_t now = fs_model_now(m);
    fs_time_t res = s->bf_slurm ? s->cfg->bf.resolution : 0;
    int out = fs_scons_outages(s, m);
    if (out < 0)
        return out;
    if (s->fast && !s->bf_slurm && s->queued == 1 && !out) {
        int rc = cons_one(s, m, now);
        if (rc <= 0)
            return rc;
    }
    if (s->bf_slurm) {
        int rc = fs_sslurm_main(s, m);
        if (rc <= 0)
            return rc;
    }
    size_t n, lim;
    if (cons_profile(s, m, now, res, out) || cons_queue(s, m, &n, &lim) ||
        (!s->bf_slurm && cons_kept(s, now, n)))
        return FS_ENOMEM;
    int prune = s->bf_slurm ? fs_sslurm_prune_prep(s, lim, res) : 0;
    if (prune < 0)
        return prune;
    return cons_plan(s, m, now, res, lim, prune, out, 0);
}

int fs_scons_outages(sched_t *s, fs_model_t *m)
{
    if (s->cap_state == 2)
        return 0;
    if (s->cap_state == 0) {
        fs_error_t e;
        fs_error_clear(&e);
        int rc = fs_capplan_load(fs_model_config(m), fs_model_cluster(m), &s->cap, &e);
        if (rc) {
            snprintf(s->why, sizeof s->why, "%.150s", e.msg);
            return rc;
        }
        s->cap_state = s->cap.o.n ? 1 : 2;
    }
    return s->cap_state == 1 && fs_capplan_live(&s->cap, fs_model_now(m));
}

/* EASY with outages ahead, fast path (issue #42: calibrate's low capacity
 * shares leave queues of thousands, and sorting the whole queue at every
 * pass was most of their cost).  The same pass as cons_plan(..., easy) over
 * the queue in order, without collecting and sorting it: a cursor (the key
 * of the last job visited) walks the classes' treaps in order.  Until the
 * first blocked job every job is visited, as cons_plan visits it.  After
 * it a job starts now or is passed over without effect, and it can start
 * now only if its planned time ends by the profile's first dip below its
 * GPUs (fs_prof_reach; a class's jobs all have its shape's GPUs): the
 * cursor goes straight to the first job after it, in any class, whose
 * estimate is within that (fs_stree_next_est_le), and cons_plan's test
 * decides whether it starts.  The jobs jumped over are exactly those
 * cons_plan's dip test would pass over (the profile only changes at a
 * start), so the starts, the reservation and the backfill count are the
 * same.  Unbanded orders only (a class is then one treap). */
static int easy_out_fast(sched_t *s, fs_model_t *m, fs_time_t now)
{
    tnode_t *nd = s->nd;
    size_t nc = s->shapes.n;
    /* cand[c]: class c's next job for the cursor, kept while valid[c] (the want scratch): a job
     * passed over changes no other class's, a start (past the reservation)
     * or the reservation changes the profile and so every class's */
    if (fs_sched_scratch(s, nc))
        return FS_ENOMEM;
    uint32_t *cand = s->scr;
    uint8_t *valid = s->want;
    memset(valid, 0, nc);
    tkey_t at;
    int moved = 0, blocked = 0;
    for (;;) {
        uint32_t x = 0;
        size_t xc = 0;
        for (size_t c = 0; c < nc; c++) {
            if (!s->cls[c].head)
                continue;
            if (!valid[c]) {
                valid[c] = 1;
                cand[c] = 0;
                fs_time_t lim = FS_TIME_NEVER;
                if (blocked) {
                    fs_time_t r = fs_prof_reach(&s->prof, (int64_t)s->shapes.shapes[c].gpus);
                    if (r <= now)
                        continue;   /* short already now: no job of the class starts */
                    lim = r == FS_TIME_NEVER ? FS_TIME_NEVER : r - now;
                }
                cand[c] = fs_stree_next_est_le(nd, s->k2, s->cls[c].root, moved ? &at : NULL, lim);
            }
            uint32_t y = cand[c];
            if (y && (!x || fs_stree_less(nd, s->k2, y, x))) {
                x = y;
                xc = c;
            }
        }
        if (!x)
            return 0;
        at = (tkey_t){nd[x].k1, s->k2 ? s->k2[x] : 0, nd[x].seq};
        moved = 1;
        valid[xc] = 0;
        int64_t g = (int64_t)nd[x].g;
        fs_time_t d = fs_sched_plan_d(s, x, 0);
        /* past the reservation x's estimate is within the reach: it fits now */
        fs_time_t t = blocked ? now : fs_prof_earliest(&s->prof, g, d);
        if (t == FS_TIME_NEVER)
            continue;
        if (t == now && fs_sched_fits(m, x)) {
            int rc = fs_scons_start_planned(s, m, x, now, d, 1);
            if (rc < 0)
                return rc;
            if (rc == 1) {
                if (blocked) {
                    s->backfilled++;
                    memset(valid, 0, nc);
                }
                if (fs_prof_take(&s->prof, now, d, g))
                    return FS_ENOMEM;
                continue;
            }
        }
        if (blocked)
            continue;
        blocked = 1;
        memset(valid, 0, nc);
        fs_sched_log_resv(s, m, x, t);
        if (fs_prof_take(&s->prof, t, d, g))
            return FS_ENOMEM;
    }
}

int fs_scons_easy_pass(sched_t *s, fs_model_t *m)
{
    fs_time_t now = fs_model_now(m);
    size_t n, lim;
    if (cons_profile(s, m, now, 0, 1))
        return FS_ENOMEM;
    if (s->fast && !s->banded && !s->rsv)
        return easy_out_fast(s, m, now);
    if (cons_queue(s, m, &n, &lim))
        return FS_ENOMEM;
    return cons_plan(s, m, now, 0, lim, 0, 1, 1);
}
