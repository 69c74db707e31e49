/*
 * fleetsim frag: the GPU fragmentation experiment of Weng et al., "Beware
 * of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
 * Gradient Descent" (USENIX ATC'23, section 6).  Pods never leave: pods of
 * the scenario's trace are drawn uniformly with replacement (stream
 * FS_RNG_TRACE keyed by (seed, replication r)), or (--draw list) the whole
 * list plus uniform draws, shuffled, as the ATC'23 simulator tunes its
 * workload, and placed one at a time on the scenario's cluster (GPUs, and
 * CPU and memory where pools model them; CPU-only pods hold CPU and add no
 * GPU demand) until the GPUs requested reach DEMAND x capacity;
 * a pod that does not fit is left out (counted).  Each placement sees the
 * same pods in the same order (common random numbers).  The allocation
 * ratio (allocated milli-GPUs / capacity) is recorded each time the demand
 * passes a multiple of 5% of capacity.  docs/validation.md has the openb
 * results; analysis/frag_openb.sh makes the table.
 */
#include "fs_cli.h"
#include "../../models/fs_cluster.h"
#include "../../models/fs_place.h"
#include "../../scenarios/fs_scenario.h"
#include "../../models/fs_fleetcfg.h"
#include "../../traces/fs_trace.h"
#include "../fs_alloc.h"
#include "../fs_out.h"
#include "fs_cliout.h"
#include "../fs_rng.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Placement names as in scheduler.placement (scenarios/fs_keys.c). */
static const struct {
    const char *name;
    int kind;
} kinds[] = {
    {"pack", FS_PLACE_PACK},       {"first_fit", FS_PLACE_FIRST_FIT}, {"best_fit", FS_PLACE_BEST_FIT},
    {"binpack", FS_PLACE_BINPACK}, {"spread", FS_PLACE_SPREAD},       {"random", FS_PLACE_RANDOM},
    {"topology", FS_PLACE_TOPOLOGY}, {"fgd", FS_PLACE_FGD},
    {"atc_best_fit", FS_PLACE_ATC_BEST_FIT}, {"gpu_packing", FS_PLACE_GPU_PACKING},
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])
#define MAX_RUN_KINDS 16
#define STEP 0.05

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
                (double)(step + 1) * STEP, requested, (unsigned long long)c->milli_busy, cap,
                ratio[step], (unsigned long long)placed, (unsigned long long)failed);
}

