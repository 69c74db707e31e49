#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strncasecmp */
#endif
#include "fs_pai.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../sim/fs_alloc.h"
#include "fs_rdr.h"
#include "fs_strtab.h"

enum {
    F_JOB, F_TASK, F_INST, F_STATUS, F_START, F_END, F_CPU, F_MEM, F_GPU, F_TYPE, N_F
};
#define MAX_PERCENT (UINT64_C(100) << 31)   /* 2^31 GPUs */
#define NAME_MAX_LEN 256

enum { J_JOB, J_INST_ID, J_USER, J_STATUS, J_START, J_END, N_J };
enum { I_JOB, I_TASK, I_INST, I_WORKER, I_INST_ID, I_STATUS, I_START, I_END, I_MACHINE, N_I };
/* pai_sensor_table: job_name, task_name, worker_name, inst_id, machine, gpu_name, cpu_usage,
 * gpu_wrk_util (percent of one GPU: 100 = one GPU busy), avg_mem, max_mem, avg_gpu_wrk_mem,
 * max_gpu_wrk_mem, read, write, read_count, write_count */
enum { S_JOB, S_TASK, S_WORKER, S_INST_ID, S_MACHINE, S_GPU_NAME, S_CPU_USAGE, S_GPU_UTIL,
       S_AVG_MEM, S_MAX_MEM, S_AVG_GPU_MEM, N_S = 16 };

/* ---- side tables: job and instance tables, indexed by name hash -------- */

/*
 * Why hashes: the job table (one row per job) and the instance table (one
 * row per task instance, 7.5 M in the full trace) are read once at open and
 * kept as 32-byte entries keyed by a 64-bit hash of the job name (jobs) or
 * of job and task name (instances): about 32 MB per million jobs and per
 * million tasks, never the rows themselves.  Two names with the same 64-bit
 * hash (chance about 3e-8 for the full trace) would share an entry.
 * Open addressing, linear probing, load factor <= 1/2; key 0 means empty.
 */
typedef struct jobrec {
    uint64_t key;
    fs_time_t submit, end;      /* job start_time (submission), end_time (-1 none), us */
    int32_t user;               /* index in pai_t.users, -1 none */
    int32_t state;              /* enum fs_job_rec_state */
} jobrec_t;

typedef struct instrec {
    uint64_t key;
    fs_time_t start, end;       /* earliest start, latest end over the rows, us; -1 none */
    uint32_t count;             /* instance rows */
    uint32_t unended;           /* some row has no end_time */
} instrec_t;

typedef struct utilrec {
    uint64_t key;
    double sum;                 /* gpu_wrk_util summed over the job's workers, percent */
    double mem;                 /* avg_gpu_wrk_mem summed over the same workers, GB */
    uint32_t n;                 /* workers that recorded gpu_wrk_util */
    uint32_t n_mem;             /* of them, those that recorded avg_gpu_wrk_mem */
} utilrec_t;

typedef struct htab {
    void *slots;
    size_t cap, n, size;        /* cap: 0 or a power of 2; size: bytes per entry */
} htab_t;

static uint64_t name_hash(const char *a, size_t na, const char *b, size_t nb)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < na; i++)
        h = (h ^ (unsigned char)a[i]) * UINT64_C(1099511628211);
    if (b) {
        h = (h ^ 0x1f) * UINT64_C(1099511628211);   /* a separator no name holds */
        for (size_t i = 0; i < nb; i++)
            h = (h ^ (unsigned char)b[i]) * UINT64_C(1099511628211);
    }
    return h ? h : 1;
}

static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 33;   /* splitmix64's finalizer: FNV's low bits are weak */
    key *= UINT64_C(0xff51afd7ed558ccd);
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

static void *ht_at(const htab_t *t, size_t i) { return (char *)t->slots + i * t->size; }

/* The entry of key, or NULL. */
static void *ht_find(const htab_t *t, uint64_t key)
{
    if (!t->cap)
        return NULL;
    for (size_t i = slot_of(key, t->cap);; i = (i + 1) & (t->cap - 1)) {
        uint64_t k;
        memcpy(&k, ht_at(t, i), sizeof k);
        if (k == key)
            return ht_at(t, i);
        if (k == 0)
            return NULL;
    }
}

