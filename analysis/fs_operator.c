/*
 * fs_operator: the peak-hour and daily-peak serving figures of /summary
 * from the /service_buckets rows (fs_operator.h, docs/results.md).
 */
#include "fs_operator.h"

#include "../sim/fs_alloc.h"

#include <math.h>
#include <string.h>

typedef struct obucket {
    double replicas, gpus;  /* time averages, summed over the services */
    int full;               /* a whole bucket (not the run's last, cut one) */
    int seen;
} obucket_t;

struct fs_operator {
    double bucket_s, warmup_s;
    obucket_t *b;           /* by bucket index: start / bucket_s */
    size_t n, cap;
};

int fs_operator_create(double bucket_s, double warmup_s, fs_operator_t **out)
{
    *out = NULL;
    if (!(bucket_s > 0))
        return FS_EINVAL;
    fs_operator_t *o = fs_calloc(1, sizeof *o);
    if (!o)
        return FS_ENOMEM;
    o->bucket_s = bucket_s;
    o->warmup_s = warmup_s;
    *out = o;
    return 0;
}

void fs_operator_destroy(fs_operator_t *o)
{
    if (!o)
        return;
    fs_free(o->b);
    fs_free(o);
}

int fs_operator_add_bucket(fs_operator_t *o, const fs_svc_bucket_row_t *row)
{
    if (row->start + 1e-9 < o->warmup_s)
        return 0;
    double k = floor(row->start / o->bucket_s + 0.5);
    if (!(k >= 0) || k > 1e9)
        return 0;
    size_t i = (size_t)k;
    if (i >= o->n) {
        if (fs_grow((void **)&o->b, &o->cap, i + 1, sizeof *o->b))
            return FS_ENOMEM;
        memset(o->b + o->n, 0, (i + 1 - o->n) * sizeof *o->b);
        o->n = i + 1;
    }
    obucket_t *b = &o->b[i];
    int full = fabs((row->end - row->start) - o->bucket_s) <= 1e-6 * o->bucket_s;
    b->full = b->seen ? b->full && full : full;
    b->seen = 1;
    b->replicas += row->replicas;
    b->gpus += row->gpus;
    return 0;
}

void fs_operator_finish(const fs_operator_t *o, fs_summary_t *s)
{
    s->serving_replicas_peak = NAN;
    s->serving_gpus_peak = NAN;
    s->serving_gpus_daily_peak = NAN;
    s->serving_gpus_daily_swing = NAN;
    if (!o)
        return;
    double per_day = 86400.0 / o->bucket_s;
    size_t slots = 0;   /* buckets of a day, when the bucket divides it */
    if (per_day >= 1 && fabs(per_day - round(per_day)) < 1e-9)
        slots = (size_t)llround(per_day);
    double *sum = slots ? fs_calloc(slots, sizeof *sum) : NULL;
    size_t *cnt = slots ? fs_calloc(slots, sizeof *cnt) : NULL;
    if (slots && (!sum || !cnt))    /* no memory: the daily figures stay NaN */
        slots = 0;
    for (size_t i = 0; i < o->n; i++) {
        const obucket_t *b = &o->b[i];
        if (!b->seen || !b->full)
            continue;
        if (isnan(s->serving_replicas_peak) || b->replicas > s->serving_replicas_peak)
            s->serving_replicas_peak = b->replicas;
        if (isnan(s->serving_gpus_peak) || b->gpus > s->serving_gpus_peak)
            s->serving_gpus_peak = b->gpus;
        if (slots) {
            sum[i % slots] += b->gpus;
            cnt[i % slots]++;
        }
    }
    double hi = NAN, lo = NAN;
    for (size_t h = 0; h < slots; h++) {
        if (!cnt[h])
            continue;
        double mean = sum[h] / (double)cnt[h];
        if (isnan(hi) || mean > hi)
            hi = mean;
        if (isnan(lo) || mean < lo)
            lo = mean;
    }
    s->serving_gpus_daily_peak = hi;
    s->serving_gpus_daily_swing = hi - lo;
    fs_free(sum);
    fs_free(cnt);
}
