#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strncasecmp */
#endif
#include "fs_sacct.h"

#include <string.h>
#include <strings.h>

#include "../sim/fs_alloc.h"
#include "fs_rdr.h"

enum {
    C_ID, C_USER, C_ACCOUNT, C_PARTITION, C_QOS, C_SUBMIT, C_START, C_END, C_TIMELIMIT, C_TRES,
    C_STATE, C_REQTRES, N_C
};
static const char *const names[N_C] = {
    "JobID", "User", "Account", "Partition", "QOS", "Submit", "Start", "End", "Timelimit",
    "AllocTRES", "State", "ReqTRES",
};
#define REQUIRED ((1u << C_ID) | (1u << C_SUBMIT) | (1u << C_START) | (1u << C_END) | \
                  (1u << C_TRES) | (1u << C_STATE))
#define MAX_GPUS (UINT64_C(1) << 31)

typedef struct sacct {
    int col[N_C];
    size_t width;
    uint64_t row;
} sacct_t;

static const struct {
    const char *name;
    int state;
} states[] = {
    {"COMPLETED", FS_JOB_REC_COMPLETED}, {"CANCELLED", FS_JOB_REC_KILLED},
    {"FAILED", FS_JOB_REC_FAILED},       {"TIMEOUT", FS_JOB_REC_TIMEOUT},
    {"NODE_FAIL", FS_JOB_REC_NODE_FAIL}, {"OUT_OF_MEMORY", FS_JOB_REC_FAILED},
    {"BOOT_FAIL", FS_JOB_REC_FAILED},    {"DEADLINE", FS_JOB_REC_TIMEOUT},
    {"PREEMPTED", FS_JOB_REC_KILLED},    {"REVOKED", FS_JOB_REC_KILLED},
    {"RUNNING", FS_JOB_REC_RUNNING},     {"PENDING", FS_JOB_REC_UNKNOWN},
    {"REQUEUED", FS_JOB_REC_UNKNOWN},    {"SUSPENDED", FS_JOB_REC_UNKNOWN},
    {"RESIZING", FS_JOB_REC_UNKNOWN},
};

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Unsigned decimal s[0..n) (n >= 1) -> *v; -1 if not digits or too big. */
static int num(const char *s, size_t n, uint64_t *v)
{
    if (n == 0 || n > 12)
        return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return -1;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    *v = x;
    return 0;
}

int fs_slurm_time(const char *s, size_t n, fs_time_t *out)
{
    uint64_t d = 0, part[3] = {0, 0, 0};
    const char *dash = memchr(s, '-', n);
    size_t i = 0, k = 0;
    if (dash) {
        if (num(s, (size_t)(dash - s), &d))
            return -1;
        i = (size_t)(dash - s) + 1;
    }
    for (;;) {          /* up to three ':'-separated numbers */
        size_t j = i;
        while (j < n && s[j] != ':')
            j++;
        if (k == 3 || num(s + i, j - i, &part[k++]))
            return -1;
        if (j == n)
            break;
        i = j + 1;
    }
    uint64_t sec;
    if (dash)           /* D-H, D-H:M, D-H:M:S */
        sec = d * 86400 + part[0] * 3600 + part[1] * 60 + part[2];
    else if (k == 1)    /* M */
        sec = part[0] * 60;
    else if (k == 2)    /* M:S */
        sec = part[0] * 60 + part[1];
    else                /* H:M:S */
        sec = part[0] * 3600 + part[1] * 60 + part[2];
    if (sec > (uint64_t)(FS_TIME_MAX_INPUT / FS_US_PER_S))
        return -1;
    *out = (fs_time_t)sec * FS_US_PER_S;
    return 0;
}

static int get_when(fs_rdr_t *r, const char *field, const fs_csv_field_t *f, fs_time_t *out)
{
    if (fs_rdr_datetime(f->s, f->len, out) || *out < 0)
        return fs_rdr_field_error(r, field, "a date and time YYYY-MM-DDTHH:MM:SS not before "
                                  "1970, or Unknown", f->s, f->len);
    return 0;
}

static int unknown(const fs_csv_field_t *f)
{
    return f->len == 0 || (f->len == 7 && strncasecmp(f->s, "Unknown", 7) == 0) ||
           (f->len == 4 && strncasecmp(f->s, "None", 4) == 0);
}

/* AllocTRES "billing=8,cpu=8,gres/gpu:a100=4,gres/gpu=4,mem=64G,node=1":
 * *gpus from gres/gpu (else the typed entries summed), *type and *tlen the first
 * typed entry's TYPE (NULL: none).  0, or a field error. */
