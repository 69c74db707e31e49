/*
 * The conservative-backfill profile: flat arrays (the reference) and an
 * unrolled list of blocks (the fast path).  fs_profile.h says what each
 * costs and why both exist.
 */
#include "fs_profile.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_error.h"

#include <string.h>

#define BLK FS_PROF_BLK
/* Steps per block in a build (append): room is left for the insertions a
 * pass makes (two per take) before blocks split. */
#define FILL (BLK - BLK / 4)

struct fs_prof_blk {
    fs_time_t t[BLK];       /* step times, increasing (and above the previous block's) */
    int64_t f[BLK];         /* free GPUs less the block's lazy add */
};

/* A block's directory entry: all that a walk over whole blocks reads, in
 * one array in time order. */
struct fs_prof_dir {
    fs_time_t first, last;  /* the block's first and last step times */
    int64_t add;            /* lazy add: step i has f[i] + add free */
    int64_t lo, hi;         /* bounds of f[0..n): lo <= every f[i] <= hi (exact after a
                               split; an update only widens them where it must) */
    uint32_t blk;           /* its pool index */
    uint32_t n;             /* steps, 1..BLK */
};

typedef struct fs_prof_dir dent_t;

static fs_time_t end_of(fs_time_t t, fs_time_t d)
{
    return d >= FS_TIME_NEVER - t ? FS_TIME_NEVER : t + d;
}

/* ---- flat (reference) ------------------------------------------------------ */

static int flat_point(fs_profile_t *p, fs_time_t t, size_t *at)
{
    size_t lo = 0, hi = p->np;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->pt[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < p->np && p->pt[lo] == t) {
        *at = lo;
        return 0;
    }
    if (fs_grow((void **)&p->pt, &p->cap_pt, p->np + 1, sizeof *p->pt) ||
        fs_grow((void **)&p->pf, &p->cap_pf, p->np + 1, sizeof *p->pf))
        return FS_ENOMEM;
    memmove(p->pt + lo + 1, p->pt + lo, (p->np - lo) * sizeof *p->pt);
    memmove(p->pf + lo + 1, p->pf + lo, (p->np - lo) * sizeof *p->pf);
    p->pt[lo] = t;
    p->pf[lo] = lo > 0 ? p->pf[lo - 1] : 0;
    p->np++;
    *at = lo;
    return 0;
}

static int flat_take(fs_profile_t *p, fs_time_t t, fs_time_t d, int64_t g)
{
    size_t a, b;
    fs_time_t end = end_of(t, d);
    if (flat_point(p, t, &a) || flat_point(p, end, &b))
        return FS_ENOMEM;
    for (size_t i = a; i < b; i++)
        p->pf[i] -= g;
    return 0;
}

static fs_time_t flat_earliest(const fs_profile_t *p, int64_t g, fs_time_t d)
{
    for (size_t i = 0; i < p->np;) {
        if (p->pf[i] < g) {
            i++;
            continue;
        }
        fs_time_t t = p->pt[i];
        fs_time_t end = end_of(t, d);
        size_t k = i;
        while (k < p->np && p->pt[k] < end && p->pf[k] >= g)
            k++;
        if (k == p->np || p->pt[k] >= end)
            return t;
        i = k + 1;
    }
    return FS_TIME_NEVER;
}

static int flat_dip(const fs_profile_t *p, int64_t g, fs_time_t until)
{
    for (size_t q = 0; q < p->np && p->pt[q] < until; q++)
        if (p->pf[q] < g)
            return 1;
    return 0;
}

static int flat_append(fs_profile_t *p, fs_time_t t, int64_t g)
{
    if (p->np > 0 && t == p->pt[p->np - 1]) {
        p->pf[p->np - 1] += g;
        return 0;
    }
    if (fs_grow((void **)&p->pt, &p->cap_pt, p->np + 1, sizeof *p->pt) ||
        fs_grow((void **)&p->pf, &p->cap_pf, p->np + 1, sizeof *p->pf))
        return FS_ENOMEM;
    p->pt[p->np] = t;
    p->pf[p->np] = (p->np > 0 ? p->pf[p->np - 1] : 0) + g;
    p->np++;
    return 0;
}

/* ---- blocked --------------------------------------------------------------- */

typedef struct loc {
    size_t j;               /* directory index */
    uint32_t i;             /* step in the block */
} loc_t;

static fs_prof_blk_t *blk(const fs_profile_t *p, const dent_t *e)
{
    return &p->pool[e->blk];
}

