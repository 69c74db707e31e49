/*
 * fs_sched_easy: the composable scheduler's non-preemptive pass
 * (fs_sched_int.h): strict (the first job in order blocks the rest), best
 * effort (jobs that fit start in order), or EASY backfill (a reservation,
 * the shadow time, for the first blocked job only); and the skip of a pass
 * that cannot start anything (settled queues).  While an outage of
 * cluster.outages is ahead, EASY is the conservative pass's profile with
 * the outages in it and one reservation (fs_scons_easy_pass, issue #42).
 */
#include "fs_sched_int.h"

/* ---- settled queues ----------------------------------------------------------------
 * Why: half the passes follow an arrival alone.  When the last pass started
 * nothing, the next one starts nothing either unless the cluster changed
 * (its generation), the running set changed (the EASY shadow), keys
 * changed, time passed the shadow time (extra GPUs are counted at it), or
 * a new job is a candidate itself: it is ahead of the blocked head, or its
 * shape fits and (best effort) it may start, or (EASY) it fits in the extra
 * GPUs or ends by the shadow time.  Old jobs stay blocked: their shapes
 * still do not fit, or (EASY) the extra GPUs are the same and the time left
 * to the shadow only shrank.  Such a pass is skipped. */

static void settle(sched_t *s, fs_model_t *m, uint32_t head)
{
    if (!s->fast)
        return;
    s->settled = 1;
    s->st_head = head;
    s->st_gen = fs_model_cluster(m)->gen;
    s->st_next = -1;
}

static int cls_in_pool(sched_t *s, const fs_model_t *m, size_t ci);

/* The settled shadow as of now, into *eff: the shadow, or now once time has
 * passed it while no running job was planned to end in between (the GPUs
 * free at the shadow, and so the extra ones, are then the same at now: a
 * new pass would find the same).  0 if such an end passed (the settled
 * state is gone). */
static int shadow_now(sched_t *s, fs_model_t *m, fs_time_t *eff)
{
    fs_time_t now = fs_model_now(m);
    *eff = s->st_shadow;
    if (s->st_shadow == FS_TIME_NEVER || s->st_shadow >= now)
        return 1;
    if (s->st_next < 0) {
        uint32_t x = fs_stree_first_gt(s->nd, s->run[s->st_pool], (double)s->st_shadow);
        s->st_next = x ? (fs_time_t)s->nd[x].k1 : FS_TIME_NEVER;
    }
    *eff = now;
    return now < s->st_next;
}

/* What the arrival of node x does to the settled state. */
int fs_seasy_arrival(sched_t *s, fs_model_t *m, uint32_t x)
{
    tnode_t *nd = s->nd;
    uint32_t ci = s->nd[x].cp;
    if (s->backfill == FS_BACKFILL_NONE && !s->strict)
        return fs_sched_cls_fits(s, m, x, ci) ? FS_SEASY_CANDIDATE : FS_SEASY_KEEPS;
    if (fs_stree_less(nd, s->k2, x, s->st_head))
        return FS_SEASY_AHEAD;
    if (s->backfill == FS_BACKFILL_NONE || !fs_sched_cls_fits(s, m, x, ci))
        return FS_SEASY_KEEPS;
    fs_time_t shadow;
    if (!shadow_now(s, m, &shadow) || !cls_in_pool(s, m, ci))
        return FS_SEASY_CANDIDATE;
    return nd[x].g > s->st_extra && shadow != FS_TIME_NEVER &&
                   nd[x].est > shadow - fs_model_now(m)
               ? FS_SEASY_KEEPS
               : FS_SEASY_CANDIDATE;
}

/* Is the state the last pass settled in still the same (the cluster, and
 * no planned end passed since the shadow)?  *eff: the shadow as of now. */
static int settled_state(sched_t *s, fs_model_t *m, fs_time_t *eff)
{
    return fs_model_cluster(m)->gen == s->st_gen && shadow_now(s, m, eff);
}

/* May this pass be skipped? */
int fs_seasy_settled(sched_t *s, fs_model_t *m)
{
    fs_time_t eff;
    return s->settled && settled_state(s, m, &eff);
}

/* The queue's first job (not 0: the queue is not empty).  Unbanded, it is
 * kept between passes (fast path): an insertion ahead of it takes its
 * place, its removal or new keys make it unknown. */
static uint32_t queue_head(sched_t *s)
{
    if (s->fast && !s->banded && s->qhead)
        return s->qhead;
    uint32_t head = 0;
    for (size_t c = 0; c < s->shapes.n; c++) {
        uint32_t h = s->cls[c].head;
        if (h && (!head || fs_stree_less(s->nd, s->k2, h, head)))
            head = h;
    }
    if (!s->banded)
        s->qhead = head;
    return head;
}

