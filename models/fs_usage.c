#include "fs_usage.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_error.h"

#include <string.h>

struct fs_usage {
    uint32_t n_pools;
    int64_t *owned;             /* per pool, GPUs in the fleet now */
    fs_usage_cell_t *cells;     /* day-major: cells[day * n_pools + pool] */
    size_t n_days, cap_cells;
    fs_usage_held_t *held;      /* slot-major: held[slot * n_pools + pool] */
    uint8_t *slot_used;         /* per slot: any job seen */
    size_t n_slots, cap_held, cap_used;
    size_t day;                 /* the day of the segment settled last */
    fs_time_t seg_lo, seg_hi;   /* that segment: the day, or with a series the hour
                                   (seg_lo == seg_hi: none yet) */
    double seg_g;               /* the series' intensity over the segment, g CO2e/kWh */
    double *ci;                 /* hourly intensity series (owned copy); NULL: none */
    size_t n_ci;
    /* the measurement window: the integrals of every pool summed over all
     * days when settling reached win_lo (snap[0 .. n_pools)) and win_hi
     * (snap[n_pools .. 2 n_pools)); the window is their difference, so a
     * settle pays two comparisons for it, not a second accumulation */
    fs_usage_cell_t *snap;
    fs_time_t win_lo, win_hi;   /* win_hi FS_TIME_NEVER: the end of the run */
    double *win_e;              /* per pool: gpu_j, gpu_jg inside the window (fs_usage_energy) */
    uint8_t lo_taken, hi_taken;
    fs_time_t mark;             /* the next mark not taken (FS_TIME_NEVER: none) */
    fs_time_t settled;          /* integrals are complete up to here */
    int err;
};

int fs_usage_create(const fs_cluster_t *c, fs_usage_t **out)
{
    *out = NULL;
    fs_usage_t *u = fs_calloc(1, sizeof *u);
    if (!u)
        return FS_ENOMEM;
    u->n_pools = c->n_pools;
    u->owned = fs_calloc(c->n_pools ? c->n_pools : 1, sizeof *u->owned);
    u->snap = fs_calloc(2 * (c->n_pools ? c->n_pools : 1), sizeof *u->snap);
    u->win_e = fs_calloc(2 * (c->n_pools ? c->n_pools : 1), sizeof *u->win_e);
    if (!u->owned || !u->snap || !u->win_e) {
        fs_free(u->owned);
        fs_free(u->snap);
        fs_free(u->win_e);
        fs_free(u);
        return FS_ENOMEM;
    }
    u->win_hi = FS_TIME_NEVER;
    for (uint32_t p = 0; p < c->n_pools; p++)
        u->owned[p] = (int64_t)c->pools[p].gpus_total;
    *out = u;
    return 0;
}

void fs_usage_destroy(fs_usage_t *u)
{
    if (!u)
        return;
    fs_free(u->owned);
    fs_free(u->snap);
    fs_free(u->win_e);
    fs_free(u->cells);
    fs_free(u->held);
    fs_free(u->slot_used);
    fs_free(u->ci);
    fs_free(u);
}

int fs_usage_set_intensity(fs_usage_t *u, const double *g, size_t n)
{
    if (u->n_days || u->settled || u->seg_hi || !n)
        return FS_EINVAL;
    double *c = fs_malloc(n * sizeof *c);
    if (!c)
        return FS_ENOMEM;
    memcpy(c, g, n * sizeof *c);
    fs_free(u->ci);
    u->ci = c;
    u->n_ci = n;
    return 0;
}

/* Makes day d exist (zeroed).  0 or FS_ENOMEM. */
static int ensure_day(fs_usage_t *u, size_t d)
{
    if (d < u->n_days)
        return 0;
    size_t need = (d + 1) * u->n_pools;
    if (fs_grow((void **)&u->cells, &u->cap_cells, need, sizeof *u->cells))
        return FS_ENOMEM;
    memset(u->cells + u->n_days * u->n_pools, 0,
           (need - u->n_days * u->n_pools) * sizeof *u->cells);
    u->n_days = d + 1;
    return 0;
}

/* Adds w seconds of the current state to day d (at intensity g when the
 * usage has a series). */
static inline __attribute__((always_inline)) void add_day(fs_usage_t *u, const fs_cluster_t *c,
                                                          size_t d, double w, double g)
{
    fs_usage_cell_t *row = u->cells + d * u->n_pools;
    for (uint32_t p = 0; p < u->n_pools; p++) {
        double owned = (double)u->owned[p], busy = (double)c->pools[p].gpus_busy;
        double wb = w * busy, wi = owned > busy ? w * (owned - busy) : 0.0;
        row[p].owned += w * owned;
        row[p].up += w * (double)c->pools[p].gpus_up;
        row[p].busy += wb;
        row[p].idle += wi;
        if (u->ci) {
            row[p].busy_g += wb * g;
            row[p].idle_g += wi * g;
        }
    }
}

/* Makes the segment holding `from` current: its day (created), and with a
 * series its hour and that hour's intensity.  0 or FS_ENOMEM. */