static void bounds(dent_t *e, const fs_prof_blk_t *b)
{
    int64_t lo = b->f[0], hi = b->f[0];
    for (uint32_t i = 1; i < e->n; i++) {
        lo = b->f[i] < lo ? b->f[i] : lo;
        hi = b->f[i] > hi ? b->f[i] : hi;
    }
    e->lo = lo;
    e->hi = hi;
}

/* Room for one more block (pool and directory); no pointer into either
 * survives this call. */
static int room(fs_profile_t *p)
{
    if (fs_grow((void **)&p->pool, &p->cap_pool, p->used + 1, sizeof *p->pool) ||
        fs_grow((void **)&p->dir, &p->cap_dir, p->nb + 1, sizeof *p->dir))
        return FS_ENOMEM;
    return 0;
}

/* A new empty block at directory index j (room() first). */
static dent_t *new_blk(fs_profile_t *p, size_t j)
{
    memmove(p->dir + j + 1, p->dir + j, (p->nb - j) * sizeof *p->dir);
    p->nb++;
    dent_t *e = &p->dir[j];
    e->blk = (uint32_t)p->used++;
    e->n = 0;
    e->add = 0;
    return e;
}

/* The block that holds t or would: the last whose first time is <= t
 * (block 0 if t is before every step). */
static size_t dir_find(const fs_profile_t *p, fs_time_t t)
{
    size_t base = 0, len = p->nb;      /* branch-free (a conditional move) */
    while (len > 1) {
        size_t half = len / 2;
        base = p->dir[base + half].first <= t ? base + half : base;
        len -= half;
    }
    return base;
}

/* The first of the n >= 1 steps of b at or after t (n if none). */
static uint32_t blk_find(const fs_prof_blk_t *b, uint32_t n, fs_time_t t)
{
    uint32_t base = 0, len = n;
    while (len > 1) {
        uint32_t half = len / 2;
        base = b->t[base + half] < t ? base + half : base;
        len -= half;
    }
    return base + (b->t[base] < t);
}

/* Finds step t into *at, inserting it if absent with the count of the step
 * before (0 if none).  *keep, if given, is a location that stays on its
 * step through the insertion (a split or a shift moves it). */
static int bk_point(fs_profile_t *p, fs_time_t t, loc_t *at, loc_t *keep)
{
    if (p->nb == 0) {
        if (room(p))
            return FS_ENOMEM;
        dent_t *e = new_blk(p, 0);
        fs_prof_blk_t *b = blk(p, e);
        b->t[0] = e->first = e->last = t;
        b->f[0] = e->lo = e->hi = 0;
        e->n = 1;
        p->n = 1;
        *at = (loc_t){0, 0};
        return 0;
    }
    size_t j = dir_find(p, t);
    dent_t *e = &p->dir[j];
    fs_prof_blk_t *b = blk(p, e);
    uint32_t i = blk_find(b, e->n, t);
    if (i < e->n && b->t[i] == t) {
        *at = (loc_t){j, i};
        return 0;
    }
    /* i == 0 only before the first step (j == 0): the count is 0 */
    int64_t v = i > 0 ? b->f[i - 1] + e->add : 0;
    if (e->n == BLK) {              /* split: the upper half to a new block */
        if (room(p))
            return FS_ENOMEM;
        dent_t *c = new_blk(p, j + 1);
        e = &p->dir[j];
        b = blk(p, e);
        fs_prof_blk_t *cb = blk(p, c);
        uint32_t h = BLK / 2;
        memcpy(cb->t, b->t + h, (BLK - h) * sizeof *cb->t);
        memcpy(cb->f, b->f + h, (BLK - h) * sizeof *cb->f);
        c->n = BLK - h;
        c->add = e->add;
        c->first = cb->t[0];
        c->last = e->last;
        e->n = h;
        e->last = b->t[h - 1];
        bounds(e, b);
        bounds(c, cb);
        if (keep && keep->j == j && keep->i >= h) {
            keep->j++;
            keep->i -= h;
        } else if (keep && keep->j > j) {
            keep->j++;
        }
        if (i > h) {
            j++;
            i -= h;
            e = c;
            b = cb;
        }
    }
    memmove(b->t + i + 1, b->t + i, (e->n - i) * sizeof *b->t);
    memmove(b->f + i + 1, b->f + i, (e->n - i) * sizeof *b->f);
    int64_t f = v - e->add;
    b->t[i] = t;
    b->f[i] = f;
    e->n++;
    if (f < e->lo)
        e->lo = f;
    if (f > e->hi)
        e->hi = f;
    if (i == 0)
        e->first = t;
    if (i == e->n - 1)
        e->last = t;
    if (keep && keep->j == j && keep->i >= i)
        keep->i++;
    p->n++;
    *at = (loc_t){j, i};
    return 0;
}

