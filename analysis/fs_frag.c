/*
 * fs_frag: the fragmentation experiment (fs_frag.h): the trace's pods, the
 * demand steps, one run per (placement, seed) on worker threads, and the
 * per-placement means.
 */
#include "fs_frag.h"
#include "../models/fs_cluster.h"
#include "../models/fs_fleetcfg.h"
#include "../models/fs_place.h"
#include "../traces/fs_trace.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_rng.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct frag {
    const fs_config_t *cfg;
    fs_job_t *jobs;
    size_t n_jobs;
    uint32_t *pools;        /* per GPU type t: pools[off[t] .. off[t+1]) */
    size_t *off;
    int32_t n_types;
    int learned;
    int show_pools;         /* --pools: per-pool leftovers on stderr */
    int draw_list;          /* --draw list */
    double typical;         /* --typical: share of the pods the given shapes cover */
    double demand;
    uint8_t *atypical;      /* per job: its shape is left out of the given shapes */
} frag_t;

/* --typical: the shapes (GPUs, milli, CPU, GPU type) by count, most popular
 * first (ties: the shape met first), kept until they cover `typical` of the
 * pods; the jobs of the others are marked.  The ATC'23 simulator's typical
 * pods (frag.go GetTypicalPods, popularity threshold 95) do the same. */
typedef struct shapecount {
    uint32_t g, milli, cpu;
    int32_t type;
    size_t first, count;
} shapecount_t;

static int cmp_shapecount(const void *a, const void *b)
{
    const shapecount_t *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

static int mark_typical(frag_t *f)
{
    if (f->typical >= 1)
        return 0;
    shapecount_t *sc = fs_calloc(f->n_jobs, sizeof *sc);
    size_t n = 0;
    f->atypical = fs_calloc(f->n_jobs, 1);
    if (!sc || !f->atypical) {
        fs_free(sc);
        return FS_ENOMEM;
    }
    for (size_t i = 0; i < f->n_jobs; i++) {   /* O(jobs x shapes): shapes are few */
        const fs_job_t *j = &f->jobs[i];
        size_t k = 0;
        while (k < n && !(sc[k].g == j->gpus && sc[k].milli == j->gpu_milli &&
                          sc[k].cpu == j->cpu_milli && sc[k].type == j->gpu_type))
            k++;
        if (k == n)
            sc[n++] = (shapecount_t){j->gpus, j->gpu_milli, j->cpu_milli, j->gpu_type, i, 0};
        sc[k].count++;
    }
    qsort(sc, n, sizeof *sc, cmp_shapecount);
    size_t cum = 0, keep = 0;
    while (keep < n && (double)cum < f->typical * (double)f->n_jobs)
        cum += sc[keep++].count;
    for (size_t i = 0; i < f->n_jobs; i++) {
        const fs_job_t *j = &f->jobs[i];
        int in = 0;
        for (size_t k = 0; k < keep && !in; k++)
            in = sc[k].g == j->gpus && sc[k].milli == j->gpu_milli && sc[k].cpu == j->cpu_milli &&
                 sc[k].type == j->gpu_type;
        f->atypical[i] = (uint8_t)!in;
    }
    fs_free(sc);
    return 0;
}

/* --draw list: the pod list once in a random order, then (when the list
 * asks for less than `target` milli-GPU) uniform draws appended while the
 * GPUs requested stay within it, or (when it asks for more) the shuffled
 * list less uniformly chosen pods: the ATC'23 simulator's order (core.go:
 * SortClusterPods shuffles, then TunePodsByNodeTotalResource appends or
 * removes). */
static int draw_list(const frag_t *f, fs_rng_t *rng, double target, size_t **out, size_t *n_out)
{
    gsl_rng *r = fs_rng_gsl(rng);
    size_t n = f->n_jobs, cap = n + 16;
    double total = 0;
    size_t *ix = fs_malloc(cap * sizeof *ix);
    if (!ix)
        return FS_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        ix[i] = i;
        total += (double)fs_job_milli(&f->jobs[i]);
    }
    for (size_t i = n; i > 1; i--) {   /* Fisher-Yates */
        size_t k = gsl_rng_uniform_int(r, i);
        size_t t = ix[i - 1];
        ix[i - 1] = ix[k];
        ix[k] = t;
    }
    while (total > target && n > 0) {
        size_t k = gsl_rng_uniform_int(r, n);
        total -= (double)fs_job_milli(&f->jobs[ix[k]]);
        memmove(ix + k, ix + k + 1, (n - k - 1) * sizeof *ix);
        n--;
    }
    for (;;) {
        size_t k = gsl_rng_uniform_int(r, f->n_jobs);
        double m = (double)fs_job_milli(&f->jobs[k]);
        if (total + m > target)
            break;
        if (fs_grow((void **)&ix, &cap, n + 1, sizeof *ix)) {
            fs_free(ix);
            return FS_ENOMEM;
        }
        ix[n++] = k;
        total += m;
    }
    *out = ix;
    *n_out = n;
    return 0;
}

