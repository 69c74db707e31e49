/*
 * fleetsim trace outages: capacity outages inferred from a log's recorded
 * utilization, written as an outage file for cluster.outages
 * (traces/fs_outages.h; docs/traces.md "Outage files").
 *
 * The rule: the trace's recorded runs ([rec_start, rec_end) x GPUs) give
 * the GPUs busy in each hour of the log (GPU-seconds / 3600).  An hour is
 * out when fewer than threshold x capacity GPUs were busy while at least
 * one job waited (its [submit, rec_start) overlaps the hour, and is over a
 * minute long): the log's
 * scheduler held capacity back that the jobs could not use -- maintenance,
 * a drain, a reservation.  Consecutive out hours make one outage; in it the
 * capacity left is the most GPUs busy in any of its hours (rounded up), the
 * rest is down: floor((capacity - left) / gpus_per_node) nodes, numbered
 * from 0.  Jobs without a recorded start or end are counted and said.
 */
#include "cmd_trace_int.h"

typedef struct oargs {
    const char *name;
    double capacity, threshold;
    unsigned gpn;
    double *busy;       /* [hours] mean GPUs busy */
    uint8_t *waiting;   /* [hours] a job waited */
    size_t hours;
    size_t n_out, h_out;
} oargs_t;

static int write_outages(FILE *f, void *ud, fs_error_t *err)
{
    (void)err;
    oargs_t *a = ud;
    double lim = a->threshold * a->capacity;
    fprintf(f, "# fleetsim trace outages %s --threshold %g --capacity %.0f --gpus-per-node %u\n"
               "# hours with fewer than %g x %.0f GPUs busy while a job waited (recorded);\n"
               "# nodes down = floor((capacity - most GPUs busy in the stretch) / gpus per node)\n"
               "start,end,nodes,cause\n",
            a->name, a->threshold, a->capacity, a->gpn, a->threshold, a->capacity);
    a->n_out = a->h_out = 0;
    for (size_t h = 0; h < a->hours;) {
        if (!(a->waiting[h] && a->busy[h] < lim)) {
            h++;
            continue;
        }
        size_t e = h;
        double peak = 0;
        while (e < a->hours && a->waiting[e] && a->busy[e] < lim) {
            peak = fmax(peak, a->busy[e]);
            e++;
        }
        double down = floor((a->capacity - ceil(peak)) / a->gpn);
        if (down >= 1) {
            fprintf(f, "%zu,%zu,0-%.0f,inferred\n", h * 3600, e * 3600, down - 1);
            a->n_out++;
            a->h_out += e - h;
        }
        h = e;
    }
    return 0;
}

/* Adds w x the overlap of [a, b) with each hour to v[]. */
static void spread(double *v, size_t hours, double a, double b, double w)
{
    for (size_t h = (size_t)(a / 3600.0); h < hours && (double)h * 3600.0 < b; h++) {
        double lo = fmax(a, (double)h * 3600.0), hi = fmin(b, (double)(h + 1) * 3600.0);
        if (hi > lo)
            v[h] += w * (hi - lo) / 3600.0;
    }
}

int trc_outage_records(fs_source_t *src, const char *name, trc_orec_t **out, size_t *n_out,
                       size_t *no_rec, fs_error_t *err)
{
    trc_orec_t *r = NULL;
    size_t n = 0, cap = 0;
    *no_rec = 0;
    fs_job_t *buf = fs_malloc(BATCH * sizeof *buf);
    int rc = 0;
    if (!buf)
        return fs_error_set(err, FS_ENOMEM, "out of memory");
    while (!rc) {
        size_t got = 0;
        if ((rc = fs_source_next(src, buf, BATCH, &got, err)) || !got)
            break;
        if (fs_grow((void **)&r, &cap, n + got, sizeof *r)) {
            rc = fs_error_set(err, FS_ENOMEM, "out of memory");
            break;
        }
        for (size_t i = 0; i < got; i++) {
            const fs_job_t *j = &buf[i];
            if (j->rec_start < 0 || j->rec_end < 0) {
                (*no_rec)++;
                continue;
            }
            if (j->rec_start < j->submit || j->rec_end < j->rec_start) {
                rc = fs_error_set(err, FS_EINVAL, "%s: job %llu: recorded %s (expected submit <= "
                                  "rec_start <= rec_end)", name, (unsigned long long)j->id,
                                  j->rec_start < j->submit ? "start before its submission"
                                                           : "end before its start");
                break;
            }
            r[n++] = (trc_orec_t){j->id, fs_time_to_s(j->submit), fs_time_to_s(j->rec_start),
                                  fs_time_to_s(j->rec_end), (double)fs_job_milli(j) / 1000.0,
                                  j->tenant};
        }
    }
    fs_free(buf);
    if (!rc && !n)
        rc = fs_error_set(err, FS_EINVAL, "%s: no job records both a start and an end (%zu "
                          "without): no utilization to infer outages from", name, *no_rec);
    if (rc) {
        fs_free(r);
        return rc;
    }
    *out = r;
    *n_out = n;
    return 0;
}

int trc_outages_write(const char *name, const trc_orec_t *r, size_t n, double capacity,
                      double threshold, unsigned gpn, const char *output, size_t *n_out,
                      size_t *h_out, size_t *hours, fs_error_t *err)
{
    oargs_t a = {.name = name, .capacity = capacity, .threshold = threshold, .gpn = gpn};
    double last = 0;
    for (size_t i = 0; i < n; i++)
        last = fmax(last, r[i].end);
    a.hours = (size_t)ceil(last / 3600.0);
    a.busy = fs_calloc(a.hours ? a.hours : 1, sizeof *a.busy);
    a.waiting = fs_calloc(a.hours ? a.hours : 1, sizeof *a.waiting);
    int rc = 0;
    if (!a.busy || !a.waiting)
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
    if (!rc) {
        for (size_t i = 0; i < n; i++) {
            spread(a.busy, a.hours, r[i].start, r[i].end, r[i].gpus);
            if (!(r[i].start - r[i].submit > 60))   /* a scheduler cycle is no wait */
                continue;
            for (size_t h = (size_t)(r[i].submit / 3600.0);
                 h < a.hours && (double)h * 3600.0 < r[i].start; h++)
                a.waiting[h] = 1;
        }
        rc = trc_write_out(output, write_outages, &a, err);
    }
    *n_out = a.n_out;
    *h_out = a.h_out;
    *hours = a.hours;
    fs_free(a.busy);
    fs_free(a.waiting);
    return rc;
}

int trc_do_outages(const topts_t *o, input_t *in, fs_error_t *err)
{
    trc_orec_t *r = NULL;
    size_t n = 0, no_rec = 0, n_out = 0, h_out = 0, hours = 0;
    int rc = trc_outage_records(in->src, in->name, &r, &n, &no_rec, err);
    if (!rc)
        rc = trc_outages_write(in->name, r, n, o->capacity, o->threshold, o->gpus_per_node,
                               o->output, &n_out, &h_out, &hours, err);
    if (!rc) {
        fprintf(stderr, "fleetsim trace outages: %zu outages, %zu h of %zu (%.1f%%) written to %s",
                n_out, h_out, hours, hours ? 100.0 * (double)h_out / (double)hours : 0.0,
                o->output);
        if (no_rec)
            fprintf(stderr, "; %zu jobs without a recorded start or end left out", no_rec);
        fprintf(stderr, "\n");
    }
    fs_free(r);
    return rc;
}