static int tres_gpus(fs_rdr_t *r, const char *field, const fs_csv_field_t *f, uint64_t *gpus,
                     const char **type, size_t *tlen)
{
    uint64_t plain = 0, typed = 0;
    int have_plain = 0;
    *type = NULL;
    *tlen = 0;
    const char *s = f->s, *end = f->s + f->len;
    while (s < end) {
        const char *e = memchr(s, ',', (size_t)(end - s));
        if (!e)
            e = end;
        const char *eq = memchr(s, '=', (size_t)(e - s));
        if (!eq)
            return fs_rdr_field_error(r, field, "TRES=COUNT entries separated by ',' "
                                      "(e.g. cpu=8,gres/gpu=4,mem=64G,node=1)", f->s, f->len);
        size_t kl = (size_t)(eq - s);
        if (kl >= 8 && strncasecmp(s, "gres/gpu", 8) == 0 && (kl == 8 || s[8] == ':')) {
            uint64_t v;
            if (num(eq + 1, (size_t)(e - eq - 1), &v) || v > MAX_GPUS)
                return fs_rdr_field_error(r, field, "a GPU count from 0 to 2^31 after "
                                          "gres/gpu=", f->s, f->len);
            if (kl == 8) {
                plain = v;
                have_plain = 1;
            } else {
                typed += v;
                if (!*type) {
                    *type = s + 9;
                    *tlen = kl - 9;
                }
            }
        }
        s = e + 1;
    }
    *gpus = have_plain ? plain : typed;
    if (*gpus > MAX_GPUS)
        return fs_rdr_field_error(r, field, "at most 2^31 GPUs", f->s, f->len);
    return 0;
}

/* Timelimit -> the estimate (none: UNLIMITED, Partition_Limit, empty). */
static int timelimit(fs_rdr_t *r, const sacct_t *h, fs_job_t *j)
{
    const fs_csv_field_t *x;
    if (h->col[C_TIMELIMIT] >= 0 && (x = &r->csv.fields[h->col[C_TIMELIMIT]])->len &&
        !(x->len == 9 && strncasecmp(x->s, "UNLIMITED", 9) == 0) &&
        !(x->len == 15 && strncasecmp(x->s, "Partition_Limit", 15) == 0)) {
        fs_time_t lim;
        if (fs_slurm_time(x->s, x->len, &lim))
            return fs_rdr_field_error(r, "Timelimit", "a Slurm time limit ([D-]H:M:S, M, M:S, "
                                      "D-H, D-H:M), UNLIMITED or Partition_Limit", x->s, x->len);
        if (lim > 0)
            j->estimate = fs_rdr_scale(r, lim);
    }
    return 0;
}

/* The job's tenant field (Account, else User; NULL: none), checked. */
static int tenant_field(fs_rdr_t *r, const sacct_t *h, const fs_csv_field_t **ten)
{
    const fs_csv_field_t *f = r->csv.fields;
    *ten = NULL;
    if (h->col[C_ACCOUNT] >= 0 && f[h->col[C_ACCOUNT]].len)
        *ten = &f[h->col[C_ACCOUNT]];
    else if (h->col[C_USER] >= 0 && f[h->col[C_USER]].len)
        *ten = &f[h->col[C_USER]];
    return *ten ? fs_rdr_get_name(r, *ten == &f[h->col[C_ACCOUNT]] ? "Account" : "User", *ten) : 0;
}

/* A job cancelled while pending (State CANCELLED, Start Unknown) with
 * workload.trace.cancelled: withdraw: pending from Submit to End, its
 * cancellation.  Slurm allocates nothing to such a job (AllocTRES is
 * empty): its GPUs come from ReqTRES when the column is there. */
static int cancelled_pending(fs_rdr_t *r, const sacct_t *h, fs_job_t *j, uint64_t gpus,
                             const char *type, size_t tlen)
{
    const fs_csv_field_t *f = r->csv.fields, *x = &f[h->col[C_END]], *ten;
    int rc;
    fs_time_t end;
    if (unknown(x))
        return fs_rdr_skip(r, "cancelled, cancel time unknown (End Unknown)");
    if ((rc = get_when(r, "End", x, &end)))
        return rc;
    if (end < j->submit)
        return fs_rdr_field_error(r, "End", "a time >= Submit", x->s, x->len);
    if ((rc = timelimit(r, h, j)))
        return rc;
    if (gpus == 0 && h->col[C_REQTRES] >= 0 &&
        (rc = tres_gpus(r, "ReqTRES", &f[h->col[C_REQTRES]], &gpus, &type, &tlen)))
        return rc;
    if ((rc = tenant_field(r, h, &ten)))
        return rc;
    if (gpus == 0) {
        if (r->opts.cpu_only != FS_CPU_ONLY_SKIP)
            return fs_rdr_field_error(r, "ReqTRES", "a gres/gpu count >= 1 (jobs without GPUs "
                                      "are refused: workload.trace.cpu_only = error)",
                                      h->col[C_REQTRES] >= 0 ? f[h->col[C_REQTRES]].s : "",
                                      h->col[C_REQTRES] >= 0 ? f[h->col[C_REQTRES]].len : 0);
        return fs_rdr_skip(r, "cpu_only (no gres/gpu in Alloc/ReqTRES)");
    }
    j->gpus = (uint32_t)gpus;
    j->rec_end = end;
    j->flags |= FS_JOB_WITHDRAW;
    j->duration = fs_rdr_scale(r, end - j->submit);     /* pending until cancelled */
    if (ten && (rc = fs_rdr_intern(r, &r->tenants, ten->s, ten->len, &j->tenant)))
        return rc;
    if (type && tlen && (rc = fs_rdr_intern(r, &r->gpu_types, type, tlen, &j->gpu_type)))
        return rc;
    return 0;
}