/* GPUs free in pool p now (on up nodes, by count). */
static uint64_t pool_free(const fs_model_t *m, uint32_t p)
{
    const fs_pool_t *pl = &fs_model_cluster(m)->pools[p];
    return pl->gpus_up > pl->gpus_busy ? pl->gpus_up - pl->gpus_busy : 0;
}

/* When `need` GPUs are free in pool p by count, as its running jobs end as
 * planned (FS_TIME_NEVER: never), and the GPUs beyond `need` free then. */
static fs_time_t pool_shadow(sched_t *s, fs_model_t *m, uint32_t p, uint64_t need,
                             uint64_t *extra)
{
    tnode_t *nd = s->nd;
    fs_time_t now = fs_model_now(m), shadow;
    uint64_t free = pool_free(m, p);
    if (free >= need) {         /* enough GPUs by count: fragmentation blocks it */
        shadow = now;
    } else {
        uint32_t x = fs_stree_prefix_reach(nd, s->run[p], need - free);
        shadow = x ? (fs_time_t)nd[x].k1 : FS_TIME_NEVER;
        if (shadow < now)       /* overran its estimate: assumed to end any moment */
            shadow = now;
    }
    if (shadow == FS_TIME_NEVER) {
        *extra = UINT64_MAX;
    } else {
        uint64_t avail = free + fs_stree_sum_le(nd, s->run[p], (double)shadow);
        *extra = avail > need ? avail - need : 0;
    }
    return shadow;
}

/* The head's shadow time and the extra GPUs at it (st_shadow, st_extra):
 * in the first of its pools (a gang runs in one pool) where it could start
 * earliest (st_pool); its reservation is logged. */
static void easy_shadow(sched_t *s, fs_model_t *m, uint32_t head)
{
    const uint32_t *pools;
    size_t n = fs_model_pool_set(m, s->shapes.shapes[s->nd[head].cp].pools, &pools);
    fs_time_t shadow = FS_TIME_NEVER;
    uint64_t extra = UINT64_MAX;
    s->st_pool = FS_SCHED_NO_POOL;
    for (size_t i = 0; i < n; i++) {
        uint32_t p = pools ? pools[i] : (uint32_t)i;
        uint64_t ex;
        fs_time_t sh = pool_shadow(s, m, p, s->nd[head].g, &ex);
        if (sh != FS_TIME_NEVER && (s->st_pool == FS_SCHED_NO_POOL || sh < shadow)) {
            shadow = sh;
            extra = ex;
            s->st_pool = p;
        }
    }
    fs_sched_log_resv(s, m, head, shadow);
    s->st_shadow = shadow;
    s->st_extra = extra;
    s->shadow_no++;
}

/* Could class ci's next job start in the shadow's pool now?  If not, it
 * starts in another pool, where it cannot delay the head's reservation.
 * Whether the class may run in that pool at all is kept per shadow; whether
 * its shape fits there is asked each time (starts fill the pool). */
static int cls_in_pool(sched_t *s, const fs_model_t *m, size_t ci)
{
    cls_t *c = &s->cls[ci];
    if (s->n_run == 1 || s->st_pool == FS_SCHED_NO_POOL)
        return 1;
    const fs_shape_t *sh = &s->shapes.shapes[ci];
    if (c->in_at != s->shadow_no) {
        const uint32_t *pools;
        size_t n = fs_model_pool_set(m, sh->pools, &pools);
        c->in = pools == NULL;
        for (size_t i = 0; i < n && !c->in; i++)
            c->in = pools[i] == s->st_pool;
        c->in_at = s->shadow_no;
    }
    return c->in && fs_cluster_fits_req(fs_model_cluster(m), s->st_pool, sh->gpus, sh->milli);
}

static uint32_t cls_candidate(sched_t *s, const fs_model_t *m, size_t ci, fs_time_t lim)
{
    cls_t *c = &s->cls[ci];
    int by_extra = s->shapes.shapes[ci].gpus <= s->st_extra || !cls_in_pool(s, m, ci);
    if (s->fast && c->cand_at == s->shadow_no && c->cand_extra == by_extra)
        return c->cand;
    c->cand = by_extra ? c->head : fs_stree_first_est_le(s->nd, c->root, lim);
    c->cand_extra = by_extra;
    c->cand_at = s->shadow_no;
    return c->cand;
}

/* The EASY candidate while the head is blocked (easy_shadow done): the
 * first job in order that fits now and either ends (as planned) by the
 * head's shadow time or uses only the extra GPUs left at that time.  0 if
 * none.  A class's candidates are not ahead of its head: classes whose head
 * is behind the best so far are not looked into. */