/* Subtracts g from steps [x, y) of block e.  A take (g > 0) can only lower
 * the minimum, a give-back only raise the maximum: the other bound stays a
 * bound (perhaps not tight; the next pass rebuilds the profile). */
static void blk_sub(const fs_profile_t *p, dent_t *e, uint32_t x, uint32_t y, int64_t g)
{
    if (x >= y)
        return;
    if (x == 0 && y == e->n) {
        e->add -= g;
        return;
    }
    int64_t *f = blk(p, e)->f;
    if (g > 0) {
        int64_t lo = e->lo;
        for (uint32_t i = x; i < y; i++) {
            int64_t v = f[i] - g;
            f[i] = v;
            lo = v < lo ? v : lo;
        }
        e->lo = lo;
    } else {
        int64_t hi = e->hi;
        for (uint32_t i = x; i < y; i++) {
            int64_t v = f[i] - g;
            f[i] = v;
            hi = v > hi ? v : hi;
        }
        e->hi = hi;
    }
}

static int bk_take(fs_profile_t *p, fs_time_t t, fs_time_t d, int64_t g)
{
    loc_t a, b;
    if (bk_point(p, t, &a, NULL) || bk_point(p, end_of(t, d), &b, &a))
        return FS_ENOMEM;
    if (a.j == b.j) {
        blk_sub(p, &p->dir[a.j], a.i, b.i, g);
        return 0;
    }
    blk_sub(p, &p->dir[a.j], a.i, p->dir[a.j].n, g);
    for (size_t j = a.j + 1; j < b.j; j++)
        p->dir[j].add -= g;
    blk_sub(p, &p->dir[b.j], 0, b.i, g);
    return 0;
}

/* Whether the run from step (j, i), which has at least g free, holds g over
 * [t, end); if not, *fail is the first step in it with less than g. */
static int bk_holds(const fs_profile_t *p, size_t j, uint32_t i, int64_t g, fs_time_t end,
                    loc_t *fail)
{
    for (; j < p->nb; j++, i = 0) {
        const dent_t *e = &p->dir[j];
        if (i == 0 && e->first >= end)
            return 1;
        int64_t need = g - e->add;
        if (e->lo >= need) {            /* the rest of the block holds g */
            if (e->last >= end)
                return 1;
            continue;
        }
        const fs_prof_blk_t *b = blk(p, e);
        for (; i < e->n; i++) {
            if (b->t[i] >= end)
                return 1;
            if (b->f[i] < need) {
                *fail = (loc_t){j, i};
                return 0;
            }
        }
    }
    return 1;
}

static fs_time_t bk_earliest(const fs_profile_t *p, int64_t g, fs_time_t d)
{
    size_t j = 0;
    uint32_t i = 0;
    while (j < p->nb) {
        const dent_t *e = &p->dir[j];
        int64_t need = g - e->add;
        if (e->hi < need) {             /* no start in this block */
            j++;
            i = 0;
            continue;
        }
        const fs_prof_blk_t *b = blk(p, e);
        while (i < e->n && b->f[i] < need)
            i++;
        if (i == e->n) {
            j++;
            i = 0;
            continue;
        }
        fs_time_t t = b->t[i];
        loc_t fail;
        if (bk_holds(p, j, i, g, end_of(t, d), &fail))
            return t;
        j = fail.j;                     /* the next start is after the failing step */
        i = fail.i + 1;
    }
    return FS_TIME_NEVER;
}

static int bk_dip(const fs_profile_t *p, int64_t g, fs_time_t until)
{
    for (size_t j = 0; j < p->nb; j++) {
        const dent_t *e = &p->dir[j];
        if (e->first >= until)
            return 0;
        int64_t need = g - e->add;
        if (e->lo >= need)              /* no step of the block has fewer */
            continue;
        const fs_prof_blk_t *b = blk(p, e);
        for (uint32_t i = 0; i < e->n && b->t[i] < until; i++)
            if (b->f[i] < need)
                return 1;
    }
    return 0;
}

static fs_time_t flat_reach(const fs_profile_t *p, int64_t g)
{
    for (size_t q = 0; q < p->np; q++)
        if (p->pf[q] < g)
            return p->pt[q];
    return FS_TIME_NEVER;
}

static fs_time_t bk_reach(const fs_profile_t *p, int64_t g)
{
    for (size_t j = 0; j < p->nb; j++) {
        const dent_t *e = &p->dir[j];
        int64_t need = g - e->add;
        if (e->lo >= need)              /* no step of the block has fewer */
            continue;
        const fs_prof_blk_t *b = blk(p, e);
        for (uint32_t i = 0; i < e->n; i++)
            if (b->f[i] < need)
                return b->t[i];
    }
    return FS_TIME_NEVER;
}