static int load_jobs(frag_t *f, fs_source_t *src, fs_error_t *err)
{
    size_t cap = 0;
    for (;;) {
        if (fs_grow((void **)&f->jobs, &cap, f->n_jobs + 4096, sizeof *f->jobs))
            return fs_error_set(err, FS_ENOMEM, "out of memory");
        size_t n = 0;
        int rc = fs_source_next(src, f->jobs + f->n_jobs, 4096, &n, err);
        if (rc)
            return rc;
        if (n == 0)
            return 0;
        f->n_jobs += n;
    }
}

/* GPU type -> allowed pools, with the model's rule (fs_fleetcfg_type_allows). */
static int map_types(frag_t *f, fs_source_t *src, const fs_cluster_t *c)
{
    f->n_types = fs_source_gpu_type_count(src);
    f->off = fs_calloc((size_t)f->n_types + 1, sizeof *f->off);
    f->pools = fs_malloc(((size_t)f->n_types * c->n_pools + 1) * sizeof *f->pools);
    if (!f->off || !f->pools)
        return FS_ENOMEM;
    size_t n = 0;
    for (int32_t t = 0; t < f->n_types; t++) {
        const char *name = fs_source_gpu_type_name(src, t);
        for (uint32_t p = 0; name && p < c->n_pools; p++)
            if (fs_fleetcfg_type_allows(name, c->pools[p].name, c->pools[p].gpu))
                f->pools[n++] = p;
        f->off[t + 1] = n;
    }
    return 0;
}

static const uint32_t *pools_of(const frag_t *f, const fs_job_t *j, size_t *n)
{
    if (j->gpu_type < 0 || j->gpu_type >= f->n_types) {
        *n = 0;
        return NULL;
    }
    *n = f->off[j->gpu_type + 1] - f->off[j->gpu_type];
    return f->pools + f->off[j->gpu_type];
}

/* The allocation ratio at demand step `step`, and its CSV row. */
static void record(double *ratio, size_t step, const fs_cluster_t *c, double cap, double requested,
                   uint64_t placed, uint64_t failed, FILE *csv, const char *kname, uint64_t r)
{
    ratio[step] = (double)c->milli_busy / cap;
    if (csv)
        fprintf(csv, "%s,%llu,%.2f,%.0f,%llu,%.0f,%.6f,%llu,%llu\n", kname, (unsigned long long)r,
                (double)(step + 1) * FS_FRAG_STEP, requested, (unsigned long long)c->milli_busy, cap,
                ratio[step], (unsigned long long)placed, (unsigned long long)failed);
}

/* One run: placement kind, replication r.  ratio[i] = allocation ratio
 * when the demand first reached (i + 1) x FS_FRAG_STEP of capacity. */
