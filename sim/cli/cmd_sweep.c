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
#include "../../scenarios/fs_sweep.h"
#include "../fs_alloc.h"
#include "../fs_clock.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* "I/N" with 0 <= I < N. */
static int parse_shard(const char *s, size_t *i, size_t *n)
{
    const char *slash = strchr(s, '/');
    unsigned long long a, b;
    char left[32];
    if (!slash || (size_t)(slash - s) >= sizeof left)
        return -1;
    memcpy(left, s, (size_t)(slash - s));
    left[slash - s] = '\0';
    if (fs_cli_parse_u64(left, &a) || fs_cli_parse_u64(slash + 1, &b) || b == 0 || a >= b ||
        b > 1000000)
        return -1;
    *i = (size_t)a;
    *n = (size_t)b;
    return 0;
}

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

int fs_cmd_sweep(int argc, char **argv)
{
    const char *scenario = NULL, *dir = NULL;
    const char **sets = fs_calloc((size_t)argc + 1, sizeof *sets);
    size_t n_sets = 0, shard = 0, n_shards = 0;
    int resume = 0, dry = 0, quiet = 0, have_j = 0;
    unsigned long long jobs = 1;
    double every = -1;      /* --progress (-1: the default) */
    if (!sets)
        return 1;
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "sweep", argc, argv, fs_cli_find("sweep")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        const char *a = g.opt ? g.opt : g.arg, *v = g.arg;
        int bad = 0;
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("sweep"));
            fs_free(sets);
            return 0;
        } else if (id == 'o') {
            if (!v)
                bad = fs_cli_usage_error("sweep", "%s needs a directory", a);
            else
                dir = v;
        } else if (id == 'j') {
            if (!v || fs_cli_parse_u64(v, &jobs) || jobs < 1 || jobs > 4096)
                bad = fs_cli_usage_error("sweep", "-j needs a number of threads from 1 to 4096");
            have_j = 1;
        } else if (id == FS_OPT_SHARD) {
            if (!v || parse_shard(v, &shard, &n_shards))
                bad = fs_cli_usage_error("sweep", "--shard needs I/N with 0 <= I < N (e.g. "
                                         "--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)");
        } else if (id == FS_OPT_RESUME) {
            resume = 1;
        } else if (id == FS_OPT_DRY_RUN) {
            dry = 1;
        } else if (id == 'q') {
            quiet = 1;
        } else if (id == FS_OPT_PROGRESS) {
            bad = fs_cli_parse_progress("sweep", v, &every);
        } else if (id == FS_OPT_SET) {
            if (!v || !strchr(v, '='))
                bad = fs_cli_usage_error("sweep", "--set needs KEY=VALUE");
            else
                sets[n_sets++] = v;
        } else if (id == FS_CLI_BAD) {
            bad = g.status;
        } else if (!scenario) {
            scenario = a;
        } else {
            bad = fs_cli_usage_error("sweep", "only one scenario file may be given");
        }
        if (bad) {
            fs_free(sets);
            return bad;
        }
    }
    if (!scenario || (!dir && !dry)) {
        fs_free(sets);
        return fs_cli_usage_error("sweep", "%s", !scenario ? "a scenario file is needed"
                                                           : "-o DIR is needed (the output directory)");
    }

    /* MPI: when an MPI launcher started us, every process joins the sweep. */
    int launched = fs_sweep_mpi_launched(), use_mpi = 0, rank = 0, size = 1;
    fs_error_t err;
    fs_error_clear(&err);
    if (launched >= 1 && !dry) {
        if (!fs_sweep_mpi_available()) {
            if (launched > 1) {
                fprintf(stderr, "fleetsim sweep: started by an MPI launcher with %d processes, but "
                        "this fleetsim was built without MPI (install libopenmpi-dev and rebuild)\n",
                        launched);
                fs_free(sets);
                return 2;
            }
        } else {
            if (fs_sweep_mpi_init(&argc, &argv, &rank, &size, &err)) {
                fprintf(stderr, "fleetsim sweep: %s\n", err.msg);
                fs_free(sets);
                return 1;
            }
            use_mpi = 1;
        }
    }
    if (!have_j && !use_mpi) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cpus > 0 ? (unsigned long long)cpus : 1;
    }

    double t0 = fs_clock_wall();
    fs_sweep_plan_t *plan = NULL;
    int rc = fs_sweep_plan_create(scenario, sets, n_sets, &plan, &err);
    fs_free(sets);
    if (rc) {
        if (rank == 0)
            fprintf(stderr, "%s\n", err.msg);
        rc = fs_error_exit_status(rc);
        return use_mpi ? fs_sweep_mpi_finish(rc) : rc;
    }
    if (dry) {
        print_points(plan, shard, n_shards);
        fs_sweep_plan_destroy(plan);
        return 0;
    }

    fs_cli_catch_stop(0);

    fs_sweep_opts_t o;
    fs_sweep_opts_init(&o);
    o.dir = dir;
    o.threads = (unsigned)jobs;
    o.shard = shard;
    o.n_shards = n_shards;
    o.resume = resume;
    fs_cli_progress_mode(every, rank != 0, &o.progress, &o.progress_every);
    o.interrupt = &fs_cli_stop;
    o.mpi = use_mpi;
    fs_sweep_report_t rep;
    rc = fs_sweep_execute(plan, &o, &rep, &err);
    double wall = fs_clock_wall() - t0;
    if (rank == 0) {
        if (rc)
            fprintf(stderr, "fleetsim sweep: %s\n", err.msg);
        /* a sweep refused before any run (directory in use, another sweep's
         * files, a bad output) prints no counts, as if it had run */
        if (!quiet && (rep.started || !rc)) {
            printf("sweep %s: %zu point%s x %llu replication%s = %zu runs\n", plan->name,
                   plan->n_points, plan->n_points == 1 ? "" : "s",
                   (unsigned long long)plan->replications, plan->replications == 1 ? "" : "s",
                   plan->n_runs);
            if (n_shards > 1)
                printf("shard %zu/%zu: %zu runs of its %zu, %zu already finished\n", shard, n_shards,
                       rep.runs_done, rep.runs_mine, rep.runs_skipped);
            else
                printf("ran %zu, %zu already finished, %zu failed; %.2f s on %s%llu thread%s\n",
                       rep.runs_done, rep.runs_skipped, rep.runs_failed, wall,
                       use_mpi ? "ranks x " : "", jobs, jobs == 1 ? "" : "s");
            if (use_mpi) {
                printf("mpi          %d rank%s; runs done by rank:", size, size == 1 ? "" : "s");
                for (int r = 0; r < size && r < 64; r++)
                    printf(" %zu", rep.runs_by_rank[r]);
                printf("\n");
            }
            if (rep.index_written)
                printf("index        %s/index.h5\n", dir);
            else if (!rc && n_shards > 1)
                printf("when every shard has finished: fleetsim merge %s\n", dir);
        }
    }
    fs_sweep_plan_destroy(plan);
    rc = rc ? fs_error_exit_status(rc) : 0;
    return use_mpi ? fs_sweep_mpi_finish(rc) : rc;
}