static int enter_segment(fs_usage_t *u, fs_time_t from)
{
    size_t d = (size_t)(from / FS_US_PER_DAY);
    if (ensure_day(u, d))
        return FS_ENOMEM;
    u->day = d;
    if (u->ci) {
        uint64_t h = (uint64_t)(from / FS_US_PER_H);
        u->seg_lo = (fs_time_t)h * FS_US_PER_H;
        u->seg_hi = u->seg_lo + FS_US_PER_H;
        u->seg_g = u->ci[h % u->n_ci];
    } else {
        u->seg_lo = (fs_time_t)d * FS_US_PER_DAY;
        u->seg_hi = u->seg_lo + FS_US_PER_DAY;
    }
    return 0;
}

/* Integrates [from, to) into the days (and hours, with a series) it
 * covers (inlined into the common path of fs_usage_settle). */
static inline __attribute__((always_inline)) void settle_days(fs_usage_t *u, const fs_cluster_t *c, fs_time_t from, fs_time_t to)
{
    while (!u->err && from < to && from >= 0) {
        if ((from < u->seg_lo || from >= u->seg_hi) && enter_segment(u, from)) {
            u->err = FS_ENOMEM;
            return;
        }
        fs_time_t end = to < u->seg_hi ? to : u->seg_hi;
        add_day(u, c, u->day, fs_time_to_s(end - from), u->seg_g);
        from = end;
    }
}

static void cell_add(fs_usage_cell_t *a, const fs_usage_cell_t *b)
{
    a->owned += b->owned;
    a->up += b->up;
    a->busy += b->busy;
    a->idle += b->idle;
    a->busy_g += b->busy_g;
    a->idle_g += b->idle_g;
    a->gpu_j += b->gpu_j;
    a->gpu_jg += b->gpu_jg;
}

/* Pool p's integrals summed over every day so far. */
static void total_of(const fs_usage_t *u, uint32_t p, fs_usage_cell_t *out)
{
    memset(out, 0, sizeof *out);
    for (size_t d = 0; d < u->n_days; d++)
        cell_add(out, &u->cells[d * u->n_pools + p]);
}

static void snapshot(fs_usage_t *u, fs_usage_cell_t *row)
{
    for (uint32_t p = 0; p < u->n_pools; p++)
        total_of(u, p, &row[p]);
}

/* The next window mark settling will reach (FS_TIME_NEVER: none). */
static fs_time_t next_mark(const fs_usage_t *u)
{
    return !u->lo_taken ? u->win_lo : !u->hi_taken ? u->win_hi : FS_TIME_NEVER;
}

/* Settles [from, the last mark <= to), taking the snapshots of the marks
 * passed; returns where settling goes on.  Twice a run at most. */
__attribute__((noinline)) static fs_time_t pass_marks(fs_usage_t *u, const fs_cluster_t *c,
                                                      fs_time_t from, fs_time_t to)
{
    if (!u->lo_taken && to >= u->win_lo) {
        fs_time_t at = u->win_lo > from ? u->win_lo : from;
        settle_days(u, c, from, at);
        snapshot(u, u->snap);
        u->lo_taken = 1;
        from = at;
    }
    if (!u->hi_taken && to >= u->win_hi) {
        fs_time_t at = u->win_hi > from ? u->win_hi : from;
        settle_days(u, c, from, at);
        snapshot(u, u->snap + u->n_pools);
        u->hi_taken = 1;
        from = at;
    }
    u->mark = next_mark(u);
    return from;
}

/* Called at every state change: the day found last is kept, so that the
 * common call (within it) costs no division; the window marks cost one
 * comparison. */
void fs_usage_settle(fs_usage_t *u, const fs_cluster_t *c, fs_time_t from, fs_time_t to)
{
    if (__builtin_expect(to >= u->mark, 0))
        from = pass_marks(u, c, from, to);
    settle_days(u, c, from, to);
    u->settled = to;
}

/* Adds watts over [from, to) inside one day to (day, pool), split at hours
 * with a series. */
static void energy_piece(fs_usage_t *u, uint32_t pool, fs_time_t from, fs_time_t to, double watts)
{
    size_t d = (size_t)(from / FS_US_PER_DAY);
    if (ensure_day(u, d)) {
        u->err = FS_ENOMEM;
        return;
    }
    fs_usage_cell_t *c = &u->cells[d * u->n_pools + pool];
    if (!u->ci) {
        c->gpu_j += watts * fs_time_to_s(to - from);
        return;
    }
    while (from < to) {
        uint64_t h = (uint64_t)(from / FS_US_PER_H);
        fs_time_t end = (fs_time_t)(h + 1) * FS_US_PER_H;
        end = end < to ? end : to;
        double j = watts * fs_time_to_s(end - from);
        c->gpu_j += j;
        c->gpu_jg += j * u->ci[h % u->n_ci];
        from = end;
    }
}