static int ht_grow(htab_t *t)
{
    size_t cap = t->cap ? t->cap * 2 : 1024;
    htab_t g = {fs_calloc(cap, t->size), cap, t->n, t->size};
    if (!g.slots)
        return FS_ENOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        uint64_t k;
        memcpy(&k, ht_at(t, i), sizeof k);
        if (!k)
            continue;
        size_t j = slot_of(k, cap);
        while (*(uint64_t *)ht_at(&g, j))
            j = (j + 1) & (cap - 1);
        memcpy(ht_at(&g, j), ht_at(t, i), t->size);
    }
    fs_free(t->slots);
    *t = g;
    return 0;
}

/* The entry of key, created zeroed (but for the key) when absent; *fresh
 * says which.  NULL: out of memory. */
static void *ht_get(htab_t *t, uint64_t key, int *fresh)
{
    void *e = ht_find(t, key);
    *fresh = 0;
    if (e)
        return e;
    if ((t->n + 1) * 2 > t->cap && ht_grow(t))
        return NULL;
    size_t i = slot_of(key, t->cap);
    while (*(uint64_t *)ht_at(t, i))
        i = (i + 1) & (t->cap - 1);
    e = ht_at(t, i);
    memcpy(e, &key, sizeof key);
    t->n++;
    *fresh = 1;
    return e;
}

/* One job being gathered from its task rows. */
typedef struct acc {
    int open;               /* a job is being gathered */
    char name[NAME_MAX_LEN + 1];
    size_t name_len;
    uint64_t id;            /* ordinal of the job in the file */
    uint64_t percent;       /* sum of inst_num x plan_gpu */
    uint64_t gpu_insts;     /* instances (pods) that plan GPUs */
    uint32_t pod_cpu;       /* plan_cpu (milli-cores) and plan_mem (MiB) of the GPU task's */
    uint32_t pod_mem;       /*   instance: the pod's requests when it is the only one */
    fs_time_t start, end;   /* earliest start, latest end; -1 unknown */
    int any_unstarted, any_unended, any_failed, any_running, all_terminated;
    char type[64];
    size_t type_len;
    uint64_t line;          /* first row of the job, for messages */
    /* from the instance table (when given) */
    int any_inst;           /* some task has instance rows */
    fs_time_t inst_start, inst_end; /* earliest start, latest end of its instances; -1 none */
    int inst_unended;       /* an instance has not ended */
} acc_t;

typedef struct pai {
    acc_t cur;              /* the job being gathered */
    uint64_t jobs;
    int pending;            /* error of a row that opened a job, returned next */
    char pending_reason[48];
    /* the side tables of a directory (fs_pai.h) */
    int have_jobs, have_insts, have_sensors;
    char *jobs_path, *insts_path, *sensors_path;
    htab_t utiltab;         /* utilrec_t by name_hash(job_name): the sensor table */
    htab_t jobtab;          /* jobrec_t by name_hash(job_name) */
    htab_t insttab;         /* instrec_t by name_hash(job_name, task_name) */
    fs_strtab_t users;      /* user names of the job table */
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
    /* plan_cpu: percent of a core (600 = 6 cores); plan_mem: GB; both may be decimals */
    fs_time_t cpu = 0, mem = 0;
    if (f[F_CPU].len && (fs_rdr_seconds(f[F_CPU].s, f[F_CPU].len, &cpu) || cpu < 0 ||
                         cpu / 100000 > UINT32_MAX))
        return fs_rdr_field_error(r, "plan_cpu", "a CPU share in percent of a core >= 0",
                                  f[F_CPU].s, f[F_CPU].len);
    if (f[F_MEM].len && (fs_rdr_seconds(f[F_MEM].s, f[F_MEM].len, &mem) || mem < 0 ||
                         mem / 1000000 > UINT32_MAX / 1024))
        return fs_rdr_field_error(r, "plan_mem", "a memory size in GB >= 0", f[F_MEM].s,
                                  f[F_MEM].len);
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
    const instrec_t *ir = p->have_insts ? ht_find(&p->insttab,
                                                  name_hash(f[F_JOB].s, f[F_JOB].len,
                                                            f[F_TASK].s, f[F_TASK].len))
                                        : NULL;
    if (ir)
        inst = ir->count;   /* the instances that existed, not the plan */
    if (inst * pct > MAX_PERCENT || a->percent + inst * pct > MAX_PERCENT)
        return fs_rdr_field_error(r, "plan_gpu", "at most 2^31 GPUs per job", f[F_GPU].s,
                                  f[F_GPU].len);
    if (!a->open) {
        memset(a, 0, sizeof *a);
        a->open = 1;
        a->start = a->end = -1;
        a->inst_start = a->inst_end = -1;
        a->all_terminated = 1;
        a->line = r->csv.line_no;
        a->id = ++p->jobs;
        memcpy(a->name, f[F_JOB].s, f[F_JOB].len);
        a->name_len = f[F_JOB].len;
    }
    a->percent += inst * pct;
    if (pct > 0) {
        a->gpu_insts += inst;
        a->pod_cpu = (uint32_t)((cpu + 99999) / 100000);           /* milli-cores, up */
        a->pod_mem = (uint32_t)((mem * 1024 + 999999) / 1000000);   /* MiB, up */
    }
    if (start < 0)
        a->any_unstarted = 1;
    else if (a->start < 0 || start < a->start)
        a->start = start;
    if (end < 0)
        a->any_unended = 1;
    else if (end > a->end)
        a->end = end;
    if (ir) {
        a->any_inst = 1;
        a->inst_unended |= ir->unended != 0;
        if (ir->start >= 0 && (a->inst_start < 0 || ir->start < a->inst_start))
            a->inst_start = ir->start;
        if (ir->end > a->inst_end)
            a->inst_end = ir->end;
    }
    a->any_failed |= match(st, "Failed");
    a->any_running |= match(st, "Running");
    a->all_terminated &= terminated;
    if (a->type_len == 0 && f[F_TYPE].len) {
        memcpy(a->type, f[F_TYPE].s, f[F_TYPE].len);
        a->type_len = f[F_TYPE].len;
    }
    return 0;
}

