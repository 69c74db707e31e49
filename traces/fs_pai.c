#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strncasecmp */
#endif
#include "fs_pai.h"

#include <string.h>
#include <strings.h>

#include "../sim/fs_alloc.h"
#include "fs_rdr.h"

enum {
    F_JOB, F_TASK, F_INST, F_STATUS, F_START, F_END, F_CPU, F_MEM, F_GPU, F_TYPE, N_F
};
#define MAX_PERCENT (UINT64_C(100) << 31)   /* 2^31 GPUs */
#define NAME_MAX_LEN 256

/* One job being gathered from its task rows. */
typedef struct acc {
    int open;               /* a job is being gathered */
    char name[NAME_MAX_LEN + 1];
    size_t name_len;
    uint64_t id;            /* ordinal of the job in the file */
    uint64_t percent;       /* sum of inst_num x plan_gpu */
    fs_time_t start, end;   /* earliest start, latest end; -1 unknown */
    int any_unstarted, any_unended, any_failed, any_running, all_terminated;
    char type[64];
    size_t type_len;
    uint64_t line;          /* first row of the job, for messages */
} acc_t;

typedef struct pai {
    acc_t cur;              /* the job being gathered */
    uint64_t jobs;
    int pending;            /* error of a row that opened a job, returned next */
    char pending_reason[48];
} pai_t;

static int match(const fs_csv_field_t *f, const char *s)
{
    return strlen(s) == f->len && strncasecmp(s, f->s, f->len) == 0;
}

/* Parses the current row into the open job (started if needed). */
static int add_row(fs_rdr_t *r, pai_t *p)
{
    const fs_csv_field_t *f = r->csv.fields;
    acc_t *a = &p->cur;
    int rc;
    uint64_t inst = 0, pct = 0;
    fs_time_t start = -1, end = -1;
    if ((rc = fs_rdr_get_uint(r, "inst_num", &f[F_INST], 0, UINT32_MAX, &inst)))
        return rc;
    if (f[F_GPU].len) {
        fs_time_t g;   /* plan_gpu may be a decimal: percent, 6 decimals */
        if (fs_rdr_seconds(f[F_GPU].s, f[F_GPU].len, &g) || g < 0)
            return fs_rdr_field_error(r, "plan_gpu", "a GPU share in percent >= 0", f[F_GPU].s,
                                      f[F_GPU].len);
        pct = (uint64_t)((g + 999999) / 1000000);   /* whole percent, rounded up */
    }
    if (f[F_START].len && (rc = fs_rdr_get_time(r, "start_time", &f[F_START], &start)))
        return rc;
    if (f[F_END].len && (rc = fs_rdr_get_time(r, "end_time", &f[F_END], &end)))
        return rc;
    if (start >= 0 && end >= 0 && end < start)
        return fs_rdr_field_error(r, "end_time", "a time >= start_time", f[F_END].s, f[F_END].len);
    const fs_csv_field_t *st = &f[F_STATUS];
    int terminated = match(st, "Terminated");
    if (!terminated && !match(st, "Failed") && !match(st, "Running") && !match(st, "Waiting") &&
        !match(st, "Interrupted"))
        return fs_rdr_field_error(r, "status", "one of Terminated, Failed, Running, Waiting, "
                                  "Interrupted", st->s, st->len);
    if ((rc = fs_rdr_get_name(r, "gpu_type", &f[F_TYPE])))
        return rc;
    if (f[F_TYPE].len >= sizeof a->type)
        return fs_rdr_field_error(r, "gpu_type", "a GPU type of at most 63 bytes", f[F_TYPE].s,
                                  f[F_TYPE].len);
    if (inst * pct > MAX_PERCENT || a->percent + inst * pct > MAX_PERCENT)
        return fs_rdr_field_error(r, "plan_gpu", "at most 2^31 GPUs per job", f[F_GPU].s,
                                  f[F_GPU].len);
    if (!a->open) {
        memset(a, 0, sizeof *a);
        a->open = 1;
        a->start = a->end = -1;
        a->all_terminated = 1;
        a->line = r->csv.line_no;
        a->id = ++p->jobs;
        memcpy(a->name, f[F_JOB].s, f[F_JOB].len);
        a->name_len = f[F_JOB].len;
    }
    a->percent += inst * pct;
    if (start < 0)
        a->any_unstarted = 1;
    else if (a->start < 0 || start < a->start)
        a->start = start;
    if (end < 0)
        a->any_unended = 1;
    else if (end > a->end)
        a->end = end;
    a->any_failed |= match(st, "Failed");
    a->any_running |= match(st, "Running");
    a->all_terminated &= terminated;
    if (a->type_len == 0 && f[F_TYPE].len) {
        memcpy(a->type, f[F_TYPE].s, f[F_TYPE].len);
        a->type_len = f[F_TYPE].len;
    }
    return 0;
}