static uint32_t easy_candidate(sched_t *s, fs_model_t *m)
{
    tnode_t *nd = s->nd;
    fs_time_t now = fs_model_now(m), shadow = s->st_shadow;
    fs_time_t lim = shadow == FS_TIME_NEVER ? FS_TIME_NEVER : shadow - now;
    uint32_t best = 0;
    for (size_t c = 0; c < s->shapes.n; c++) {
        uint32_t h = s->cls[c].head;
        if (!h || (best && fs_stree_less(nd, s->k2, best, h)) || !fs_sched_cls_fits(s, m, h, c))
            continue;
        uint32_t cand = cls_candidate(s, m, c, lim);
        if (cand && (!best || fs_stree_less(nd, s->k2, cand, best)))
            best = cand;
    }
    return best;
}

/* Backfill job x just started while the head stays blocked: is the head's
 * shadow still current?  Taking g GPUs now and returning them at x's
 * planned end e leaves the shadow where it was (x ends by it, or it used
 * g <= extra GPUs free then), and the extra GPUs less g if e is after it.
 * So no new shadow is computed, unless the start did not take exactly g
 * of the free GPUs (a share, a burst pool) or the slow path is on. */
static int easy_shadow_keeps(sched_t *s, fs_model_t *m, uint32_t x, uint64_t free0, uint64_t up0)
{
    const fs_cluster_t *c = fs_model_cluster(m);
    uint64_t g = s->nd[x].g;
    if (!s->fast || c->gpus_up != up0 || free0 - fs_sched_free_gpus(m) != g)
        return 0;
    /* g GPUs of x's pool taken: another pool's shadow is untouched */
    if (s->st_shadow == FS_TIME_NEVER || s->nd[x].cp != s->st_pool ||
        s->nd[x].k1 <= (double)s->st_shadow)
        return 1;
    if (g > s->st_extra)
        return 0;
    s->st_extra -= g;
    return 1;
}

int fs_seasy_pass(sched_t *s, fs_model_t *m)
{
    tnode_t *nd = s->nd;
    if (s->backfill == FS_BACKFILL_EASY) {
        /* outages known ahead: the profile pass (never settled) */
        int out = fs_scons_outages(s, m);
        if (out) {
            s->pass_no++;
            s->settled = s->st_keep = 0;
            return out < 0 ? out : fs_scons_easy_pass(s, m);
        }
    }
    s->pass_no++;
    fs_time_t eff;
    int keep = s->fast && s->st_keep && settled_state(s, m, &eff);
    if (keep)
        s->st_shadow = eff;
    s->settled = 0;
    s->st_keep = 0;
    if (!keep)
        s->st_shadow = FS_TIME_NEVER;
    uint32_t blocked = 0;       /* EASY: the blocked head whose shadow is current */
    uint32_t sole = 0;          /* EASY: the one job that may start (see below) */
    while (s->queued > 0) {
        uint32_t head = blocked, pick = 0;
        if (!head) {
            head = queue_head(s);
            if (fs_sched_cls_fits(s, m, head, s->nd[head].cp))
                pick = head;
        }
        if (!pick && s->backfill == FS_BACKFILL_EASY) {
            if (!blocked) {
                if (keep && head == s->st_head) {
                    /* settled, then arrivals: the jobs queued then are
                     * still no candidates (they fit no better, the extra
                     * GPUs and the time to the shadow did not grow); with
                     * one arrival that may start, it is the pick */
                    s->shadow_no++;
                    if (s->st_nnew == 1)
                        sole = s->st_new;
                } else {
                    easy_shadow(s, m, head);
                }
                blocked = head;
            }
            keep = 0;
            pick = sole ? sole : easy_candidate(s, m);
        } else if (!pick && !s->strict) {
            for (size_t c = 0; c < s->shapes.n; c++) {
                uint32_t h = s->cls[c].head;
                if (h && (!pick || fs_stree_less(nd, s->k2, h, pick)) && fs_sched_cls_fits(s, m, h, c))
                    pick = h;
            }
        }
        if (!pick) {
            settle(s, m, head);
            return 0;
        }
        uint64_t free0 = blocked ? fs_sched_free_gpus(m) : 0;
        uint64_t up0 = blocked ? fs_model_cluster(m)->gpus_up : 0;
        int rc = fs_sched_start(s, m, pick - 1);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return 0;
        if (blocked) {
            s->backfilled++;
            if (!easy_shadow_keeps(s, m, pick, free0, up0)) {
                blocked = 0;
            } else if (sole && s->n_run == 1) {
                /* the rest are still no candidates (with several pools, a
                 * start that fills the shadow's pool makes candidates of
                 * jobs that could only have gone there) */
                settle(s, m, head);
                return 0;
            }
        }
        sole = 0;
    }
    return 0;
}