/* When the gathered job ran: its tasks' span, or its instances' when the
 * instance table has some; an end the job table knows fills a missing one. */
static void job_span(const acc_t *a, const jobrec_t *jr, fs_time_t *start, fs_time_t *end,
                     int *unstarted, int *unended)
{
    *start = a->start;
    *end = a->end;
    *unstarted = a->any_unstarted;
    *unended = a->any_unended;
    if (a->any_inst) {
        *start = a->inst_start;
        *end = a->inst_end;
        *unstarted = *start < 0;
        *unended = a->inst_unended || *end < 0;
    }
    if (jr && *unended && !*unstarted && jr->end > *start) {
        *end = jr->end;
        *unended = 0;
    }
}

/* Turns the gathered job into *j (or a counted skip). */
static int close_job(fs_rdr_t *r, pai_t *p, fs_job_t *j)
{
    acc_t *a = &p->cur;
    a->open = 0;
    if (a->percent == 0) {
        if (r->opts.cpu_only != FS_CPU_ONLY_SKIP)
            return fs_rdr_row_error(r, "cpu_only", "job '%.*s' (from line %llu): expected GPUs "
                                    "(plan_gpu > 0; jobs without GPUs are refused: "
                                    "workload.trace.cpu_only = error; place is for "
                                    "openb pod lists)", (int)a->name_len,
                                    a->name, (unsigned long long)a->line);
        return fs_rdr_skip(r, "cpu_only (plan_gpu 0)");
    }
    const jobrec_t *jr = NULL;
    if (p->have_jobs && !(jr = ht_find(&p->jobtab, name_hash(a->name, a->name_len, NULL, 0))))
        return fs_rdr_row_error(r, "not in the job table", "job '%.*s' (from line %llu): "
                                "expected a job listed in the job table %s", (int)a->name_len,
                                a->name, (unsigned long long)a->line, p->jobs_path);
    fs_time_t start, end;
    int unstarted, unended;
    job_span(a, jr, &start, &end, &unstarted, &unended);
    if (unstarted)
        return fs_rdr_skip(r, "a task never started (no start_time)");
    if (unended)
        return fs_rdr_skip(r, "a task has not ended (no end_time)");
    if (end == start)
        return fs_rdr_skip(r, "run time 0");
    fs_job_init(j);
    j->id = a->id;
    j->submit = start;
    j->rec_end = end;
    j->duration = fs_rdr_scale(r, end - start);
    int rc;
    if (jr) {   /* the job table: submission, user, final state */
        j->submit = jr->submit < start ? jr->submit : start;
        j->rec_start = start;
        const char *u = fs_strtab_name(&p->users, jr->user);
        if (u && (rc = fs_rdr_intern(r, &r->tenants, u, strlen(u), &j->tenant)))
            return rc;
    } else if (a->any_inst) {
        j->rec_start = start;
    }
    if (a->percent < 100) {
        j->gpus = 1;
        j->gpu_milli = (uint32_t)(a->percent * 10);
    } else {
        j->gpus = (uint32_t)((a->percent + 99) / 100);
    }
    const utilrec_t *ut = p->have_sensors
                              ? ht_find(&p->utiltab, name_hash(a->name, a->name_len, NULL, 0))
                              : NULL;
    if (ut && ut->n) {  /* the sensor table: mean worker utilization / GPU percent per worker */
        double per = a->gpu_insts ? (double)a->percent / (double)a->gpu_insts : (double)a->percent;
        j->rec_util = fs_job_util_code(per > 0 ? ut->sum / (double)ut->n / per : 0);
        /* memory: mean worker GB over the GPUs each worker plans (per / 100), so GB per
         * GPU, or per whole-GPU equivalent of a fractional worker (the exporter scales
         * it by the share the job holds) */
        if (ut->n_mem && per > 0)
            j->rec_fb = fs_job_fb_code(ut->mem / (double)ut->n_mem / (per / 100.0));
    }
    if (a->gpu_insts == 1) { /* one pod: one node (a job of several pods is a gang) */
        j->flags |= FS_JOB_SINGLE_NODE;
        j->cpu_milli = a->pod_cpu;
        j->mem_mib = a->pod_mem;
    }
    j->rec_state = jr ? jr->state
                   : a->any_failed ? FS_JOB_REC_FAILED
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

static void pai_free(void *fmt)
{
    pai_t *p = fmt;
    if (!p)
        return;
    fs_free(p->jobtab.slots);
    fs_free(p->insttab.slots);
    fs_free(p->utiltab.slots);
    fs_strtab_release(&p->users);
    fs_free(p->jobs_path);
    fs_free(p->insts_path);
    fs_free(p->sensors_path);
    fs_free(p);
}

static int header(fs_rdr_t *r, fs_error_t *err)
{
    pai_t *p = fs_calloc(1, sizeof *p);
    if (!p)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", r->csv.path);
    p->jobtab.size = sizeof(jobrec_t);
    p->insttab.size = sizeof(instrec_t);
    p->utiltab.size = sizeof(utilrec_t);
    fs_strtab_init(&p->users);
    r->fmt = p;
    r->fmt_free = pai_free;
    r->pull = pull;
    r->submit_field = "start_time";
    return 0;
}

/* ---- reading the side tables ------------------------------------------- */

static int rec_state_of(const fs_csv_field_t *st)
{
    return match(st, "Terminated") ? FS_JOB_REC_COMPLETED
           : match(st, "Failed") ? FS_JOB_REC_FAILED
           : match(st, "Running") ? FS_JOB_REC_RUNNING
           : match(st, "Interrupted") ? FS_JOB_REC_KILLED
           : match(st, "Waiting") ? FS_JOB_REC_UNKNOWN : -1;
}

/* The checks every side row shares: a job name, a status, times. */
static int side_common(fs_rdr_t *r, const fs_csv_field_t *job, const fs_csv_field_t *st,
                       const fs_csv_field_t *fs, const fs_csv_field_t *fe, fs_time_t *start,
                       fs_time_t *end)
{
    int rc;
    *start = *end = -1;
    if (job->len == 0 || job->len > NAME_MAX_LEN || !fs_rdr_valid_name(job->s, job->len))
        return fs_rdr_field_error(r, "job_name", "a job name of 1..256 bytes", job->s, job->len);
    if (rec_state_of(st) < 0)
        return fs_rdr_field_error(r, "status", "one of Terminated, Failed, Running, Waiting, "
                                  "Interrupted", st->s, st->len);
    if (fs->len && (rc = fs_rdr_get_time(r, "start_time", fs, start)))
        return rc;
    if (fe->len && (rc = fs_rdr_get_time(r, "end_time", fe, end)))
        return rc;
    if (*start >= 0 && *end >= 0 && *end < *start)
        return fs_rdr_field_error(r, "end_time", "a time >= start_time", fe->s, fe->len);
    return 0;
}

/* One job-table row into p->jobtab. */
static int job_row(fs_rdr_t *r, pai_t *p)
{
    const fs_csv_field_t *f = r->csv.fields;
    fs_time_t start, end;
    int rc = side_common(r, &f[J_JOB], &f[J_STATUS], &f[J_START], &f[J_END], &start, &end);
    if (rc)
        return rc;
    if (start < 0)
        return fs_rdr_field_error(r, "start_time", "the submission time in seconds", "", 0);
    if ((rc = fs_rdr_get_name(r, "user", &f[J_USER])))
        return rc;
    int fresh;
    jobrec_t *e = ht_get(&p->jobtab, name_hash(f[J_JOB].s, f[J_JOB].len, NULL, 0), &fresh);
    if (!e)
        return fs_rdr_fatal(r, FS_ENOMEM, "out of memory");
    if (!fresh)
        return fs_rdr_field_error(r, "job_name", "a job listed once", f[J_JOB].s, f[J_JOB].len);
    e->submit = start;
    e->end = end;
    e->state = rec_state_of(&f[J_STATUS]);
    e->user = -1;
    if (f[J_USER].len && fs_strtab_intern(&p->users, f[J_USER].s, f[J_USER].len, &e->user))
        return fs_rdr_fatal(r, FS_ENOMEM, "out of memory");
    return 0;
}

/* One instance-table row into p->insttab (aggregated per task). */
static int inst_row(fs_rdr_t *r, pai_t *p)
{
    const fs_csv_field_t *f = r->csv.fields;
    fs_time_t start, end;
    int rc = side_common(r, &f[I_JOB], &f[I_STATUS], &f[I_START], &f[I_END], &start, &end);
    if (rc || (rc = fs_rdr_get_name(r, "task_name", &f[I_TASK])) ||
        (rc = fs_rdr_get_name(r, "machine", &f[I_MACHINE])))
        return rc;
    int fresh;
    instrec_t *e = ht_get(&p->insttab, name_hash(f[I_JOB].s, f[I_JOB].len, f[I_TASK].s,
                                                 f[I_TASK].len), &fresh);
    if (!e)
        return fs_rdr_fatal(r, FS_ENOMEM, "out of memory");
    if (fresh)
        e->start = e->end = -1;
    if (e->count == UINT32_MAX)
        return fs_rdr_row_error(r, "too many instances", "expected at most 2^32-1 instances "
                                "per task");
    e->count++;
    if (start >= 0 && (e->start < 0 || start < e->start))
        e->start = start;
    if (end < 0)
        e->unended = 1;
    else if (end > e->end)
        e->end = end;
    return 0;
}

/* One sensor-table row into p->utiltab: the worker's GPU utilization, summed
 * per job (a worker without GPUs leaves gpu_wrk_util empty). */
static int sensor_row(fs_rdr_t *r, pai_t *p)
{
    const fs_csv_field_t *f = r->csv.fields;
    int rc = fs_rdr_get_name(r, "job_name", &f[S_JOB]);
    if (rc || !f[S_GPU_UTIL].len)
        return rc;
    char buf[64], *e = NULL;
    double v = NAN;
    if (f[S_GPU_UTIL].len < sizeof buf) {
        memcpy(buf, f[S_GPU_UTIL].s, f[S_GPU_UTIL].len);
        buf[f[S_GPU_UTIL].len] = '\0';
        v = strtod(buf, &e);
    }
    if (!e || *e || !isfinite(v) || v < 0)
        return fs_rdr_field_error(r, "gpu_wrk_util", "a GPU utilization in percent >= 0, or empty",
                                  f[S_GPU_UTIL].s, f[S_GPU_UTIL].len);
    double gb = NAN;    /* avg_gpu_wrk_mem: GB of GPU memory the worker used, on average */
    if (f[S_AVG_GPU_MEM].len) {
        e = NULL;
        if (f[S_AVG_GPU_MEM].len < sizeof buf) {
            memcpy(buf, f[S_AVG_GPU_MEM].s, f[S_AVG_GPU_MEM].len);
            buf[f[S_AVG_GPU_MEM].len] = '\0';
            gb = strtod(buf, &e);
        }
        if (!e || *e || !isfinite(gb) || gb < 0)
            return fs_rdr_field_error(r, "avg_gpu_wrk_mem", "a GPU memory use in GB >= 0, or empty",
                                      f[S_AVG_GPU_MEM].s, f[S_AVG_GPU_MEM].len);
    }
    int fresh;
    utilrec_t *u = ht_get(&p->utiltab, name_hash(f[S_JOB].s, f[S_JOB].len, NULL, 0), &fresh);
    if (!u)
        return fs_rdr_fatal(r, FS_ENOMEM, "out of memory");
    u->sum += v;
    u->n++;
    if (!isnan(gb)) {
        u->mem += gb;
        u->n_mem++;
    }
    return 0;
}

/*
 * Reads a whole side table through r's own error machinery: r->csv is
 * swapped for the side file's reader for the duration, so that messages
 * name FILE:LINE of the side table.  Strict: the first bad row is the
 * error; lenient: bad rows are skipped and counted as "TABLE: REASON".
 */
static int read_side(fs_rdr_t *r, pai_t *p, const char *path, const char *table, size_t width,
                     int (*row)(fs_rdr_t *, pai_t *), fs_error_t *err)
{
    fs_csv_t side;
    int rc = fs_csv_open(&side, path, 0, err);
    if (rc)
        return rc;
    fs_csv_t main_csv = r->csv;
    r->csv = side;
    for (;;) {
        rc = fs_rdr_next_line(r, "#");
        if (rc <= 0)
            break;
        if ((rc = fs_rdr_split(r, ',', width)) == 0)
            rc = row(r, p);
        if (rc == FS_EINVAL && r->opts.lenient && !r->fatal) {
            char why[128];   /* fs_rdr keeps the first 47 bytes */
            snprintf(why, sizeof why, "%s: %s", table, r->bad_reason);
            fs_rdr_skip(r, why);
            continue;
        }
        if (rc)
            break;
    }
    side = r->csv;
    r->csv = main_csv;
    fs_csv_close(&side);
    if (rc < 0) {
        *err = r->error;
        r->fatal = 0;
        return rc;
    }
    return 0;
}

/* *out = DIR/NAME.csv or DIR/NAME.csv.gz (owned), or NULL when neither
 * exists.  0 or FS_ENOMEM (err set). */
static int find_table(const char *dir, const char *name, char **out, fs_error_t *err)
{
    static const char *const ext[] = {".csv", ".csv.gz"};
    *out = NULL;
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(dir) + strlen(name) + strlen(ext[i]) + 2;
        char *f = fs_malloc(n);
        if (!f)
            return fs_error_set(err, FS_ENOMEM, "%s: out of memory", dir);
        snprintf(f, n, "%s/%s%s", dir, name, ext[i]);
        struct stat st;
        if (stat(f, &st) == 0 && S_ISREG(st.st_mode)) {
            *out = f;
            return 0;
        }
        fs_free(f);
    }
    return 0;
}