static int run_one(const frag_t *f, int kind, uint64_t r, double *ratio, size_t n_steps,
                   uint64_t *failed, uint64_t *placed, FILE *csv, const char *kname,
                   fs_error_t *err)
{
    fs_cluster_t c;
    int rc = fs_cluster_init(&c, &f->cfg->cluster, err);
    if (rc)
        return rc;
    fs_placer_t *pl = NULL;
    fs_rng_t rng = {0};
    size_t *order = NULL, n_order = 0, next = 0;
    rc = fs_placer_create(&c, kind, f->cfg->scheduler.candidates, &f->cfg->cluster, f->cfg->seed, r,
                          &pl, err);
    if (rc)
        goto out;
    fs_placer_set_scoring(pl, f->cfg->scheduler.node_score,
                          f->cfg->scheduler.w_gpu, f->cfg->scheduler.w_cpu, f->cfg->scheduler.w_mem);
    fs_placer_set_kube(pl, f->cfg->scheduler.pct_nodes_to_score, f->cfg->scheduler.w_balanced);
    if ((rc = fs_rng_init(&rng, f->cfg->seed, r, FS_RNG_TRACE, 0)) != 0) {
        fs_error_set(err, rc, "out of memory");
        goto out;
    }
    if (fs_placer_learns(pl) && !f->learned)    /* given: the pod list's shapes */
        for (size_t i = 0; i < f->n_jobs; i++) {
            size_t np;
            const uint32_t *pp = pools_of(f, &f->jobs[i], &np);
            fs_podreq_t q = fs_podreq_of(&f->jobs[i]);
            if (f->atypical && f->atypical[i])
                continue;
            /* a type no pool has: pp != NULL, np == 0, in the total weight only */
            if ((rc = fs_placer_observe_pod(pl, &c, &q, pp, np, 1))) {
                fs_error_set(err, rc, "out of memory");
                goto out;
            }
        }
    double cap = (double)c.gpus_total * FS_GPU_MILLI_WHOLE, requested = 0;
    size_t step = 0;
    *failed = *placed = 0;
    if (f->draw_list &&
        (rc = draw_list(f, &rng, (double)n_steps * FS_FRAG_STEP * cap * (1 + 1e-12), &order, &n_order))) {
        fs_error_set(err, rc, "out of memory");
        goto out;
    }
    /* uniform draws stop at the last step; a list is placed whole (its CPU-only
     * pods after the last GPU pod too) */
    while (f->draw_list || step < n_steps) {
        if (f->draw_list && next == n_order) {  /* the list is placed: the rest as it ends */
            for (; step < n_steps; step++)
                record(ratio, step, &c, cap, requested, *placed, *failed, csv, kname, r);
            break;
        }
        const fs_job_t *j = &f->jobs[f->draw_list ? order[next++]
                                                  : gsl_rng_uniform_int(fs_rng_gsl(&rng),
                                                                        f->n_jobs)];
        size_t np;
        const uint32_t *pp = pools_of(f, j, &np);
        fs_podreq_t q = fs_podreq_of(j);
        if (fs_placer_learns(pl) && f->learned &&
            (rc = fs_placer_observe_pod(pl, &c, &q, pp, np, 1))) {
            fs_error_set(err, rc, "out of memory");
            goto out;
        }
        /* a pod with a GPU type that no pool has cannot run: it fails */
        fs_placement_t where;
        /* a pod (FS_JOB_SINGLE_NODE: openb) goes on one node, never split */
        rc = j->gpu_type >= 0 && np == 0 ? 0
             : j->flags & FS_JOB_SINGLE_NODE ? fs_placer_place_pod(pl, &c, pp, np, &q, &where)
                                             : fs_placer_place(pl, &c, pp, np, j->gpus,
                                                               j->gpu_milli, &where);
        if (rc < 0) {
            fs_error_set(err, rc, "out of memory");
            goto out;
        }
        if (rc == 1) {
            fs_placement_release(&where);   /* pods never leave: the GPUs stay taken */
            ++*placed;
        } else {
            ++*failed;
        }
        rc = 0;
        requested += (double)fs_job_milli(j);
        for (; step < n_steps && requested >= (double)(step + 1) * FS_FRAG_STEP * cap * (1 - 1e-12); step++)
            record(ratio, step, &c, cap, requested, *placed, *failed, csv, kname, r);
    }
    if (f->show_pools)
        for (uint32_t p = 0; p < c.n_pools; p++) {
            const fs_pool_t *q = &c.pools[p];
            uint64_t sf = 0;
            for (uint32_t v = q->first_node; v < q->first_node + q->n_nodes; v++)
                for (uint32_t k = 0; k < q->gpn; k++)
                    if (fs_cluster_slot_used(&c, q, v, k))
                        sf += 1000 - fs_cluster_slot_used(&c, q, v, k);
            fprintf(stderr, "%s r%llu pool %-10s gpus %5llu free whole %5llu shared open %5llu free milli in shared %7llu\n",
                    kname, (unsigned long long)r, q->name, (unsigned long long)q->gpus_total,
                    (unsigned long long)q->gpus_free, (unsigned long long)q->n_shared,
                    (unsigned long long)sf);
        }
out:
    fs_free(order);
    if (rng.g)
        fs_rng_release(&rng);
    fs_placer_destroy(pl);
    fs_cluster_release(&c);
    return rc;
}

