#include "fs_tiresias.h"

#include "../sim/fs_alloc.h"
#include "fs_rdr.h"

enum { C_ID, C_GPUS, C_SUBMIT, C_ITER, C_MODEL, C_DURATION, C_INTERVAL, N_C };
static const char *const names[N_C] = {
    "job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration", "interval",
};
#define REQUIRED ((1u << C_ID) | (1u << C_GPUS) | (1u << C_SUBMIT) | (1u << C_DURATION))
#define MAX_GPUS (UINT64_C(1) << 31)

typedef struct tiresias {
    int col[N_C];
    size_t width;
} tiresias_t;

static int pull(fs_rdr_t *r, fs_job_t *j)
{
    tiresias_t *t = r->fmt;
    int rc = fs_rdr_next_line(r, "#");
    if (rc <= 0) {
        r->eof = rc == 0;
        return rc;
    }
    if ((rc = fs_rdr_split(r, ',', t->width)))
        return rc;
    const fs_csv_field_t *f = r->csv.fields;
    fs_job_init(j);
    uint64_t u;
    if ((rc = fs_rdr_get_uint(r, "job_id", &f[t->col[C_ID]], 0, UINT64_MAX, &j->id)) ||
        (rc = fs_rdr_get_uint(r, "num_gpu", &f[t->col[C_GPUS]], 1, MAX_GPUS, &u)) ||
        (rc = fs_rdr_get_time(r, "submit_time", &f[t->col[C_SUBMIT]], &j->submit)) ||
        (rc = fs_rdr_get_run(r, "duration", &f[t->col[C_DURATION]], &j->duration)))
        return rc;
    j->gpus = (uint32_t)u;
    if (t->col[C_ITER] >= 0 && f[t->col[C_ITER]].len &&
        (rc = fs_rdr_get_uint(r, "iterations", &f[t->col[C_ITER]], 0, UINT64_MAX, &u)))
        return rc;
    if (t->col[C_INTERVAL] >= 0 && f[t->col[C_INTERVAL]].len) {
        fs_time_t iv;
        if ((rc = fs_rdr_get_time(r, "interval", &f[t->col[C_INTERVAL]], &iv)))
            return rc;
    }
    if (t->col[C_MODEL] >= 0) {
        const fs_csv_field_t *m = &f[t->col[C_MODEL]];
        if ((rc = fs_rdr_get_name(r, "model_name", m)) ||
            (rc = fs_rdr_intern(r, &r->tenants, m->s, m->len, &j->tenant)))
            return rc;
        j->job_class = j->tenant < 0 ? 0 : j->tenant;
    }
    return 0;
}

static int header(fs_rdr_t *r, fs_error_t *err)
{
    tiresias_t *t = fs_calloc(1, sizeof *t);
    if (!t)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", r->csv.path);
    r->fmt = t;
    r->fmt_free = fs_free;
    r->pull = pull;
    r->submit_field = "submit_time";
    return fs_rdr_header(r, ',', names, N_C, REQUIRED, t->col, &t->width, err);
}

static const fs_source_ops_t ops = FS_RDR_OPS("tiresias");

int fs_tiresias_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                     fs_error_t *err)
{
    return fs_rdr_open(&ops, path, opts, header, out, err);
}