static int pull(fs_rdr_t *r, fs_job_t *j)
{
    sacct_t *h = r->fmt;
    int rc = fs_rdr_next_line(r, NULL);
    if (rc <= 0) {
        r->eof = rc == 0;
        return rc;
    }
    h->row++;
    if ((rc = fs_rdr_split(r, '|', h->width)))
        return rc;
    const fs_csv_field_t *f = r->csv.fields, *x;
    fs_job_init(j);
    x = &f[h->col[C_ID]];
    if (fs_rdr_u64(x->s, x->len, &j->id)) {
        if (x->len == 0 || !fs_rdr_valid_name(x->s, x->len))
            return fs_rdr_field_error(r, "JobID", "a job id", x->s, x->len);
        j->id = h->row;     /* 123_4, 123+0: the row number */
    }
    if ((rc = get_when(r, "Submit", &f[h->col[C_SUBMIT]], &j->submit)))
        return rc;
    x = &f[h->col[C_STATE]];
    size_t wl = 0;          /* "CANCELLED by 1234": the first word */
    while (wl < x->len && x->s[wl] != ' ')
        wl++;
    int st = -1;
    for (size_t k = 0; k < sizeof states / sizeof states[0]; k++)
        if (strlen(states[k].name) == wl && strncasecmp(states[k].name, x->s, wl) == 0)
            st = states[k].state;
    if (st < 0)
        return fs_rdr_field_error(r, "State", "a Slurm job state (COMPLETED, FAILED, CANCELLED, "
                                  "TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED, RUNNING, "
                                  "PENDING, ...)", x->s, x->len);
    j->rec_state = (uint8_t)st;
    int cancelled = wl == 9 && strncasecmp(x->s, "CANCELLED", 9) == 0;
    uint64_t gpus = 0;
    const char *type = NULL;
    size_t tlen = 0;
    if ((rc = tres_gpus(r, "AllocTRES", &f[h->col[C_TRES]], &gpus, &type, &tlen)))
        return rc;
    x = &f[h->col[C_START]];
    if (unknown(x) && cancelled && r->opts.cancelled == FS_CANCELLED_WITHDRAW)
        return cancelled_pending(r, h, j, gpus, type, tlen);
    if (unknown(x))
        return fs_rdr_skip(r, "never started (Start Unknown)");
    if ((rc = get_when(r, "Start", x, &j->rec_start)))
        return rc;
    if (j->rec_start < j->submit)
        return fs_rdr_field_error(r, "Start", "a time >= Submit", x->s, x->len);
    x = &f[h->col[C_END]];
    if (unknown(x))
        return fs_rdr_skip(r, "still running (End Unknown)");
    if ((rc = get_when(r, "End", x, &j->rec_end)))
        return rc;
    if (j->rec_end < j->rec_start)
        return fs_rdr_field_error(r, "End", "a time >= Start", x->s, x->len);
    if ((rc = timelimit(r, h, j)))
        return rc;
    const fs_csv_field_t *ten;
    if ((rc = tenant_field(r, h, &ten)))
        return rc;
    if (gpus == 0) {
        if (r->opts.cpu_only != FS_CPU_ONLY_SKIP)
            return fs_rdr_field_error(r, "AllocTRES", "a gres/gpu count >= 1 (jobs without GPUs "
                                      "are refused: workload.trace.cpu_only = error)",
                                      f[h->col[C_TRES]].s, f[h->col[C_TRES]].len);
        return fs_rdr_skip(r, "cpu_only (no gres/gpu in AllocTRES)");
    }
    fs_time_t run = j->rec_end - j->rec_start;
    if (run == 0)
        return fs_rdr_skip(r, "run time 0");
    j->gpus = (uint32_t)gpus;
    j->duration = fs_rdr_scale(r, run);
    if (ten && (rc = fs_rdr_intern(r, &r->tenants, ten->s, ten->len, &j->tenant)))
        return rc;
    if (type && tlen && (rc = fs_rdr_intern(r, &r->gpu_types, type, tlen, &j->gpu_type)))
        return rc;
    return 0;
}

static int header(fs_rdr_t *r, fs_error_t *err)
{
    sacct_t *h = fs_calloc(1, sizeof *h);
    if (!h)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", r->csv.path);
    r->fmt = h;
    r->fmt_free = fs_free;
    r->pull = pull;
    r->submit_field = "Submit";
    if (r->opts.cancelled == FS_CANCELLED_RUN)
        return fs_error_set(err, FS_EINVAL, "%s: workload.trace.cancelled: run is not possible for "
                            "sacct (a job cancelled while pending has no run time): skip or "
                            "withdraw", r->csv.path);
    return fs_rdr_header(r, '|', names, N_C, REQUIRED, h->col, &h->width, err);
}

static const fs_source_ops_t ops = FS_RDR_OPS("sacct");

int fs_sacct_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                  fs_error_t *err)
{
    return fs_rdr_open(&ops, path, opts, header, out, err);
}
