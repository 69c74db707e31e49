#include "fs_swf.h"

#include <stdio.h>
#include <string.h>

#include "../sim/fs_alloc.h"
#include "fs_rdr.h"

enum {
    F_JOB, F_SUBMIT, F_WAIT, F_RUN, F_ALLOC, F_CPU, F_MEM, F_REQ_PROCS, F_REQ_TIME, F_REQ_MEM,
    F_STATUS, F_USER, F_GROUP, F_APP, F_QUEUE, F_PART, F_PREV, F_THINK, N_F
};
static const char *const fnames[N_F] = {
    "job", "submit", "wait", "run", "alloc_procs", "avg_cpu", "used_mem", "req_procs",
    "req_time", "req_mem", "status", "user", "group", "app", "queue", "partition",
    "prev_job", "think_time",
};
#define MAX_GPUS (UINT64_C(1) << 31)

typedef struct swf {
    uint64_t max_procs;     /* MaxProcs (0: not given) */
    uint64_t max_nodes;
    int64_t unix_start;     /* UnixStartTime (-1: not given) */
    int header_done;        /* a job line was seen: later ';' lines are plain comments */
} swf_t;

static int is_unknown(const fs_csv_field_t *f) { return f->len == 2 && memcmp(f->s, "-1", 2) == 0; }

/* "; Key: value" header comments that the reader uses. */
static int header_comment(fs_rdr_t *r, swf_t *s)
{
    const char *l = r->csv.line + 1;
    size_t n = r->csv.line_len - 1;
    while (n && (*l == ' ' || *l == '\t')) {
        l++;
        n--;
    }
    static const char *const keys[] = {"MaxProcs:", "MaxNodes:", "UnixStartTime:"};
    for (int k = 0; k < 3; k++) {
        size_t kl = strlen(keys[k]);
        if (n < kl || memcmp(l, keys[k], kl) != 0)
            continue;
        const char *v = l + kl;
        size_t vn = n - kl;
        while (vn && (*v == ' ' || *v == '\t')) {
            v++;
            vn--;
        }
        while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
            vn--;
        int64_t x;
        if (fs_rdr_i64(v, vn, &x) || x < 0) {
            char got[128];
            fs_rdr_show(got, sizeof got, v, vn);
            /* a bad header is fatal in both modes */
            return fs_rdr_fatal(r, FS_EINVAL, "field %.*s: expected a non-negative integer "
                                "(got '%s')", (int)kl - 1, keys[k], got);
        }
        if (k == 0)
            s->max_procs = (uint64_t)x;
        else if (k == 1)
            s->max_nodes = (uint64_t)x;
        else
            s->unix_start = x;
    }
    return 0;
}