/* Appends the n (time, GPUs) pairs eg[2i], eg[2i + 1] in turn (the
 * build): each adds its GPUs from its time on, a new step at the end or
 * the last step's count.  The last block's fields are kept in locals while
 * it fills (to FILL steps: room for the pass's insertions), then a new
 * block is opened. */
static int bk_append_n(fs_profile_t *p, const fs_time_t *eg, size_t n)
{
    size_t i = 0;
    while (i < n) {
        dent_t *e = p->nb ? &p->dir[p->nb - 1] : NULL;
        if (!e || (e->n >= FILL && eg[2 * i] != e->last)) {    /* a new block */
            int64_t v = (e ? blk(p, e)->f[e->n - 1] + e->add : 0) + eg[2 * i + 1];
            if (room(p))
                return FS_ENOMEM;
            e = new_blk(p, p->nb);
            fs_prof_blk_t *b = blk(p, e);
            b->t[0] = e->first = e->last = eg[2 * i];
            b->f[0] = e->lo = e->hi = v;
            e->n = 1;
            p->n++;
            i++;
            continue;
        }
        fs_prof_blk_t *b = blk(p, e);
        uint32_t k = e->n;
        fs_time_t last = e->last;
        int64_t v = b->f[k - 1], lo = e->lo, hi = e->hi;
        for (; i < n; i++) {
            fs_time_t t = eg[2 * i];
            if (t != last && k >= FILL)
                break;
            v += eg[2 * i + 1];
            if (t == last) {
                b->f[k - 1] = v;    /* the bounds stay bounds (blk_sub) */
            } else {
                b->t[k] = last = t;
                b->f[k++] = v;
                p->n++;
            }
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        e->n = k;
        e->last = last;
        e->lo = lo;
        e->hi = hi;
    }
    return 0;
}

/* ---- the interface --------------------------------------------------------- */

int fs_prof_reset(fs_profile_t *p, int blocked, fs_time_t now, int64_t free_now)
{
    p->blocked = blocked != 0;
    p->np = 0;
    p->nb = p->used = p->n = 0;
    return fs_prof_append(p, now, free_now);
}

int fs_prof_append(fs_profile_t *p, fs_time_t t, int64_t g)
{
    if (!p->blocked)
        return flat_append(p, t, g);
    fs_time_t eg[2] = {t, g};
    return bk_append_n(p, eg, 1);
}

int fs_prof_append_n(fs_profile_t *p, const fs_time_t *eg, size_t n)
{
    if (p->blocked)
        return bk_append_n(p, eg, n);
    if (fs_grow((void **)&p->pt, &p->cap_pt, p->np + n, sizeof *p->pt) ||
        fs_grow((void **)&p->pf, &p->cap_pf, p->np + n, sizeof *p->pf))
        return FS_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (flat_append(p, eg[2 * i], eg[2 * i + 1]))
            return FS_ENOMEM;
    return 0;
}

int fs_prof_take(fs_profile_t *p, fs_time_t t, fs_time_t d, int64_t g)
{
    return p->blocked ? bk_take(p, t, d, g) : flat_take(p, t, d, g);
}

fs_time_t fs_prof_earliest(const fs_profile_t *p, int64_t g, fs_time_t d)
{
    return p->blocked ? bk_earliest(p, g, d) : flat_earliest(p, g, d);
}

int fs_prof_dip(const fs_profile_t *p, int64_t g, fs_time_t until)
{
    return p->blocked ? bk_dip(p, g, until) : flat_dip(p, g, until);
}

fs_time_t fs_prof_reach(const fs_profile_t *p, int64_t g)
{
    return p->blocked ? bk_reach(p, g) : flat_reach(p, g);
}

size_t fs_prof_steps(const fs_profile_t *p, fs_time_t *t, int64_t *f)
{
    if (!p->blocked) {
        if (t && f) {
            memcpy(t, p->pt, p->np * sizeof *t);
            memcpy(f, p->pf, p->np * sizeof *f);
        }
        return p->np;
    }
    if (t && f) {
        size_t k = 0;
        for (size_t j = 0; j < p->nb; j++) {
            const dent_t *e = &p->dir[j];
            const fs_prof_blk_t *b = blk(p, e);
            for (uint32_t i = 0; i < e->n; i++, k++) {
                t[k] = b->t[i];
                f[k] = b->f[i] + e->add;
            }
        }
    }
    return p->n;
}

void fs_prof_release(fs_profile_t *p)
{
    fs_free(p->pt);
    fs_free(p->pf);
    fs_free(p->pool);
    fs_free(p->dir);
    memset(p, 0, sizeof *p);
}