void fs_usage_energy(fs_usage_t *u, uint32_t pool, fs_time_t from, fs_time_t to, double watts)
{
    if (u->err || pool >= u->n_pools || !(to > from) || from < 0 || watts == 0)
        return;
    for (fs_time_t a = from; a < to && !u->err;) {
        fs_time_t b = (a / FS_US_PER_DAY + 1) * FS_US_PER_DAY;
        b = b < to ? b : to;
        energy_piece(u, pool, a, b, watts);
        a = b;
    }
    /* the window's share, with its intensity when there is a series */
    fs_time_t lo = from > u->win_lo ? from : u->win_lo, hi = to < u->win_hi ? to : u->win_hi;
    for (fs_time_t a = lo; a < hi;) {
        fs_time_t b = hi;
        double g = 0;
        if (u->ci) {
            uint64_t h = (uint64_t)(a / FS_US_PER_H);
            fs_time_t e = (fs_time_t)(h + 1) * FS_US_PER_H;
            b = e < hi ? e : hi;
            g = u->ci[h % u->n_ci];
        }
        double j = watts * fs_time_to_s(b - a);
        u->win_e[2 * pool] += j;
        u->win_e[2 * pool + 1] += j * g;
        a = b;
    }
}

int fs_usage_set_owned(fs_usage_t *u, uint32_t pool, int64_t delta_gpus)
{
    if (pool >= u->n_pools || u->owned[pool] + delta_gpus < 0)
        return FS_EINVAL;
    u->owned[pool] += delta_gpus;
    return 0;
}

/* Makes tenant slot s exist.  0 or FS_ENOMEM. */
static int ensure_slot(fs_usage_t *u, size_t s)
{
    if (s < u->n_slots)
        return 0;
    size_t need = (s + 1) * u->n_pools;
    if (fs_grow((void **)&u->held, &u->cap_held, need, sizeof *u->held) ||
        fs_grow((void **)&u->slot_used, &u->cap_used, s + 1, 1))
        return FS_ENOMEM;
    memset(u->held + u->n_slots * u->n_pools, 0,
           (need - u->n_slots * u->n_pools) * sizeof *u->held);
    memset(u->slot_used + u->n_slots, 0, s + 1 - u->n_slots);
    u->n_slots = s + 1;
    return 0;
}

void fs_usage_job(fs_usage_t *u, const fs_job_row_t *row)
{
    if (u->err || row->pool < 0 || (uint32_t)row->pool >= u->n_pools)
        return;
    size_t s = row->tenant < 0 ? 0 : (size_t)row->tenant + 1;
    if (ensure_slot(u, s)) {
        u->err = FS_ENOMEM;
        return;
    }
    fs_usage_held_t *h = &u->held[s * u->n_pools + (uint32_t)row->pool];
    h->gpu_s += row->run * (double)row->gpus * ((double)row->gpu_milli / 1000.0);
    h->lost_gpu_s += row->lost_gpu_s;
    h->preempt_lost_gpu_s += row->preempt_lost_gpu_s;
    u->slot_used[s] = 1;
}

int fs_usage_error(const fs_usage_t *u) { return u->err; }
uint32_t fs_usage_pools(const fs_usage_t *u) { return u->n_pools; }
size_t fs_usage_days(const fs_usage_t *u) { return u->n_days; }
size_t fs_usage_tenant_slots(const fs_usage_t *u) { return u->n_slots; }

const fs_usage_cell_t *fs_usage_cell(const fs_usage_t *u, size_t day, uint32_t pool)
{
    return day < u->n_days && pool < u->n_pools ? &u->cells[day * u->n_pools + pool] : NULL;
}

const fs_usage_held_t *fs_usage_held(const fs_usage_t *u, size_t slot, uint32_t pool)
{
    if (slot >= u->n_slots || pool >= u->n_pools || !u->slot_used[slot])
        return NULL;
    return &u->held[slot * u->n_pools + pool];
}

void fs_usage_set_window(fs_usage_t *u, fs_time_t lo, fs_time_t hi)
{
    u->win_lo = lo;
    u->win_hi = hi;
    u->mark = next_mark(u);
    /* a mark already reached (the model settles up to now first) */
    if (!u->lo_taken && u->settled > 0 && u->settled >= lo) {
        snapshot(u, u->snap);
        u->lo_taken = 1;
    }
    if (!u->hi_taken && u->settled > 0 && u->settled >= hi) {
        snapshot(u, u->snap + u->n_pools);
        u->hi_taken = 1;
    }
    u->mark = next_mark(u);
}

void fs_usage_window(const fs_usage_t *u, uint32_t pool, fs_usage_cell_t *out)
{
    memset(out, 0, sizeof *out);
    if (pool >= u->n_pools || !u->lo_taken)
        return;     /* the window has not begun */
    fs_usage_cell_t hi;
    if (u->hi_taken)
        hi = u->snap[u->n_pools + pool];
    else
        total_of(u, pool, &hi);
    const fs_usage_cell_t *lo = &u->snap[pool];
    out->owned = hi.owned - lo->owned;
    out->up = hi.up - lo->up;
    out->busy = hi.busy - lo->busy;
    out->idle = hi.idle - lo->idle;
    out->busy_g = hi.busy_g - lo->busy_g;
    out->idle_g = hi.idle_g - lo->idle_g;
    out->gpu_j = u->win_e[2 * pool];
    out->gpu_jg = u->win_e[2 * pool + 1];
}
