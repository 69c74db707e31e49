#include "fs_openb.h"

#include <string.h>

#include "../sim/fs_alloc.h"
#include "fs_rdr.h"

enum {
    C_NAME, C_CPU, C_MEM, C_GPUS, C_MILLI, C_SPEC, C_QOS, C_PHASE, C_CREATE, C_DELETE, C_SCHED,
    N_C
};
static const char *const names[N_C] = {
    "name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase",
    "creation_time", "deletion_time", "scheduled_time",
};
#define REQUIRED ((1u << C_NAME) | (1u << C_GPUS) | (1u << C_MILLI))
#define MAX_GPUS (UINT64_C(1) << 31)

typedef struct openb {
    int col[N_C];
    size_t width;
    int timed;          /* creation_time and deletion_time present */
    uint64_t row;       /* data rows read (the job id) */
} openb_t;

static const char *const qos_names[] = {"BE", "Burstable", "LS", "Guaranteed"};

static int match(const fs_csv_field_t *f, const char *s)
{
    return strlen(s) == f->len && memcmp(s, f->s, f->len) == 0;
}

static const fs_csv_field_t *opt_field(const openb_t *o, const fs_csv_field_t *f, int c)
{
    return o->col[c] >= 0 ? &f[o->col[c]] : NULL;
}

static int pull(fs_rdr_t *r, fs_job_t *j)
{
    openb_t *o = r->fmt;
    int rc = fs_rdr_next_line(r, "#");
    if (rc <= 0) {
        r->eof = rc == 0;
        return rc;
    }
    o->row++;
    if ((rc = fs_rdr_split(r, ',', o->width)))
        return rc;
    const fs_csv_field_t *f = r->csv.fields, *x;
    fs_job_init(j);
    j->id = o->row;
    uint64_t gpus, milli;
    if ((rc = fs_rdr_get_name(r, "name", &f[o->col[C_NAME]])) ||
        (rc = fs_rdr_get_uint(r, "num_gpu", &f[o->col[C_GPUS]], 0, MAX_GPUS, &gpus)) ||
        (rc = fs_rdr_get_uint(r, "gpu_milli", &f[o->col[C_MILLI]], 0, 1000, &milli)))
        return rc;
    if (gpus == 0 && r->opts.cpu_only != FS_CPU_ONLY_PLACE) {
        if (r->opts.cpu_only == FS_CPU_ONLY_ERROR)
            return fs_rdr_field_error(r, "num_gpu", "a GPU count >= 1 (CPU-only pods are "
                                      "refused: workload.trace.cpu_only = error)",
                                      f[o->col[C_GPUS]].s, f[o->col[C_GPUS]].len);
        return fs_rdr_skip(r, "cpu_only (num_gpu 0)");
    }
    if (gpus == 0 && milli != 0)
        return fs_rdr_field_error(r, "gpu_milli", "0 when num_gpu is 0", f[o->col[C_MILLI]].s,
                                  f[o->col[C_MILLI]].len);
    if (gpus == 1 && milli == 0)
        return fs_rdr_field_error(r, "gpu_milli", "an integer in 1..1000 when num_gpu is 1",
                                  f[o->col[C_MILLI]].s, f[o->col[C_MILLI]].len);
    if (gpus > 1 && milli != 1000)
        return fs_rdr_field_error(r, "gpu_milli", "1000 when num_gpu > 1",
                                  f[o->col[C_MILLI]].s, f[o->col[C_MILLI]].len);
    j->gpus = (uint32_t)gpus;
    j->gpu_milli = gpus == 0 ? FS_GPU_MILLI_WHOLE : (uint32_t)milli;
    j->flags |= FS_JOB_SINGLE_NODE;   /* a pod: one node */
    uint64_t v;
    if ((x = opt_field(o, f, C_CPU)) && x->len) {
        if ((rc = fs_rdr_get_uint(r, "cpu_milli", x, 0, UINT32_MAX, &v)))
            return rc;
        j->cpu_milli = (uint32_t)v;
    }
    if ((x = opt_field(o, f, C_MEM)) && x->len) {
        if ((rc = fs_rdr_get_uint(r, "memory_mib", x, 0, UINT32_MAX, &v)))
            return rc;
        j->mem_mib = (uint32_t)v;
    }
    if (gpus == 0 && j->cpu_milli == 0 && j->mem_mib == 0)
        return fs_rdr_field_error(r, "cpu_milli", "a CPU or memory request for a pod without "
                                  "GPUs (workload.trace.cpu_only: place)",
                                  x ? x->s : "", x ? x->len : 0);
    const fs_csv_field_t *spec = opt_field(o, f, C_SPEC), *qos = opt_field(o, f, C_QOS);
    if (spec && (rc = fs_rdr_get_name(r, "gpu_spec", spec)))
        return rc;
    int q = -1;
    if (qos && qos->len) {
        for (int k = 0; k < 4; k++)
            if (match(qos, qos_names[k]))
                q = k;
        if (q < 0)
            return fs_rdr_field_error(r, "qos", "one of LS, BE, Burstable, Guaranteed", qos->s,
                                      qos->len);
        j->priority = q == 0 ? 0 : q == 1 ? 1 : q == 2 ? 2 : 3;
    }
    if ((x = opt_field(o, f, C_PHASE)) && x->len) {
        if (match(x, "Succeeded"))
            j->rec_state = FS_JOB_REC_COMPLETED;
        else if (match(x, "Failed"))
            j->rec_state = FS_JOB_REC_FAILED;
        else if (match(x, "Running"))
            j->rec_state = FS_JOB_REC_RUNNING;
        else if (match(x, "Pending"))
            j->rec_state = FS_JOB_REC_KILLED;   /* deleted before it was scheduled */
        else
            return fs_rdr_field_error(r, "pod_phase", "one of Succeeded, Failed, Running, "
                                      "Pending", x->s, x->len);
    }
    if (o->timed) {
        fs_time_t del;
        if ((rc = fs_rdr_get_time(r, "creation_time", &f[o->col[C_CREATE]], &j->submit)) ||
            (rc = fs_rdr_get_time(r, "deletion_time", &f[o->col[C_DELETE]], &del)))
            return rc;
        if ((x = opt_field(o, f, C_SCHED)) && x->len) {
            if ((rc = fs_rdr_get_time(r, "scheduled_time", x, &j->rec_start)))
                return rc;
            if (j->rec_start < j->submit)
                return fs_rdr_field_error(r, "scheduled_time", "a time >= creation_time", x->s,
                                          x->len);
        }
        /* a pod deleted while Pending (never scheduled): workload.trace.cancelled */
        if (j->rec_state == FS_JOB_REC_KILLED && j->rec_start < 0) {
            if (r->opts.cancelled == FS_CANCELLED_SKIP)
                return fs_rdr_skip(r, "deleted while Pending (cancelled: skip)");
            if (r->opts.cancelled == FS_CANCELLED_WITHDRAW)
                j->flags |= FS_JOB_WITHDRAW;
        }
        fs_time_t from = j->rec_start >= 0 ? j->rec_start : j->submit;
        if (del < from)
            return fs_rdr_field_error(r, "deletion_time", j->rec_start >= 0
                                      ? "a time >= scheduled_time" : "a time >= creation_time",
                                      f[o->col[C_DELETE]].s, f[o->col[C_DELETE]].len);
        j->rec_end = del;
        j->duration = fs_rdr_scale(r, del - from);  /* 0 (under 1 s) becomes 1 us */
    } else {
        j->submit = 0;
        j->duration = fs_rdr_scale(r, r->opts.default_duration);
    }
    /* Names last: a row refused above interns nothing. */
    if (spec && (rc = fs_rdr_intern(r, &r->gpu_types, spec->s, spec->len, &j->gpu_type)))
        return rc;
    if (q >= 0 && (rc = fs_rdr_intern(r, &r->tenants, qos->s, qos->len, &j->tenant)))
        return rc;
    return 0;
}

