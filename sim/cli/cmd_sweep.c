/*
 * fleetsim sweep: every (point, replication) of a scenario's sweep section,
 * on threads, MPI ranks (under mpirun) or as one shard of a job array.
 * The work itself is in fs_sweeprun.c; docs/sweeps.md is the user's guide.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "fs_cli.h"
#include "../api/fs_sweeprun.h"
#include "../../analysis/fs_index.h"
#include "../../analysis/fs_tenants.h"
#include "../../scenarios/fs_sweep.h"
#include "../fs_alloc.h"
#include "../fs_clock.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void print_points(const fs_sweep_plan_t *p, size_t shard, size_t n_shards)
{
    printf("sweep %s: %zu point%s x %llu replication%s = %zu runs (%s)\n", p->name, p->n_points,
           p->n_points == 1 ? "" : "s", (unsigned long long)p->replications,
           p->replications == 1 ? "" : "s", p->n_runs, p->combine == FS_SWEEP_ZIP ? "zip" : "grid");
    for (size_t pt = 0; pt < p->n_points; pt++) {
        printf("point %zu:", pt);
        for (size_t j = 0; j < p->n_params; j++)
            printf(" %s=%s", p->params[j].key, p->params[j].values[fs_sweep_value_index(p, pt, j)]);
        printf("\n");
    }
    if (n_shards > 1) {
        printf("shard %zu/%zu runs:", shard, n_shards);
        for (size_t k = 0; k < p->n_runs; k++)
            if (fs_sweep_shard_of(k, n_shards) == shard)
                printf(" %zu", k);
        printf("\n");
    }
}

typedef struct sweep_args {
    const char *scenario, *dir;
    const char **sets;
    size_t n_sets, shard, n_shards;
    int resume, dry, quiet, have_j;
    unsigned long long jobs;
    double every;           /* --progress (-1: the default) */
} sweep_args_t;

/* -1: --help was printed; 0: parsed; else the exit status. */
static int parse_args(int argc, char **argv, sweep_args_t *a)
{
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "sweep", argc, argv, fs_cli_find("sweep")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        const char *opt = g.opt ? g.opt : g.arg, *v = g.arg;
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("sweep"));
            return -1;
        } else if (id == 'o') {
            if (!v)
                return fs_cli_usage_error("sweep", "%s needs a directory", opt);
            a->dir = v;
        } else if (id == 'j') {
            if (!v || fs_cli_parse_u64(v, &a->jobs) || a->jobs < 1 || a->jobs > 4096)
                return fs_cli_usage_error("sweep", "-j needs a number of workers from 1 to 4096");
            a->have_j = 1;
        } else if (id == FS_OPT_SHARD) {
            if (!v || fs_cli_parse_shard(v, &a->shard, &a->n_shards))
                return fs_cli_usage_error("sweep", "--shard needs I/N with 0 <= I < N (e.g. "
                                          "--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)");
        } else if (id == FS_OPT_RESUME) {
            a->resume = 1;
        } else if (id == FS_OPT_DRY_RUN) {
            a->dry = 1;
        } else if (id == 'q') {
            a->quiet = 1;
        } else if (id == FS_OPT_PROGRESS) {
            int bad = fs_cli_parse_progress("sweep", v, &a->every);
            if (bad)
                return bad;
        } else if (id == FS_OPT_SET) {
            if (!v || !strchr(v, '='))
                return fs_cli_usage_error("sweep", "--set needs KEY=VALUE");
            a->sets[a->n_sets++] = v;
        } else if (id == FS_CLI_BAD) {
            return g.status;
        } else if (!a->scenario) {
            a->scenario = opt;
        } else {
            return fs_cli_usage_error("sweep", "only one scenario file may be given");
        }
    }
    if (!a->scenario || (!a->dir && !a->dry))
        return fs_cli_usage_error("sweep", "%s", !a->scenario ? "a scenario file is needed"
                                                              : "-o DIR is needed (the output directory)");
    return 0;
}

/* MPI: when an MPI launcher started us, every process joins the sweep.
 * 0 (*use_mpi, *rank, *size set), or an exit status. */
