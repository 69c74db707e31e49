/*
 * fs_service_step: how long an iteration of the serving engine takes
 * (fs_service_engine.c, docs/services.md "Step time"): p prefill tokens over
 * the row's prefill rate plus the decode step of b sequences, plus the
 * context term (performance[].us_per_kv_token) or a measured profile; and
 * a macro step's end (k identical decode iterations, the context growing
 * by b each) in closed form.
 */
#include "fs_service_int.h"

#include <math.h>


static double step_us(const replica_t *r, uint32_t b)
{
    if (b == 0)
        return 0;
    if (r->batch <= 1)
        return r->stepb;
    return r->step1 + (r->stepb - r->step1) * (double)(b - 1) / (double)(r->batch - 1);
}

/* An iteration's length without its context term, us: p prefill tokens, b
 * decoding sequences. */
static fs_time_t iter_us(const replica_t *r, uint64_t p, uint32_t b)
{
    double x = (double)p * 1e6 / r->prefill_tps + step_us(r, b);
    fs_time_t d = (fs_time_t)floor(x + 0.5);
    return d < 1 ? 1 : d;
}

/* The context term of an iteration whose decoding sequences hold ctx
 * tokens of KV: kv_fs x ctx / 1e9 us, rounded half up (integers only). */
static fs_time_t ctx_us(const eng_t *e, uint64_t ctx)
{
    return (fs_time_t)((e->kv_fs * ctx + KV_FS_PER_US / 2) / KV_FS_PER_US);
}

/* n (n - 1) / 2 without overflowing first. */
static uint64_t tri(uint64_t n) { return n % 2 ? (n - 1) / 2 * n : n / 2 * (n - 1); }

/* sum over i = 0 .. n-1 of floor((a i + c) / m), m > 0, exactly.  With a, c
 * reduced below m, the terms count the lattice points under the line
 * y = (a x + c) / m; counting them by rows instead is a sum of the same
 * form with m and a exchanged (Euclid's algorithm on (m, a)). */
static uint64_t floor_sum(uint64_t n, uint64_t m, uint64_t a, uint64_t c)
{
    uint64_t sum = 0;
    while (n > 0) {
        if (a >= m) {
            sum += tri(n) * (a / m);
            a %= m;
        }
        if (c >= m) {
            sum += n * (c / m);
            c %= m;
        }
        uint64_t top = a * n + c;
        if (top < m)
            break;
        n = top / m;
        c = top % m;
        uint64_t t = m;
        m = a;
        a = t;
    }
    return sum;
}

/* An iteration's length from the replica's measured profile: p prefill
 * tokens, b decoding sequences holding ctx KV tokens (fs_svprofile.h). */
static fs_time_t prof_us(const eng_t *e, uint64_t p, uint32_t b, uint64_t ctx)
{
    const fs_svprof_t *pf = e->prof;
    double x = fs_svprof_prefill(pf, p) +
               (b ? fs_svprof_decode(pf, b, fs_svprof_column(pf, b, ctx)) : 0);
    fs_time_t d = (fs_time_t)floor(x + 0.5);
    return d < 1 ? 1 : d;
}

/* The end of the first j iterations of the engine's current iteration or
 * macro step (every one b = n_run decodes, C growing by b each): t0 +
 * j x base + the sum of their context terms, in closed form; with a
 * profile, a sum over the grid's context columns C passes through. */
fs_time_t fs_svstep_macro_end(const eng_t *e, uint64_t j)
{
    if (e->prof && e->k > 1) {
        fs_time_t t = e->t0;
        uint32_t b = e->n_run;
        uint64_t i = 0;
        while (i < j) {
            uint64_t ctx = e->ctx0 + i * b;
            size_t g = fs_svprof_column(e->prof, b, ctx);
            uint64_t left = fs_svprof_left_in(e->prof, b, ctx, g);
            uint64_t cnt = left < j - i ? left : j - i;
            t += (fs_time_t)cnt * prof_us(e, 0, b, ctx);
            i += cnt;
        }
        return t;
    }
    if (e->prof)
        return e->t0 + (fs_time_t)j * e->dur;
    fs_time_t t = e->t0 + (fs_time_t)j * e->base;
    if (e->kv_fs && j > 0)
        t += (fs_time_t)floor_sum(j, KV_FS_PER_US, e->kv_fs * e->n_run,
                                  e->kv_fs * e->ctx0 + KV_FS_PER_US / 2);
    return t;
}

/* Iterations of the current macro step (k of them) ending by now (up = 0:
 * at or before now) or started before now (up = 1: the first j whose end is
 * at or after now). */
uint64_t fs_svstep_macro_iters(const eng_t *e, fs_time_t now, int up)
{
    if (now <= e->t0)
        return 0;
    if (!e->kv_fs && !e->prof) {
        fs_time_t d = now - e->t0;
        uint64_t j = (uint64_t)(up ? (d + e->dur - 1) / e->dur : d / e->dur);
        return j > e->k ? e->k : j;
    }
    uint64_t lo = 0, hi = e->k;     /* end(j) grows with j: bisect [0, k] */
    while (lo < hi) {
        if (up) {           /* the least j with end(j) >= now (k if none) */
            uint64_t j = lo + (hi - lo) / 2;
            if (fs_svstep_macro_end(e, j) >= now)
                hi = j;
            else
                lo = j + 1;
        } else {            /* the largest j with end(j) <= now */
            uint64_t j = lo + (hi - lo + 1) / 2;
            if (fs_svstep_macro_end(e, j) <= now)
                lo = j;
            else
                hi = j - 1;
        }
    }
    return lo;
}

/* The iteration starting at e->t0 with p prefill tokens and b decoding
 * sequences (those scheduled): the context they attend to (ctx0), its
 * length without the context term (base) and with it (dur). */
void fs_svstep_times(const replica_t *r, eng_t *e, uint64_t p, uint32_t b)
{
    e->ctx0 = 0;
    if (e->kv_fs || e->prof)    /* the context its decoding sequences attend to */
        for (uint32_t k = 0; k < e->n_run; k++)
            if (e->run[k].sched && e->run[k].decoding)
                e->ctx0 += e->run[k].computed;
    if (e->prof) {
        e->base = e->dur = prof_us(e, p, b, e->ctx0);
    } else {
        e->base = iter_us(r, p, b);
        e->dur = e->base + ctx_us(e, e->ctx0);
    }
}
