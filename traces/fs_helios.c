#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strncasecmp */
#endif
#include "fs_helios.h"

#include <string.h>
#include <strings.h>

#include "../sim/fs_alloc.h"
#include "fs_rdr.h"

enum {
    C_ID, C_USER, C_VC, C_GPUS, C_STATE, C_SUBMIT, C_START, C_END, C_DURATION, N_C
};
static const char *const names[N_C] = {
    "job_id", "user", "vc", "gpu_num", "state", "submit_time", "start_time", "end_time",
    "duration",
};
#define REQUIRED ((1u << C_ID) | (1u << C_GPUS) | (1u << C_STATE) | (1u << C_SUBMIT))
#define MAX_GPUS (UINT64_C(1) << 31)

typedef struct helios {
    int col[N_C];
    size_t width;
    int tenant_col;     /* C_VC (helios) or C_USER (acme) */
    uint64_t row;
} helios_t;

static const struct {
    const char *name;
    int state;
} states[] = {
    {"COMPLETED", FS_JOB_REC_COMPLETED}, {"CANCELLED", FS_JOB_REC_KILLED},
    {"FAILED", FS_JOB_REC_FAILED},       {"TIMEOUT", FS_JOB_REC_TIMEOUT},
    {"NODE_FAIL", FS_JOB_REC_NODE_FAIL}, {"OUT_OF_MEMORY", FS_JOB_REC_FAILED},
    {"RUNNING", FS_JOB_REC_RUNNING},
};

static int get_when(fs_rdr_t *r, const char *field, const fs_csv_field_t *f, fs_time_t *out)
{
    if (fs_rdr_datetime(f->s, f->len, out) || *out < 0)
        return fs_rdr_field_error(r, field, "a date and time YYYY-MM-DD HH:MM:SS (optionally "
                                  "with a UTC offset) not before 1970", f->s, f->len);
    return 0;
}

static int pull(fs_rdr_t *r, fs_job_t *j)
{
    helios_t *h = r->fmt;
    int rc = fs_rdr_next_line(r, "#");
    if (rc <= 0) {
        r->eof = rc == 0;
        return rc;
    }
    h->row++;
    if ((rc = fs_rdr_split(r, ',', h->width)))
        return rc;
    const fs_csv_field_t *f = r->csv.fields, *x;
    fs_job_init(j);
    uint64_t gpus;
    x = &f[h->col[C_ID]];
    if (fs_rdr_u64(x->s, x->len, &j->id)) {
        if (x->len == 0 || !fs_rdr_valid_name(x->s, x->len))
            return fs_rdr_field_error(r, "job_id", "a job id", x->s, x->len);
        j->id = h->row;     /* textual ids: the row number */
    }
    if ((rc = fs_rdr_get_uint(r, "gpu_num", &f[h->col[C_GPUS]], 0, MAX_GPUS, &gpus)) ||
        (rc = get_when(r, "submit_time", &f[h->col[C_SUBMIT]], &j->submit)))
        return rc;
    x = &f[h->col[C_STATE]];
    int st = -1;
    for (size_t k = 0; k < sizeof states / sizeof states[0]; k++)
        if (strlen(states[k].name) == x->len && strncasecmp(states[k].name, x->s, x->len) == 0)
            st = states[k].state;
    if (st < 0)
        return fs_rdr_field_error(r, "state", "one of COMPLETED, CANCELLED, FAILED, TIMEOUT, "
                                  "NODE_FAIL, OUT_OF_MEMORY, RUNNING", x->s, x->len);
    j->rec_state = st;
    if (h->col[C_START] >= 0 && (x = &f[h->col[C_START]])->len) {
        if ((rc = get_when(r, "start_time", x, &j->rec_start)))
            return rc;
        if (j->rec_start < j->submit)
            return fs_rdr_field_error(r, "start_time", "a time >= submit_time", x->s, x->len);
    }
    if (h->col[C_END] >= 0 && (x = &f[h->col[C_END]])->len) {
        if ((rc = get_when(r, "end_time", x, &j->rec_end)))
            return rc;
        fs_time_t from = j->rec_start >= 0 ? j->rec_start : j->submit;
        if (j->rec_end < from)
            return fs_rdr_field_error(r, "end_time", j->rec_start >= 0 ? "a time >= start_time"
                                      : "a time >= submit_time", x->s, x->len);
    }
    fs_time_t run = -1;
    if (h->col[C_DURATION] >= 0 && (x = &f[h->col[C_DURATION]])->len) {
        if ((rc = fs_rdr_get_time(r, "duration", x, &run)))
            return rc;
    } else if (j->rec_start >= 0 && j->rec_end >= 0) {
        run = j->rec_end - j->rec_start;
    } else {
        return fs_rdr_field_error(r, "duration", "a run time (or start_time and end_time)",
                                  "", 0);
    }
    const fs_csv_field_t *ten = h->col[h->tenant_col] >= 0 ? &f[h->col[h->tenant_col]] : NULL;
    if (ten && (rc = fs_rdr_get_name(r, names[h->tenant_col], ten)))
        return rc;
    if (gpus == 0) {
        if (r->opts.cpu_only != FS_CPU_ONLY_SKIP)
            return fs_rdr_field_error(r, "gpu_num", "a GPU count >= 1 (jobs without GPUs are "
                                      "refused: workload.trace.cpu_only = error; place is for "
                                    "openb pod lists)",
                                      f[h->col[C_GPUS]].s, f[h->col[C_GPUS]].len);
        return fs_rdr_skip(r, "cpu_only (gpu_num 0)");
    }
    if (run == 0)
        return fs_rdr_skip(r, "run time 0");
    j->gpus = (uint32_t)gpus;
    j->duration = fs_rdr_scale(r, run);
    if (ten && (rc = fs_rdr_intern(r, &r->tenants, ten->s, ten->len, &j->tenant)))
        return rc;
    return 0;
}

static int header_common(fs_rdr_t *r, int tenant_col, fs_error_t *err)
{
    helios_t *h = fs_calloc(1, sizeof *h);
    if (!h)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", r->csv.path);
    h->tenant_col = tenant_col;
    r->fmt = h;
    r->fmt_free = fs_free;
    r->pull = pull;
    r->submit_field = "submit_time";
    return fs_rdr_header(r, ',', names, N_C, REQUIRED, h->col, &h->width, err);
}

static int header_helios(fs_rdr_t *r, fs_error_t *err) { return header_common(r, C_VC, err); }
static int header_acme(fs_rdr_t *r, fs_error_t *err) { return header_common(r, C_USER, err); }

static const fs_source_ops_t helios_ops = FS_RDR_OPS("helios");
static const fs_source_ops_t acme_ops = FS_RDR_OPS("acme");

int fs_helios_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                   fs_error_t *err)
{
    return fs_rdr_open(&helios_ops, path, opts, header_helios, out, err);
}

int fs_helios_open_acme(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                        fs_error_t *err)
{
    return fs_rdr_open(&acme_ops, path, opts, header_acme, out, err);
}
