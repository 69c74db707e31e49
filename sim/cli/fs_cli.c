#include "fs_cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const fs_command_t commands[] = {
    {"run", fs_cmd_run, "run a scenario and write its results to HDF5",
     "usage: fleetsim run [SCENARIO.yaml] [-o RESULTS.h5] [--seed N] [--set KEY=VALUE]...\n"
     "\n"
     "Runs one simulation.  With no scenario, runs the built-in default scenario\n"
     "(scenarios/default.yaml).  Writes RESULTS.h5 (default results.h5) and prints a\n"
     "summary on stdout.\n"
     "\n"
     "  -o, --output FILE    results file (default results.h5)\n"
     "  --seed N             override the scenario's seed\n"
     "  --set KEY=VALUE      override any scenario key by its dotted path\n"
     "                       (e.g. --set cluster.pools.0.nodes=64); repeatable\n"
     "  --no-output          run without writing a results file\n"
     "  -q, --quiet          no summary on stdout\n"
     "  -h, --help           this text\n"
     "\n"
     "Exit status: 0 success, 1 run-time failure, 2 bad usage or invalid input.\n"},
    {"validate", fs_cmd_validate, "check a scenario file without running it",
     "usage: fleetsim validate SCENARIO.yaml [--set KEY=VALUE]... [--dump]\n"
     "\n"
     "Checks the scenario and prints 'ok' or errors as FILE:LINE:COL: message.\n"
     "  --dump          print the canonical scenario (every key, defaults included)\n"
     "  --keys          print the reference of every scenario key (Markdown)\n"
     "  --set KEY=VALUE override a key, as for run\n"
     "Exit status: 0 valid, 2 invalid.\n"},
    {"bench", fs_cmd_bench, "engine and end-to-end benchmarks",
     "usage: fleetsim bench [--quick] [--policy] [--jobs N] [--gpus N]\n"
     "\n"
     "Runs the event-set hold benchmark (10^2, 10^4, 10^6 pending events) and an\n"
     "end-to-end run (synthetic jobs, FIFO, results written to HDF5), and prints\n"
     "ns per hold, jobs/s, events/s and peak memory.  Timing never fails anything.\n"
     "  --quick    smaller sizes (a few seconds)\n"
     "  --jobs N   end-to-end jobs (default 1000000)\n"
     "  --gpus N   end-to-end fleet size in GPUs (default 10000)\n"
     "  --policy   only the scheduling-policy benchmarks (EASY, Slurm multifactor)\n"
     "  --trace    only the trace-parsing benchmark (native CSV, plain and gzip, in $TMPDIR)\n"
     "  --no-trace skip the trace-parsing benchmark\n"
     "  --trace-rows N  rows of the generated trace (default 5000000; --quick 1000000)\n"},
    {"compare", fs_cmd_compare, "compare results side by side, with paired intervals for sweeps",
     "usage: fleetsim compare A.h5 B.h5 [C.h5...] [--csv] [--level L] [--no-waits]\n"
     "       fleetsim compare DIR/index.h5 --points P Q\n"
     "       fleetsim compare A/index.h5 B/index.h5 [--points P Q]\n"
     "\n"
     "Prints the /summary metrics of B (and C...) beside those of A, with the\n"
     "differences B - A.  Two run files: differences only (one run each gives\n"
     "no interval).  Sweep points (two points of one index, or the points of two\n"
     "indexes, point by point): paired Student-t intervals of B - A over the\n"
     "replications both have (common random numbers), a 'significant' column\n"
     "(the interval excludes 0), and pooled wait percentiles from /jobs.\n"
     "\n"
     "  --points P Q   point P of the first index against point Q (of the same\n"
     "                 index, or of the second)\n"
     "  --csv          machine-readable CSV on stdout (columns in docs/results.md)\n"
     "  --level L      confidence level of the intervals (default 0.95)\n"
     "  --no-waits     skip the pooled wait percentiles (no /jobs reading)\n"
     "\n"
     "Exit status: 0 success (whatever the differences), 1 run-time failure,\n"
     "2 bad usage or input.\n"},
    {"report", fs_cmd_report, "write an HTML report with plots of a results file or sweep",
     "usage: fleetsim report RESULTS.h5 [-o report.html] [--python PATH]\n"
     "\n"
     "Writes a self-contained HTML report (plots embedded as PNG data) of a run\n"
     "file or a sweep index, and the same plots as PNG files in <report>_plots/\n"
     "beside it: GPUs busy/up/queued over time, the wait-time CDF (per point of a\n"
     "sweep), utilization and wait against the swept load with 95% bands, failures\n"
     "and cost when the file has them, and the summary table (docs/report.md).\n"
     "Draws with matplotlib through Debian's Python (python3-matplotlib,\n"
     "python3-h5py, python3-numpy).\n"
     "\n"
     "  -o, --output FILE   the HTML file (default report.html)\n"
     "  --python PATH       the interpreter (default /usr/bin/python3)\n"
     "\n"
     "Exit status: 0 written, 1 run-time failure (Python or a module missing),\n"
     "2 bad usage or input.\n"},
    {"sweep", fs_cmd_sweep, "run a scenario's sweep: points x replications on threads, MPI or shards",
     "usage: fleetsim sweep SCENARIO.yaml -o DIR [-j N] [--shard I/N] [--resume] [--set KEY=VALUE]...\n"
     "       mpirun -n N fleetsim sweep SCENARIO.yaml -o DIR [-j N] ...\n"
     "\n"
     "Runs every (point, replication) of the scenario's sweep section (docs/sweeps.md),\n"
     "one single-threaded run each, into DIR/runs/p<P>-r<R>.h5, then writes DIR/index.h5\n"
     "(points, runs with every summary figure, per-point means with 95% intervals, and\n"
     "links to the run files).  Results are identical however the work is split.\n"
     "\n"
     "  -o, --output DIR     output directory (created)\n"
     "  -j, --jobs N         worker threads (default: the number of CPUs; 1 per MPI rank)\n"
     "  --shard I/N          run only runs k with k mod N == I (Slurm arrays, Kubernetes\n"
     "                       Indexed Jobs); then 'fleetsim merge DIR' writes the index\n"
     "  --resume             keep the finished runs of an interrupted sweep, run the rest\n"
     "  --set KEY=VALUE      override a key of the base scenario (before the sweep's)\n"
     "  --dry-run            print the points (and a shard's runs) without running\n"
     "  -q, --quiet          no summary on stdout\n"
     "\n"
     "Under mpirun (OpenMPI; built with -DFLEETSIM_MPI=ON) rank 0 hands out runs to every\n"
     "rank as they ask, works too, and writes the index.\n"
     "Exit status: 0 success, 1 a run failed or was interrupted, 2 bad usage or invalid input.\n"},
    {"plan", fs_cmd_plan, "search the cheapest fleet that meets the scenario's SLOs",
     "usage: fleetsim plan SCENARIO.yaml [-o DIR] [-j N] [--shard I/N] [--scan] [--set KEY=VALUE]...\n"
     "       mpirun -n N fleetsim plan SCENARIO.yaml -o DIR [-j N] ...\n"
     "\n"
     "For each choice of the scenario's plan section (a pool, its GPU model, overrides),\n"
     "finds by bisection the smallest node count whose plan.replications runs meet every\n"
     "SLO at the end of its t-interval (plan.confidence), and picks the cheapest such\n"
     "fleet (plan.objective, default cost_total) across choices (docs/plan.md).  Each\n"
     "candidate runs as a one-point sweep into DIR/evals/<choice>-n<N>/ (threads, MPI\n"
     "ranks or shards, as fleetsim sweep; finished candidates are reused).  Prints every\n"
     "evaluated point, the frontier and the chosen plan; writes DIR/plan.h5.\n"
     "\n"
     "  -o, --output DIR     output directory (default plan-out)\n"
     "  -j, --jobs N         worker threads (default: the number of CPUs; 1 per MPI rank)\n"
     "  --shard I/N          run runs k with k mod N == I of every candidate and wait for\n"
     "                       the other shards' runs (shards must run at the same time,\n"
     "                       on shared storage); shard 0 writes plan.h5\n"
     "  --scan               evaluate every node count instead of bisecting (checking)\n"
     "  --set KEY=VALUE      override a scenario key (before the candidates' own)\n"
     "  --dry-run            print the SLOs and choices without running\n"
     "  -q, --quiet          nothing on stdout\n"
     "\n"
     "Exit status: 0 success (also when no fleet meets the SLOs: see 'chosen'), 1 a run\n"
     "failed or was interrupted, 2 bad usage or invalid input.\n"},
    {"merge", fs_cmd_merge, "write a sharded sweep's index once every shard has finished",
     "usage: fleetsim merge DIR\n"
     "\n"
     "Builds DIR/index.h5 from DIR/sweep.h5 and DIR/runs/*.h5 after every shard of\n"
     "'fleetsim sweep --shard I/N' has finished; refuses (exit 1), naming the missing or\n"
     "incomplete runs, otherwise.\n"},
    {"trace", fs_cmd_trace, "inspect a trace, convert it to native CSV, or fit a workload to it",
     "usage: fleetsim trace info FILE [--format F] [--lenient] [--keep-origin] [--json]\n"
     "       fleetsim trace convert FILE -o OUT.csv[.gz] [--format F] [--lenient]\n"
     "       fleetsim trace fit FILE -o workload.yaml [--format F] [--classes R,...]\n"
     "       (or --scenario SCENARIO.yaml instead of FILE: that scenario's workload)\n"
     "\n"
     "info: jobs, span, GPU-hours, GPU-count histogram, run-time and wait\n"
     "percentiles, arrival rates by hour of day and day of week, states, tenants.\n"
     "convert: to the native format (docs/traces.md), written atomically.\n"
     "fit: a synthetic workload (scenario fragment) reproducing the trace.\n"
     "'fleetsim trace SUBCOMMAND --help' shows one subcommand.\n"
     "Exit status: 0 success, 1 run-time failure, 2 bad usage or invalid input.\n"},
    {"versus", fs_cmd_versus, "one workload under several policies side by side (common random numbers)",
     "usage: fleetsim versus SCENARIO.yaml -p NAME=KEY=VALUE[,KEY=VALUE...] -p NAME=... ...\n"
     "                       -o DIR [-r REPS] [-j N] [--metrics LIST] [--set KEY=VALUE]...\n"
     "\n"
     "Runs the scenario under every policy variant given with -p (the first is the\n"
     "baseline), REPS replications each; replication r of every variant sees the same\n"
     "random streams (the same arrivals, the same failures).  A key a variant does not\n"
     "set keeps the scenario's value.  Prints each summary metric per variant as\n"
     "mean +- the 95% t half-width, then every variant minus the baseline, paired by\n"
     "replication, with its 95% interval and * where it excludes 0.  DIR is a sweep\n"
     "directory (points in -p order): fleetsim report DIR/index.h5 and fleetsim compare\n"
     "DIR/index.h5 --points 0 1 work on it (docs/policies.md).\n"
     "\n"
     "  -p, --policy NAME=KEY=VALUE[,KEY=VALUE...]   a variant (commas inside {} and []\n"
     "                       belong to the value); NAME alone: the scenario as it is\n"
     "  -o, --output DIR     output directory (created)\n"
     "  -r, --replications N replications per variant (default 10, at least 2)\n"
     "  -j, --jobs N         worker threads (default: the number of CPUs)\n"
     "  --metrics LIST       summary fields to show (default jobs_completed,utilization,\n"
     "                       goodput,wait_mean,wait_p95,jct_mean,makespan)\n"
     "  --set KEY=VALUE      override a key of the base scenario (every variant)\n"
     "  --resume             keep the finished runs of an interrupted comparison\n"
     "  -q, --quiet          only the tables\n"
     "\n"
     "Exit status: 0 success (whatever the differences), 1 run-time failure,\n"
     "2 bad usage or invalid input.\n"},
    {"help", fs_cmd_help, "list the commands, or show one command's usage",
     "usage: fleetsim help [COMMAND]\n"},
    {"frag", fs_cmd_frag, "GPU fragmentation experiment: placements under growing demand (ATC'23)",
     "usage: fleetsim frag SCENARIO.yaml [--placements LIST] [--seeds N] [--demand F]\n"
     "                     [--shapes given|learned] [-o OUT.csv] [--set KEY=VALUE]...\n"
     "\n"
     "The fragmentation experiment of Weng et al. (USENIX ATC'23): pods of the\n"
     "scenario's trace (e.g. an openb pod list) are drawn at random with replacement\n"
     "and placed one by one on the scenario's cluster (e.g. cluster.from the openb\n"
     "node list); pods never leave; a pod that does not fit is left out.  Stops when\n"
     "the GPUs requested reach F x capacity.  Prints, per placement, the GPU\n"
     "allocation ratio (allocated / capacity) at 100% and at F x capacity, mean and\n"
     "standard deviation over the seeds (replications 0..N-1, common random numbers).\n"
     "\n"
     "  --placements LIST  placements to compare (default random,best_fit,pack,fgd)\n"
     "  --seeds N          replications (default 10)\n"
     "  --demand F         final demand / capacity (default 1.3)\n"
     "  --shapes S         fgd's task shapes: given (the whole pod list, default) or\n"
     "                     learned (the pods drawn so far)\n"
     "  -o FILE            CSV: the allocation ratio at every 5% of demand, per run\n"
     "  --pools            print each pool's unallocated GPUs at the end of each run\n"
     "                     (stderr)\n"
     "  --set KEY=VALUE    override a scenario key\n"
     "\n"
     "Exit status: 0 success, 1 run-time failure, 2 bad usage or input.\n"},
    {"version", fs_cmd_version, "print the version", "usage: fleetsim version\n"},
};

const fs_command_t *fs_cli_commands(size_t *n)
{
    *n = sizeof commands / sizeof commands[0];
    return commands;
}

const fs_command_t *fs_cli_find(const char *name)
{
    size_t n;
    const fs_command_t *c = fs_cli_commands(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(c[i].name, name) == 0)
            return &c[i];
    return NULL;
}

int fs_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fleetsim %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see 'fleetsim %s --help')\n", cmd);
    return 2;
}

int fs_cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

void fs_cli_print_usage(FILE *f, const fs_command_t *c)
{
    fputs(c->usage, f);
}

int fs_cli_parse_u64(const char *s, unsigned long long *out)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}