static int join_mpi(const sweep_args_t *a, int *argc, char ***argv, int *use_mpi, int *rank,
                    int *size)
{
    int launched = fs_sweep_mpi_launched();
    fs_error_t err;
    fs_error_clear(&err);
    if (launched < 1 || a->dry)
        return 0;
    if (!fs_sweep_mpi_available()) {
        if (launched > 1) {
            fprintf(stderr, "fleetsim sweep: started by an MPI launcher with %d processes, but "
                    "this fleetsim was built without MPI (install libopenmpi-dev and rebuild)\n",
                    launched);
            return 2;
        }
        return 0;
    }
    if (fs_sweep_mpi_init(argc, argv, rank, size, &err)) {
        fprintf(stderr, "fleetsim sweep: %s\n", err.msg);
        return 1;
    }
    *use_mpi = 1;
    return 0;
}

/* The counts after the runs (rank 0). */
static void print_report(const sweep_args_t *a, const fs_sweep_plan_t *plan,
                         const fs_sweep_report_t *rep, double wall, int use_mpi, int size)
{
    printf("sweep %s: %zu point%s x %llu replication%s = %zu runs\n", plan->name,
           plan->n_points, plan->n_points == 1 ? "" : "s",
           (unsigned long long)plan->replications, plan->replications == 1 ? "" : "s",
           plan->n_runs);
    if (a->n_shards > 1)
        printf("shard %zu/%zu: %zu runs of its %zu, %zu already finished\n", a->shard, a->n_shards,
               rep->runs_done, rep->runs_mine, rep->runs_skipped);
    else
        printf("ran %zu, %zu already finished, %zu failed; %.2f s on %s%llu %s%s\n",
               rep->runs_done, rep->runs_skipped, rep->runs_failed, wall,
               use_mpi ? "ranks x " : "", a->jobs, use_mpi ? "thread" : "process",
               a->jobs == 1 ? "" : use_mpi ? "s" : "es");
    if (rep->run_s > 0)   /* the serial share that bounds -j N (docs/performance.md) */
        printf("hdf5 lock    held %.3f s of %.2f s of runs (%.1f%%), waited for %.3f s%s\n",
               rep->h5_held_s, rep->run_s, 100.0 * rep->h5_held_s / rep->run_s, rep->h5_wait_s,
               use_mpi ? " (this rank)" : "");
    if (use_mpi) {
        printf("mpi          %d rank%s; runs done by rank:", size, size == 1 ? "" : "s");
        for (int r = 0; r < size && r < 64; r++)
            printf(" %zu", rep->runs_by_rank[r]);
        printf("\n");
    }
}

/* After a whole sweep: the per-tenant tables (analysis/fs_tenants.h), each
 * point's /tenants over its replications with intervals, and each point
 * minus point 0 paired by replication (the points share their random
 * streams, as versus's policies do).  Nothing when the runs have no tenants
 * or there are more than 16 points (fleetsim report DIR/index.h5 has them). */
static int print_tenants(const sweep_args_t *a, const fs_sweep_plan_t *plan)
{
    enum { MAX_POINTS = 16 };
    size_t np = plan->n_points, reps = (size_t)plan->replications;
    if (np > MAX_POINTS)
        return 0;
    fs_tenant_table_t t[MAX_POINTS];
    char label[MAX_POINTS][24];
    const char *labels[MAX_POINTS];
    int failed[MAX_POINTS] = {0};
    memset(t, 0, sizeof t);
    size_t plen = strlen(a->dir) + 80;
    char **paths = fs_calloc(reps ? reps : 1, sizeof *paths);
    int rc = paths ? 0 : FS_ENOMEM;
    for (size_t r = 0; r < reps && !rc; r++)
        if (!(paths[r] = fs_malloc(plen)))
            rc = FS_ENOMEM;
    fs_error_t err;
    fs_error_clear(&err);
    for (size_t pt = 0; pt < np && !rc; pt++) {
        for (size_t r = 0; r < reps; r++) {
            char f[64];
            snprintf(paths[r], plen, "%s/%s", a->dir, fs_index_run_file(pt, r, f, sizeof f));
        }
        snprintf(label[pt], sizeof label[pt], "point %zu", pt);
        labels[pt] = label[pt];
        rc = fs_tenant_table_load((const char *const *)paths, reps, &t[pt], &err);
    }
    if (!rc)
        rc = fs_tenant_print(stdout, t, labels, failed, np, 0, 0);
    else if (err.msg[0])
        fprintf(stderr, "fleetsim sweep: per-tenant tables: %s\n", err.msg);
    for (size_t pt = 0; pt < np; pt++)
        fs_tenant_table_release(&t[pt]);
    for (size_t r = 0; paths && r < reps; r++)
        fs_free(paths[r]);
    fs_free(paths);
    return rc;
}