/* Turns the gathered job into *j (or a counted skip). */
static int close_job(fs_rdr_t *r, pai_t *p, fs_job_t *j)
{
    acc_t *a = &p->cur;
    a->open = 0;
    if (a->percent == 0) {
        if (r->opts.cpu_only)
            return fs_rdr_row_error(r, "cpu_only", "job '%.*s' (from line %llu): expected GPUs "
                                    "(plan_gpu > 0; jobs without GPUs are refused: "
                                    "workload.trace.cpu_only = error)", (int)a->name_len,
                                    a->name, (unsigned long long)a->line);
        return fs_rdr_skip(r, "cpu_only (plan_gpu 0)");
    }
    if (a->any_unstarted)
        return fs_rdr_skip(r, "a task never started (no start_time)");
    if (a->any_unended)
        return fs_rdr_skip(r, "a task has not ended (no end_time)");
    if (a->end == a->start)
        return fs_rdr_skip(r, "run time 0");
    fs_job_init(j);
    j->id = a->id;
    j->submit = a->start;
    j->rec_end = a->end;
    j->duration = fs_rdr_scale(r, a->end - a->start);
    if (a->percent < 100) {
        j->gpus = 1;
        j->gpu_milli = (uint32_t)(a->percent * 10);
    } else {
        j->gpus = (uint32_t)((a->percent + 99) / 100);
    }
    j->rec_state = a->any_failed ? FS_JOB_REC_FAILED
                   : a->any_running ? FS_JOB_REC_RUNNING
                   : a->all_terminated ? FS_JOB_REC_COMPLETED : FS_JOB_REC_UNKNOWN;
    return fs_rdr_intern(r, &r->gpu_types, a->type, a->type_len, &j->gpu_type);
}

/*
 * Why a pending error: the row that starts a new job also finishes the
 * previous one.  The finished job (or its skip) is returned first; should
 * the new row itself be bad, its error is kept and returned by the next
 * call, so that every row is reported at its own line.
 */
static int pull(fs_rdr_t *r, fs_job_t *j)
{
    pai_t *p = r->fmt;
    if (p->pending) {
        int rc = p->pending;
        p->pending = 0;
        memcpy(r->bad_reason, p->pending_reason, sizeof r->bad_reason);
        return rc;
    }
    for (;;) {
        int rc = fs_rdr_next_line(r, "#");
        if (rc < 0)
            return rc;
        if (rc == 0) {
            if (p->cur.open)
                return close_job(r, p, j);
            r->eof = 1;
            return 0;
        }
        if ((rc = fs_rdr_split(r, ',', N_F)))
            return rc;
        const fs_csv_field_t *f = r->csv.fields;
        if (f[F_JOB].len == 0 || f[F_JOB].len > NAME_MAX_LEN ||
            !fs_rdr_valid_name(f[F_JOB].s, f[F_JOB].len))
            return fs_rdr_field_error(r, "job_name", "a job name of 1..256 bytes", f[F_JOB].s,
                                      f[F_JOB].len);
        if (p->cur.open && (f[F_JOB].len != p->cur.name_len ||
                            memcmp(f[F_JOB].s, p->cur.name, f[F_JOB].len) != 0)) {
            int a = close_job(r, p, j);
            if (a != 0 && a != FS_RDR_SKIPPED && a != FS_EINVAL)
                return a;   /* fatal */
            if (a == FS_EINVAL && !r->opts.lenient)
                return a;   /* strict: the stream ends here */
            char reason[sizeof r->bad_reason];
            memcpy(reason, r->bad_reason, sizeof reason);
            int b = add_row(r, p);
            if (b) {
                p->pending = b;
                memcpy(p->pending_reason, r->bad_reason, sizeof p->pending_reason);
            }
            memcpy(r->bad_reason, reason, sizeof reason);
            return a;
        }
        if ((rc = add_row(r, p)))
            return rc;
    }
}

static int header(fs_rdr_t *r, fs_error_t *err)
{
    pai_t *p = fs_calloc(1, sizeof *p);
    if (!p)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", r->csv.path);
    r->fmt = p;
    r->fmt_free = fs_free;
    r->pull = pull;
    r->submit_field = "start_time";
    return 0;
}

static const fs_source_ops_t ops = FS_RDR_OPS("pai");

int fs_pai_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                fs_error_t *err)
{
    return fs_rdr_open(&ops, path, opts, header, out, err);
}