/* One (placement, seed) run of the experiment, run by a worker thread: its
 * CSV rows go to a buffer of its own, written in task order afterwards, so
 * the file is the same however many threads ran. */
typedef struct task {
    int kind;
    const char *kname;
    uint64_t r;
    double *ratio;          /* n_steps */
    uint64_t failed, placed;
    char *csv;              /* the rows (fs_malloc'd; NULL: no -o or none) */
    size_t csv_len;
    int rc;
    fs_error_t err;
} task_t;

typedef struct workers {
    fs_alloc_ctx_t *mem;    /* the allocation context of the thread that started them */
    const frag_t *f;
    task_t *t;
    size_t n, n_steps;
    int want_csv;
    atomic_size_t next;
} workers_t;

/* The rows of an open_memstream buffer, moved into a block of fs_alloc (so
 * that the buffers kept until every task is done are counted by the hook);
 * the C library's buffer is freed at once.  0, or FS_ENOMEM. */
static int own_rows(task_t *t, char *buf)
{
    if (!buf)
        return 0;
    char *c = fs_malloc(t->csv_len + 1);
    if (c) {
        memcpy(c, buf, t->csv_len);
        c[t->csv_len] = '\0';
    }
    free(buf);  /* libc's (open_memstream): not a block of fs_alloc */
    t->csv = c;
    return c ? 0 : FS_ENOMEM;
}

static void *work(void *arg)
{
    workers_t *w = arg;
    fs_alloc_ctx_t *prev = fs_alloc_bind(w->mem);
    for (;;) {
        size_t i = atomic_fetch_add(&w->next, 1);
        if (i >= w->n)
            break;
        task_t *t = &w->t[i];
        char *buf = NULL;
        FILE *m = w->want_csv ? open_memstream(&buf, &t->csv_len) : NULL;
        if (w->want_csv && !m) {
            t->rc = fs_error_set(&t->err, FS_ENOMEM, "out of memory");
            continue;
        }
        t->rc = run_one(w->f, t->kind, t->r, t->ratio, w->n_steps, &t->failed, &t->placed, m,
                        t->kname, &t->err);
        if (m && (fclose(m) | own_rows(t, buf)) && !t->rc)
            t->rc = fs_error_set(&t->err, FS_ENOMEM, "out of memory");
    }
    fs_alloc_bind(prev);
    return NULL;
}