/* Runs the plan's share into a->dir; an exit status (before the MPI finish). */
static int run_plan(const sweep_args_t *a, const fs_sweep_plan_t *plan, int use_mpi, int rank,
                    int size, double t0)
{
    fs_cli_catch_stop(0);
    fs_sweep_opts_t o;
    fs_sweep_opts_init(&o);
    o.dir = a->dir;
    o.threads = (unsigned)a->jobs;
    o.processes = 1;   /* -j N: N processes, each with its own HDF5 (threads under MPI) */
    o.shard = a->shard;
    o.n_shards = a->n_shards;
    o.resume = a->resume;
    fs_cli_progress_mode(a->every, rank != 0, &o.progress, &o.progress_every);
    o.interrupt = &fs_cli_stop;
    o.mpi = use_mpi;
    fs_sweep_report_t rep;
    fs_error_t err;
    fs_error_clear(&err);
    int rc = fs_sweep_execute(plan, &o, &rep, &err);
    double wall = fs_clock_wall() - t0;
    if (rank == 0) {
        if (rc)
            fprintf(stderr, "fleetsim sweep: %s\n", err.msg);
        /* a sweep refused before any run (directory in use, another sweep's
         * files, a bad output) prints no counts, as if it had run */
        if (!a->quiet && (rep.started || !rc)) {
            print_report(a, plan, &rep, wall, use_mpi, size);
            if (rep.index_written) {
                printf("index        %s/index.h5\n", a->dir);
                if (print_tenants(a, plan))
                    rc = FS_EIO;
            }
            else if (!rc && a->n_shards > 1)
                printf("when every shard has finished: fleetsim merge %s\n", a->dir);
        }
    }
    return rc ? fs_error_exit_status(rc) : 0;
}

int fs_cmd_sweep(int argc, char **argv)
{
    sweep_args_t a = {.jobs = 1, .every = -1};
    a.sets = fs_calloc((size_t)argc + 1, sizeof *a.sets);
    if (!a.sets)
        return 1;
    int use_mpi = 0, rank = 0, size = 1;
    int rc = parse_args(argc, argv, &a);
    if (!rc)
        rc = join_mpi(&a, &argc, &argv, &use_mpi, &rank, &size);
    if (rc) {
        fs_free(a.sets);
        return rc < 0 ? 0 : rc;
    }
    if (!a.have_j && !use_mpi) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        a.jobs = cpus > 0 ? (unsigned long long)cpus : 1;
    }

    double t0 = fs_clock_wall();
    fs_sweep_plan_t *plan = NULL;
    fs_error_t err;
    fs_error_clear(&err);
    rc = fs_sweep_plan_create(a.scenario, a.sets, a.n_sets, &plan, &err);
    fs_free(a.sets);
    if (rc) {
        if (rank == 0)
            fprintf(stderr, "%s\n", err.msg);
        rc = fs_error_exit_status(rc);
    } else if (a.dry) {
        print_points(plan, a.shard, a.n_shards);
    } else {
        rc = run_plan(&a, plan, use_mpi, rank, size, t0);
    }
    fs_sweep_plan_destroy(plan);
    return use_mpi ? fs_sweep_mpi_finish(rc) : rc;
}