static int pull(fs_rdr_t *r, fs_job_t *j)
{
    swf_t *s = r->fmt;
    int rc;
    for (;;) {
        rc = fs_csv_next_line(&r->csv, &r->error);
        if (rc < 0)
            r->fatal = 1;
        if (rc <= 0) {
            r->eof = rc == 0;
            return rc;
        }
        const char *l = r->csv.line;
        size_t i = 0;
        while (i < r->csv.line_len && (l[i] == ' ' || l[i] == '\t'))
            i++;
        if (i == r->csv.line_len)
            continue;
        if (l[i] == ';') {
            if (!s->header_done && (rc = header_comment(r, s)))
                return rc;
            continue;
        }
        break;
    }
    s->header_done = 1;
    if ((rc = fs_csv_split_blank(&r->csv, &r->error)))
        return fs_rdr_fatal(r, rc, "out of memory");
    if (r->csv.n_fields != N_F)
        return fs_rdr_row_error(r, "field count", "expected 18 fields (Standard Workload Format), "
                                "got %zu", r->csv.n_fields);
    const fs_csv_field_t *f = r->csv.fields;
    fs_job_init(j);
    fs_time_t wait = -1, run = -1, est = -1;
    uint64_t procs = 0, u;
    if ((rc = fs_rdr_get_uint(r, "job", &f[F_JOB], 0, UINT64_MAX, &j->id)) ||
        (rc = fs_rdr_get_time(r, "submit", &f[F_SUBMIT], &j->submit)))
        return rc;
    if (!is_unknown(&f[F_WAIT]) && (rc = fs_rdr_get_time(r, "wait", &f[F_WAIT], &wait)))
        return rc;
    if (!is_unknown(&f[F_RUN]) && (rc = fs_rdr_get_time(r, "run", &f[F_RUN], &run)))
        return rc;
    if (!is_unknown(&f[F_REQ_TIME]) &&
        (rc = fs_rdr_get_time(r, "req_time", &f[F_REQ_TIME], &est)))
        return rc;
    int which = -1;
    if (!is_unknown(&f[F_REQ_PROCS])) {
        if ((rc = fs_rdr_get_uint(r, "req_procs", &f[F_REQ_PROCS], 0, UINT64_MAX / 2, &procs)))
            return rc;
        which = F_REQ_PROCS;
    }
    if (procs == 0 && !is_unknown(&f[F_ALLOC])) {
        if ((rc = fs_rdr_get_uint(r, "alloc_procs", &f[F_ALLOC], 0, UINT64_MAX / 2, &procs)))
            return rc;
        which = F_ALLOC;
    }
    if (s->max_procs && procs > s->max_procs) {
        char what[80];
        snprintf(what, sizeof what, "at most MaxProcs (%llu) processors",
                 (unsigned long long)s->max_procs);
        return fs_rdr_field_error(r, fnames[which], what, f[which].s, f[which].len);
    }
    int status = -1;
    if (!is_unknown(&f[F_STATUS])) {
        if (fs_rdr_get_uint(r, "status", &f[F_STATUS], 0, 5, &u))
            return FS_EINVAL;
        status = (int)u;
    }
    int64_t user = -1;
    if (!is_unknown(&f[F_USER]) && (fs_rdr_i64(f[F_USER].s, f[F_USER].len, &user) || user < 0))
        return fs_rdr_field_error(r, "user", "a user number >= 0 or -1", f[F_USER].s,
                                  f[F_USER].len);
    /* A job cancelled before it started (status 5, no run time), with
     * workload.trace.cancelled: withdraw: pending for its wait time, the
     * time to its cancellation as the archive's logs record it. */
    int withdraw = status == 5 && run <= 0 && r->opts.cancelled == FS_CANCELLED_WITHDRAW;
    if (withdraw && wait < 0)
        return fs_rdr_skip(r, "cancelled, cancel time unknown (wait -1)");
    if (withdraw && procs > 0)
        run = wait;
    /* Jobs that cannot be replayed: counted, never dropped silently. */
    if (run < 0)
        return fs_rdr_skip(r, "run time unknown (-1)");
    if (run == 0 && !withdraw)
        return fs_rdr_skip(r, "run time 0");
    if (procs == 0)
        return fs_rdr_skip(r, which < 0 ? "processors unknown (-1)" : "processors 0");
    uint64_t gpus = (procs + r->opts.procs_per_gpu - 1) / r->opts.procs_per_gpu;
    if (gpus > MAX_GPUS)
        return fs_rdr_field_error(r, fnames[which], "at most 2^31 GPUs after procs_per_gpu",
                                  f[which].s, f[which].len);
    j->gpus = (uint32_t)gpus;
    j->duration = fs_rdr_scale(r, run);
    if (est > 0)
        j->estimate = fs_rdr_scale(r, est);
    if (withdraw) {
        j->flags |= FS_JOB_WITHDRAW;
        j->rec_end = j->submit + wait;  /* cancelled; it never started */
    } else if (wait >= 0) {
        j->rec_start = j->submit + wait;
        j->rec_end = j->rec_start + run;
    }
    switch (status) {
    case 1: case 3: j->rec_state = FS_JOB_REC_COMPLETED; break;
    case 0: case 4: j->rec_state = FS_JOB_REC_FAILED; break;
    case 5: j->rec_state = FS_JOB_REC_KILLED; break;
    default: break;
    }
    if (user >= 0) {
        char name[32];
        int nl = snprintf(name, sizeof name, "u%lld", (long long)user);
        if ((rc = fs_rdr_intern(r, &r->tenants, name, (size_t)nl, &j->tenant)))
            return rc;
    }
    return 0;
}

static int header(fs_rdr_t *r, fs_error_t *err)
{
    swf_t *s = fs_calloc(1, sizeof *s);
    if (!s)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", r->csv.path);
    s->unix_start = -1;
    r->fmt = s;
    r->fmt_free = fs_free;
    r->pull = pull;
    r->submit_field = "submit";
    if (r->opts.cancelled == FS_CANCELLED_RUN)
        return fs_error_set(err, FS_EINVAL, "%s: workload.trace.cancelled: run is not possible for "
                            "swf (a job cancelled before it started has no run time): skip or "
                            "withdraw", r->csv.path);
    return 0;
}

static const fs_source_ops_t ops = FS_RDR_OPS("swf");

int fs_swf_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                fs_error_t *err)
{
    return fs_rdr_open(&ops, path, opts, header, out, err);
}