static void mean_sd(const double *x, size_t n, double *m, double *sd)
{
    double s = 0, q = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    *m = s / (double)n;
    for (size_t i = 0; i < n; i++)
        q += (x[i] - *m) * (x[i] - *m);
    *sd = n > 1 ? sqrt(q / (double)(n - 1)) : 0;
}

/* The trace's pods, the cluster as built (c0: its size for the table), the
 * pools of each GPU type and the typical shapes. */
static int load(frag_t *f, fs_source_t **src, fs_cluster_t *c0, int *have_c0, fs_error_t *err)
{
    const fs_config_t *cfg = f->cfg;
    if (cfg->workload.kind != FS_WORKLOAD_TRACE)
        return fs_error_set(err, FS_EINVAL, "%s: the workload must be a trace (workload.trace)",
                            cfg->source_path ? cfg->source_path : "the scenario");
    int rc = fs_trace_open(cfg->workload.trace.format ? cfg->workload.trace.format : "native",
                           cfg->workload.trace.path, &cfg->workload.trace.opts, src, err);
    if (!rc)
        rc = load_jobs(f, *src, err);
    if (!rc && (rc = fs_cluster_init(c0, &cfg->cluster, err)) == 0)
        *have_c0 = 1;
    if (!rc && ((rc = map_types(f, *src, c0)) != 0 || (rc = mark_typical(f)) != 0))
        fs_error_set(err, rc, "out of memory");
    if (!rc && f->n_jobs == 0)
        rc = fs_error_set(err, FS_EINVAL, "%s: the trace has no jobs", cfg->workload.trace.path);
    return rc;
}

/* Runs the tasks on `threads` threads (this one among them). */
static void run_tasks(const frag_t *f, task_t *tasks, size_t n_tasks, size_t n_steps,
                      unsigned threads, int want_csv)
{
    size_t nt = threads;
    if (nt == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        nt = cpus > 0 ? (size_t)cpus : 1;
    }
    if (f->show_pools || nt > n_tasks)
        nt = f->show_pools ? 1 : n_tasks;
    workers_t w = {.mem = fs_alloc_bound(), .f = f, .t = tasks, .n = n_tasks,
                   .n_steps = n_steps, .want_csv = want_csv};
    atomic_init(&w.next, 0);
    pthread_t *th = fs_calloc(nt, sizeof *th);
    size_t started = 0;
    while (th && started + 1 < nt && pthread_create(&th[started], NULL, work, &w) == 0)
        started++;
    work(&w);   /* this thread works too */
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    fs_free(th);
}

/* The CSV (header, then every task's rows in task order), or the first
 * task's error. */
static int write_rows(const fs_frag_opts_t *o, const task_t *tasks, size_t n_tasks, fs_error_t *err)
{
    for (size_t i = 0; i < n_tasks; i++)
        if (tasks[i].rc) {
            *err = tasks[i].err;
            return tasks[i].rc;
        }
    if (!o->csv)
        return 0;
    int werr = fprintf(o->csv, "placement,seed,demand,requested_milli,allocated_milli,"
                               "capacity_milli,alloc_ratio,placed,failed\n") < 0;
    for (size_t i = 0; i < n_tasks && !werr; i++)
        werr = tasks[i].csv_len &&
               fwrite(tasks[i].csv, 1, tasks[i].csv_len, o->csv) != tasks[i].csv_len;
    if (werr)
        return fs_error_set(err, FS_EIO, "error writing '%s': %s",
                            o->csv_name ? o->csv_name : "the CSV", strerror(errno ? errno : EIO));
    return 0;
}