static int header(fs_rdr_t *r, fs_error_t *err)
{
    openb_t *o = fs_calloc(1, sizeof *o);
    if (!o)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", r->csv.path);
    r->fmt = o;
    r->fmt_free = fs_free;
    r->pull = pull;
    r->submit_field = "creation_time";
    int rc = fs_rdr_header(r, ',', names, N_C, REQUIRED, o->col, &o->width, err);
    if (rc)
        return rc;
    int has_c = o->col[C_CREATE] >= 0, has_d = o->col[C_DELETE] >= 0;
    if (has_c != has_d)
        return fs_error_set(err, FS_EINVAL, "%s:%llu: missing required column '%s' (creation_time "
                            "and deletion_time come together)", r->csv.path,
                            (unsigned long long)r->csv.line_no,
                            has_c ? "deletion_time" : "creation_time");
    o->timed = has_c;
    if (!o->timed && r->opts.default_duration <= 0)
        return fs_error_set(err, FS_EINVAL, "%s:%llu: a pod list without creation_time and "
                            "deletion_time records no run times: set "
                            "workload.trace.default_duration", r->csv.path,
                            (unsigned long long)r->csv.line_no);
    return 0;
}

static const fs_source_ops_t ops = FS_RDR_OPS("openb");

int fs_openb_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                  fs_error_t *err)
{
    return fs_rdr_open(&ops, path, opts, header, out, err);
}