static const fs_source_ops_t ops = FS_RDR_OPS("pai");

/* A directory: the task table streams; the job and instance tables, when
 * present, are read into p first. */
static int open_dir(const char *dir, const fs_trace_opts_t *opts, fs_source_t **out,
                    fs_error_t *err)
{
    char *task = NULL;
    int rc = find_table(dir, "pai_task_table", &task, err);
    if (rc)
        return rc;
    if (!task)
        return fs_error_set(err, FS_EINVAL, "%s: a PAI directory needs pai_task_table.csv (or "
                            ".csv.gz); pai_job_table and pai_instance_table are optional", dir);
    fs_source_t *src = NULL;
    rc = fs_rdr_open(&ops, task, opts, header, &src, err);
    fs_free(task);
    if (rc)
        return rc;
    fs_rdr_t *r = src->state;
    pai_t *p = r->fmt;
    if (!(rc = find_table(dir, "pai_job_table", &p->jobs_path, err)) &&
        !(rc = find_table(dir, "pai_instance_table", &p->insts_path, err)))
        rc = find_table(dir, "pai_sensor_table", &p->sensors_path, err);
    p->have_jobs = p->jobs_path != NULL;
    p->have_insts = p->insts_path != NULL;
    p->have_sensors = p->sensors_path != NULL;
    if (!rc && p->have_jobs)
        rc = read_side(r, p, p->jobs_path, "job table", N_J, job_row, err);
    if (!rc && p->have_insts)
        rc = read_side(r, p, p->insts_path, "instance table", N_I, inst_row, err);
    if (!rc && p->have_sensors)
        rc = read_side(r, p, p->sensors_path, "sensor table", N_S, sensor_row, err);
    if (rc) {
        fs_source_destroy(src);
        return rc;
    }
    *out = src;
    return 0;
}

int fs_pai_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                fs_error_t *err)
{
    struct stat st;
    *out = NULL;
    if (path && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return open_dir(path, opts, out, err);
    return fs_rdr_open(&ops, path, opts, header, out, err);
}