/* Per placement: mean and sd over the seeds at 100% and at the end. */
static int summarize(const fs_frag_opts_t *o, const task_t *tasks, const double *ratio,
                     size_t n_steps, fs_frag_result_t *res, fs_error_t *err)
{
    size_t nk = o->n_kinds, seeds = (size_t)o->seeds;
    double *at100 = fs_malloc(2 * seeds * sizeof *at100), *atend = at100 + seeds;
    res->at100_mean = fs_calloc(5 * nk, sizeof *res->at100_mean);
    if (!at100 || !res->at100_mean) {
        fs_free(at100);
        return fs_error_set(err, FS_ENOMEM, "out of memory");
    }
    res->at100_sd = res->at100_mean + nk;
    res->atend_mean = res->at100_sd + nk;
    res->atend_sd = res->atend_mean + nk;
    res->failed_mean = res->atend_sd + nk;
    size_t i100 = (size_t)floor(1.0 / FS_FRAG_STEP + 1e-9) - 1;
    res->reached_100 = i100 < n_steps;
    for (size_t k = 0; k < nk; k++) {
        double fails = 0;
        const double *rk = ratio + k * seeds * n_steps;
        for (size_t r = 0; r < seeds; r++) {
            fails += (double)tasks[k * seeds + r].failed;
            at100[r] = i100 < n_steps ? rk[r * n_steps + i100] : NAN;
            atend[r] = rk[r * n_steps + n_steps - 1];
        }
        mean_sd(at100, seeds, &res->at100_mean[k], &res->at100_sd[k]);
        mean_sd(atend, seeds, &res->atend_mean[k], &res->atend_sd[k]);
        res->failed_mean[k] = fails / (double)seeds;
    }
    fs_free(at100);
    return 0;
}

int fs_frag_run(const fs_config_t *cfg, const fs_frag_opts_t *o, fs_frag_result_t *res,
                fs_error_t *err)
{
    memset(res, 0, sizeof *res);
    frag_t f = {.cfg = cfg, .learned = o->learned, .show_pools = o->show_pools,
                .demand = o->demand, .typical = o->typical, .draw_list = o->draw_list};
    fs_source_t *src = NULL;
    fs_cluster_t c0;
    int have_c0 = 0;
    int rc = load(&f, &src, &c0, &have_c0, err);
    if (have_c0) {
        res->gpus = c0.gpus_total;
        res->n_pools = c0.n_pools;
        fs_cluster_release(&c0);
    }
    res->n_pods = f.n_jobs;
    size_t n_steps = (size_t)floor(o->demand / FS_FRAG_STEP + 1e-9);
    size_t n_tasks = o->n_kinds * (size_t)o->seeds;
    res->n_steps = n_steps;
    double *ratio = NULL;
    task_t *tasks = NULL;
    if (!rc) {
        ratio = fs_malloc((n_tasks * n_steps + 1) * sizeof *ratio);
        tasks = fs_calloc(n_tasks + 1, sizeof *tasks);
        if (!ratio || !tasks)
            rc = fs_error_set(err, FS_ENOMEM, "out of memory");
    }
    for (size_t i = 0; !rc && i < n_tasks; i++) {
        tasks[i].kind = o->kinds[i / o->seeds];
        tasks[i].kname = o->names[i / o->seeds];
        tasks[i].r = i % o->seeds;
        tasks[i].ratio = ratio + i * n_steps;
    }
    if (!rc) {
        run_tasks(&f, tasks, n_tasks, n_steps, o->threads, o->csv != NULL);
        rc = write_rows(o, tasks, n_tasks, err);
    }
    if (!rc)
        rc = summarize(o, tasks, ratio, n_steps, res, err);
    for (size_t i = 0; tasks && i < n_tasks; i++)
        fs_free(tasks[i].csv);
    fs_free(tasks);
    fs_free(ratio);
    fs_free(f.jobs);
    fs_free(f.atypical);
    fs_free(f.pools);
    fs_free(f.off);
    if (src)
        fs_source_destroy(src);
    if (rc)
        fs_frag_result_release(res);
    return rc;
}

void fs_frag_result_release(fs_frag_result_t *res)
{
    fs_free(res->at100_mean);
    res->at100_mean = res->at100_sd = res->atend_mean = res->atend_sd = res->failed_mean = NULL;
}