/* One run: placement kind, replication r.  ratio[i] = allocation ratio
 * when the demand first reached (i + 1) x STEP of capacity. */
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
        (rc = draw_list(f, &rng, (double)n_steps * STEP * cap * (1 + 1e-12), &order, &n_order))) {
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
        for (; step < n_steps && requested >= (double)(step + 1) * STEP * cap * (1 - 1e-12); step++)
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

int fs_cmd_frag(int argc, char **argv)
{
    const char *scenario = NULL, *output = NULL, *list = "random,best_fit,pack,fgd";
    const char **sets = fs_calloc((size_t)argc + 1, sizeof *sets);
    size_t n_sets = 0;
    unsigned long long seeds = 10, threads = 0;
    double demand = 1.3, typical = 1;
    int learned = 0, show_pools = 0, draw_mode = 0;
    if (!sets)
        return 1;
    int status = 2;
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "frag", argc, argv, fs_cli_find("frag")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        const char *a = g.opt ? g.opt : g.arg, *v = g.arg;
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("frag"));
            fs_free(sets);
            return 0;
        } else if (id == 'o') {
            if (!v) {
                fs_free(sets);
                return fs_cli_usage_error("frag", "%s needs a file name", a);
            }
            output = v;
        } else if (id == FS_OPT_PLACEMENTS) {
            if (!v) {
                fs_free(sets);
                return fs_cli_usage_error("frag", "--placements needs a list such as fgd,best_fit");
            }
            list = v;
        } else if (id == FS_OPT_SEEDS) {
            if (!v || fs_cli_parse_u64(v, &seeds) || seeds == 0 || seeds > 100000) {
                fs_free(sets);
                return fs_cli_usage_error("frag", "--seeds needs an integer from 1 to 100000");
            }
        } else if (id == FS_OPT_DEMAND) {
            char *end;
            if (!v || (demand = strtod(v, &end), *end) || !(demand >= STEP) ||
                demand > 100) {
                fs_free(sets);
                return fs_cli_usage_error("frag", "--demand needs a number from 0.05 to 100");
            }
        } else if (id == FS_OPT_SHAPES) {
            if (!v || (strcmp(v, "given") && strcmp(v, "learned"))) {
                fs_free(sets);
                return fs_cli_usage_error("frag", "--shapes needs given or learned");
            }
            learned = strcmp(v, "learned") == 0;
        } else if (id == FS_OPT_POOLS) {
            show_pools = 1;
        } else if (id == 'j') {
            if (!v || fs_cli_parse_u64(v, &threads) || threads < 1 || threads > 4096) {
                fs_free(sets);
                return fs_cli_usage_error("frag", "-j needs a thread count from 1 to 4096");
            }
        } else if (id == FS_OPT_TYPICAL) {
            char *end;
            if (!v || (typical = strtod(v, &end), *end) || !(typical > 0) || typical > 100) {
                fs_free(sets);
                return fs_cli_usage_error("frag", "--typical needs a percentage in (0, 100]");
            }
            typical /= 100;
        } else if (id == FS_OPT_DRAW) {
            if (!v || (strcmp(v, "uniform") && strcmp(v, "list"))) {
                fs_free(sets);
                return fs_cli_usage_error("frag", "--draw needs uniform or list");
            }
            draw_mode = strcmp(v, "list") == 0;
        } else if (id == FS_OPT_SET) {
            if (!v || !strchr(v, '=')) {
                fs_free(sets);
                return fs_cli_usage_error("frag", "--set needs KEY=VALUE");
            }
            sets[n_sets++] = v;
        } else if (id == FS_CLI_BAD) {
            fs_free(sets);
            return g.status;
        } else if (!scenario) {
            scenario = a;
        } else {
            fs_free(sets);
            return fs_cli_usage_error("frag", "only one scenario file may be given");
        }
    }
    if (!scenario) {
        fs_free(sets);
        return fs_cli_usage_error("frag", "a scenario file is needed (see fleetsim frag --help)");
    }
    /* the placements to compare */
    int run_kinds[MAX_RUN_KINDS];
    const char *run_names[MAX_RUN_KINDS];
    size_t n_run = 0;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        size_t k = 0;
        while (k < N_KINDS && (strlen(kinds[k].name) != len || strncmp(kinds[k].name, p, len)))
            k++;
        if (k == N_KINDS || n_run == MAX_RUN_KINDS) {
            fs_free(sets);
            return fs_cli_usage_error("frag", "--placements: '%.*s' is not a placement (pack, "
                                      "first_fit, best_fit, binpack, spread, random, topology, "
                                      "fgd, atc_best_fit, gpu_packing)",
                                      (int)len, p);
        }
        run_kinds[n_run] = kinds[k].kind;
        run_names[n_run++] = kinds[k].name;
        p += len + (p[len] == ',');
    }

    fs_config_t cfg;
    fs_error_t err;
    fs_error_clear(&err);
    int rc = fs_scenario_load_file(scenario, sets, n_sets, &cfg, &err);
    fs_free(sets);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        return rc == FS_EINVAL ? 2 : 1;
    }
    const char *inputs[FS_SCENARIO_MAX_INPUTS];
    size_t n_inputs = 0;
    fs_scenario_inputs(&cfg, inputs, &n_inputs, FS_SCENARIO_MAX_INPUTS);
    if ((rc = fs_cli_check_output("frag", output, inputs, n_inputs)) != 0) {
        fs_config_release(&cfg);
        return rc;
    }
    fs_out_t out = {0};     /* the CSV: written to a temporary, renamed when complete */
    if (output && (rc = fs_out_prepare(&out, output, &err)) != 0) {
        fprintf(stderr, "fleetsim frag: %s\n", err.msg);
        fs_config_release(&cfg);
        return fs_error_exit_status(rc);
    }
    frag_t f = {.cfg = &cfg, .learned = learned, .show_pools = show_pools, .demand = demand,
                .typical = typical, .draw_list = draw_mode};
    fs_source_t *src = NULL;
    fs_cluster_t c0;
    int have_c0 = 0;
    double *ratio = NULL;
    FILE *csv = NULL;
    if (cfg.workload.kind != FS_WORKLOAD_TRACE) {
        fprintf(stderr, "fleetsim frag: %s: the workload must be a trace (workload.trace)\n", scenario);
        goto done;
    }
    rc = fs_trace_open(cfg.workload.trace.format ? cfg.workload.trace.format : "native",
                       cfg.workload.trace.path, &cfg.workload.trace.opts, &src, &err);
    if (!rc)
        rc = load_jobs(&f, src, &err);
    if (!rc && (rc = fs_cluster_init(&c0, &cfg.cluster, &err)) == 0)
        have_c0 = 1;
    if (!rc && (rc = map_types(&f, src, &c0)) != 0)
        fs_error_set(&err, rc, "out of memory");
    if (rc) {
        fprintf(stderr, "fleetsim frag: %s\n", err.msg);
        status = rc == FS_EINVAL ? 2 : 1;
        goto done;
    }
    if (!rc && (rc = mark_typical(&f)) != 0) {
        fprintf(stderr, "fleetsim frag: out of memory\n");
        status = 1;
        goto done;
    }
    if (f.n_jobs == 0) {
        fprintf(stderr, "fleetsim frag: %s: the trace has no jobs\n", cfg.workload.trace.path);
        goto done;
    }
    status = 1;
    size_t n_steps = (size_t)floor(demand / STEP + 1e-9);
    size_t n_tasks = n_run * (size_t)seeds;
    int werr = 0;
    ratio = fs_malloc((n_tasks * n_steps + 2 * (size_t)seeds) * sizeof *ratio);
    task_t *tasks = fs_calloc(n_tasks, sizeof *tasks);
    if (!ratio || !tasks) {
        fs_free(tasks);
        fprintf(stderr, "fleetsim frag: out of memory\n");
        goto done;
    }
    if (output && !(csv = fopen(out.tmp, "w"))) {
        fprintf(stderr, "fleetsim frag: cannot write '%s': %s\n", output, strerror(errno));
        goto done;
    }
    if (csv)
        fprintf(csv, "placement,seed,demand,requested_milli,allocated_milli,capacity_milli,"
                     "alloc_ratio,placed,failed\n");
    printf("fragmentation experiment: %zu pods (%s), %llu GPUs in %u pools, %llu seeds, demand to %.0f%%\n",
           f.n_jobs, cfg.workload.trace.path, (unsigned long long)c0.gpus_total, c0.n_pools, seeds,
           demand * 100);
    printf("%-10s %22s %22s %14s\n", "placement", "alloc @100% (sd)",
           "alloc @end (sd)", "failed @end");
    for (size_t i = 0; i < n_tasks; i++) {
        tasks[i].kind = run_kinds[i / seeds];
        tasks[i].kname = run_names[i / seeds];
        tasks[i].r = i % seeds;
        tasks[i].ratio = ratio + i * n_steps;
    }
    {
        if (threads == 0) {
            long cpus = sysconf(_SC_NPROCESSORS_ONLN);
            threads = cpus > 0 ? (unsigned long long)cpus : 1;
        }
        if (show_pools || threads > n_tasks)
            threads = show_pools ? 1 : n_tasks;
        workers_t w = {.mem = fs_alloc_bound(), .f = &f, .t = tasks, .n = n_tasks,
                       .n_steps = n_steps, .want_csv = !!csv};
        atomic_init(&w.next, 0);
        pthread_t *th = fs_calloc((size_t)threads, sizeof *th);
        size_t started = 0;
        while (th && started + 1 < threads && pthread_create(&th[started], NULL, work, &w) == 0)
            started++;
        work(&w);   /* this thread works too */
        for (size_t i = 0; i < started; i++)
            pthread_join(th[i], NULL);
        fs_free(th);
    }
    for (size_t i = 0; i < n_tasks; i++) {
        if (tasks[i].rc) {
            fprintf(stderr, "fleetsim frag: %s\n", tasks[i].err.msg);
            for (size_t j = 0; j < n_tasks; j++)
                fs_free(tasks[j].csv);
            fs_free(tasks);
            goto done;
        }
        if (csv && tasks[i].csv_len && fwrite(tasks[i].csv, 1, tasks[i].csv_len, csv) != tasks[i].csv_len)
            werr = errno ? errno : EIO;
    }
    for (size_t i = 0; i < n_tasks; i++)
        fs_free(tasks[i].csv);
    for (size_t k = 0; k < n_run; k++) {
        double fails = 0;
        const double *rk = ratio + k * (size_t)seeds * n_steps;
        for (uint64_t r = 0; r < seeds; r++)
            fails += (double)tasks[k * seeds + r].failed;
        double *at100 = ratio + n_tasks * n_steps, *atend = at100 + seeds;
        size_t i100 = (size_t)floor(1.0 / STEP + 1e-9) - 1;
        for (uint64_t r = 0; r < seeds; r++) {
            at100[r] = i100 < n_steps ? rk[r * n_steps + i100] : NAN;
            atend[r] = rk[r * n_steps + n_steps - 1];
        }
        double m1, s1, m2, s2;
        mean_sd(at100, seeds, &m1, &s1);
        mean_sd(atend, seeds, &m2, &s2);
        if (i100 < n_steps)
            printf("%-10s %13.2f%% (%5.2f) %13.2f%% (%5.2f) %14.1f\n", run_names[k], 100 * m1,
                   100 * s1, 100 * m2, 100 * s2, fails / (double)seeds);
        else    /* --demand < 1: the runs stop before 100% of the capacity is asked */
            printf("%-10s %22s %13.2f%% (%5.2f) %14.1f\n", run_names[k], "not reached", 100 * m2,
                   100 * s2, fails / (double)seeds);
    }
    fs_free(tasks);
    if (werr) {
        fprintf(stderr, "fleetsim frag: error writing '%s': %s\n", output, strerror(werr));
        goto done;
    }
    status = 0;
done:
    if (csv && fclose(csv) && status == 0) {
        fprintf(stderr, "fleetsim frag: error writing '%s': %s\n", output, strerror(errno));
        status = 1;
    }
    if (csv && status == 0 && fs_out_commit(&out, NULL, &err) != 0) {
        fprintf(stderr, "fleetsim frag: %s\n", err.msg);
        status = 1;
    } else if (csv && status != 0) {
        remove(out.tmp);
    }
    fs_out_release(&out);
    fs_free(ratio);
    fs_free(f.jobs);
    fs_free(f.atypical);
    fs_free(f.pools);
    fs_free(f.off);
    if (have_c0)
        fs_cluster_release(&c0);
    if (src)
        fs_source_destroy(src);
    fs_config_release(&cfg);
    return status;
}
