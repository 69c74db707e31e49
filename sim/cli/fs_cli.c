#include "fs_cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>



/* ---- option tables (getopt_long; the man page and the completion use them too) ------------ */

#define HELP {"help", 'h', 0, 'h', NULL}
#define SET {"set", 0, 1, FS_OPT_SET, "KEY=VALUE"}
#define QUIET {"quiet", 'q', 0, 'q', NULL}
#define JSON {"json", 0, 0, FS_OPT_JSON, NULL}
#define END {NULL, 0, 0, 0, NULL}
#define PROGRESS {"progress", 0, 1, FS_OPT_PROGRESS, "SECONDS"}

static const fs_cli_opt_t run_opts[] = {
    {"output", 'o', 1, 'o', "FILE"}, {"no-output", 0, 0, FS_OPT_NO_OUTPUT, NULL},
    {"seed", 0, 1, FS_OPT_SEED, "N"}, SET, QUIET, JSON,
    {"progress", 0, 1, FS_OPT_PROGRESS, "SECONDS"}, HELP, END};
static const fs_cli_opt_t validate_opts[] = {
    SET, {"dump", 0, 0, FS_OPT_DUMP, NULL}, {"keys", 0, 0, FS_OPT_KEYS, NULL}, HELP, END};
static const fs_cli_opt_t bench_opts[] = {
    {"quick", 0, 0, FS_OPT_QUICK, NULL}, {"policy", 0, 0, FS_OPT_POLICY_BENCH, NULL},
    {"jobs", 0, 1, 'j', "N"}, {"gpus", 0, 1, FS_OPT_GPUS, "N"}, {"trace", 0, 0, FS_OPT_TRACE, NULL},
    {"no-trace", 0, 0, FS_OPT_NO_TRACE, NULL}, {"trace-rows", 0, 1, FS_OPT_TRACE_ROWS, "N"},
    {"services", 0, 0, FS_OPT_SERVICES, NULL}, HELP, END};
static const fs_cli_opt_t compare_opts[] = {
    {"csv", 0, 0, FS_OPT_CSV, NULL}, JSON, {"level", 0, 1, FS_OPT_LEVEL, "L"},
    {"no-waits", 0, 0, FS_OPT_NO_WAITS, NULL}, {"points", 0, 1, FS_OPT_POINTS, "P Q"},
    {"recorded", 0, 0, FS_OPT_RECORDED, NULL}, HELP, END};
static const fs_cli_opt_t report_opts[] = {
    {"output", 'o', 1, 'o', "FILE"}, {"python", 0, 1, FS_OPT_PYTHON, "PATH"}, HELP, END};
static const fs_cli_opt_t sweep_opts[] = {
    {"output", 'o', 1, 'o', "DIR"}, {"jobs", 'j', 1, 'j', "N"}, {"shard", 0, 1, FS_OPT_SHARD, "I/N"},
    {"resume", 0, 0, FS_OPT_RESUME, NULL}, SET, {"dry-run", 0, 0, FS_OPT_DRY_RUN, NULL}, QUIET,
    PROGRESS, HELP, END};
static const fs_cli_opt_t plan_opts[] = {
    {"output", 'o', 1, 'o', "DIR"}, {"jobs", 'j', 1, 'j', "N"}, {"shard", 0, 1, FS_OPT_SHARD, "I/N"},
    {"scan", 0, 0, FS_OPT_SCAN, NULL}, SET, {"dry-run", 0, 0, FS_OPT_DRY_RUN, NULL}, QUIET, JSON,
    HELP, END};
static const fs_cli_opt_t merge_opts[] = {QUIET, HELP, END};
static const fs_cli_opt_t metrics_opts[] = {
    {"output", 'o', 1, 'o', "FILE"}, {"step", 0, 1, FS_OPT_STEP, "SECONDS"},
    {"origin", 0, 1, FS_OPT_ORIGIN, "UNIX_SECONDS"}, {"pools", 0, 1, FS_OPT_POOLS, "NAME,..."},
    {"nodes", 0, 1, FS_OPT_NODES, "FIRST-LAST"}, {"xid-window", 0, 1, FS_OPT_XID_WINDOW, "S"},
    {"tsdb", 0, 1, FS_OPT_TSDB, "DIR"}, {"block", 0, 1, FS_OPT_BLOCK, "HOURS"},
    {"level", 0, 1, FS_OPT_LEVEL, "gpu|node|pool"}, {"families", 0, 1, FS_OPT_FAMILIES, "LIST"},
    {"from", 0, 1, FS_OPT_FROM, "T"}, {"to", 0, 1, FS_OPT_TO, "T"},
    {"max-size", 0, 1, FS_OPT_MAX_SIZE, "SIZE"},
    {"legacy-hostname", 0, 0, FS_OPT_LEGACY_HOSTNAME, NULL}, {"lenient", 0, 0, FS_OPT_LENIENT, NULL},
    QUIET, HELP, END};
static const fs_cli_opt_t trace_opts[] = {
    {"format", 0, 1, FS_OPT_FORMAT, "F"}, {"output", 'o', 1, 'o', "OUT"},
    {"classes", 0, 1, FS_OPT_CLASSES, "R,..."}, {"scenario", 0, 1, FS_OPT_SCENARIO, "FILE"},
    {"lenient", 0, 0, FS_OPT_LENIENT, NULL}, {"keep-origin", 0, 0, FS_OPT_KEEP_ORIGIN, NULL},
    {"requests", 0, 0, FS_OPT_REQUESTS, NULL}, {"threshold", 0, 1, FS_OPT_THRESHOLD, "X"},
    {"capacity", 0, 1, FS_OPT_CAPACITY, "GPUS"}, {"gpus-per-node", 0, 1, FS_OPT_GPN, "G"}, JSON,
    HELP, END};
static const fs_cli_opt_t calibrate_opts[] = {
    {"split", 0, 1, FS_OPT_SPLIT, "DAYS"}, {"jobs", 'j', 1, 'j', "N"},
    {"max-over", 0, 1, FS_OPT_MAX_OVER, "F"}, SET, JSON, HELP, END};
static const fs_cli_opt_t versus_opts[] = {
    {"policy", 'p', 1, 'p', "NAME=KEY=VALUE,..."}, {"output", 'o', 1, 'o', "DIR"},
    {"replications", 'r', 1, 'r', "N"}, {"jobs", 'j', 1, 'j', "N"},
    {"metrics", 0, 1, FS_OPT_METRICS, "LIST"}, SET, {"resume", 0, 0, FS_OPT_RESUME, NULL}, QUIET,
    JSON, PROGRESS, HELP, END};
static const fs_cli_opt_t help_opts[] = {
    {"man", 0, 0, FS_OPT_MAN, NULL}, {"completion", 0, 1, FS_OPT_COMPLETION, "SHELL"}, HELP, END};
static const fs_cli_opt_t version_opts[] = {HELP, END};
static const fs_cli_opt_t frag_opts[] = {
    {"placements", 0, 1, FS_OPT_PLACEMENTS, "LIST"}, {"seeds", 0, 1, FS_OPT_SEEDS, "N"},
    {"demand", 0, 1, FS_OPT_DEMAND, "F"}, {"shapes", 0, 1, FS_OPT_SHAPES, "given|learned"},
    {"output", 'o', 1, 'o', "FILE"}, {"pools", 0, 0, FS_OPT_POOLS, NULL},
    {"typical", 0, 1, FS_OPT_TYPICAL, "PCT"}, {"draw", 0, 1, FS_OPT_DRAW, "uniform|list"},
    {"jobs", 'j', 1, 'j', "N"}, SET,
    HELP, END};

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
     "  --json               the summary as one JSON document on stdout (docs/cli.md)\n"
     "  --progress S         a progress line every S seconds (default: redrawn on a\n"
     "                       terminal, a whole line every 30 s otherwise; 0: none)\n"
     "  -h, --help           this text\n"
     "\n"
     "Exit status: 0 success, 1 run-time failure, 2 bad usage or invalid input.\n",
     run_opts, "file"},
    {"validate", fs_cmd_validate, "check a scenario file without running it",
     "usage: fleetsim validate SCENARIO.yaml [--set KEY=VALUE]... [--dump]\n"
     "\n"
     "Checks the scenario and prints 'ok' or errors as FILE:LINE:COL: message.\n"
     "  --dump          print the canonical scenario (every key, defaults included)\n"
     "  --keys          print the reference of every scenario key (Markdown)\n"
     "  --set KEY=VALUE override a key, as for run\n"
     "Exit status: 0 valid, 2 invalid.\n",
     validate_opts, "file"},
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
     "  --trace-rows N  rows of the generated trace (default 5000000; --quick 1000000)\n"
     "  --services only the inference-service benchmarks (request mode: requests/s;\n"
     "             fluid mode: a year at 100 requests/s)\n",
     bench_opts, NULL},
    {"compare", fs_cmd_compare, "compare results side by side, with paired intervals for sweeps",
     "usage: fleetsim compare A.h5 B.h5 [C.h5...] [--csv] [--level L] [--no-waits]\n"
     "       fleetsim compare DIR/index.h5 --points P Q\n"
     "       fleetsim compare A/index.h5 B/index.h5 [--points P Q]\n"
     "       fleetsim compare RUN.h5 --recorded [--json]\n"
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
     "  --json         one JSON document on stdout (docs/cli.md)\n"
     "  --recorded     one trace replay against the waits its trace recorded:\n"
     "                 wait mean, p50/p90/p99, share waited, KS distance,\n"
     "                 Spearman per job, daily utilization (docs/validation.md)\n"
     "\n"
     "Exit status: 0 success (whatever the differences), 1 run-time failure,\n"
     "2 bad usage or input.\n",
     compare_opts, "file"},
    {"report", fs_cmd_report, "write an HTML report with plots of a results file or sweep",
     "usage: fleetsim report RESULTS.h5|INDEX.h5|plan.h5 [-o report.html] [--python PATH]\n"
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
     "2 bad usage or input.\n",
     report_opts, "file"},
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
     "  --progress S         runs done and ETA every S seconds (default: redrawn on a\n"
     "                       terminal, a whole line every 30 s otherwise; 0: none)\n"
     "\n"
     "Under mpirun (OpenMPI; built with -DFLEETSIM_MPI=ON) rank 0 hands out runs to every\n"
     "rank as they ask, works too, and writes the index.\n"
     "Exit status: 0 success, 1 a run failed or was interrupted, 2 bad usage or invalid input.\n",
     sweep_opts, "file"},
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
     "  --json               the plan as one JSON document on stdout (docs/cli.md)\n"
     "\n"
     "Exit status: 0 success (also when no fleet meets the SLOs: see 'chosen'), 1 a run\n"
     "failed or was interrupted, 2 bad usage or invalid input.\n",
     plan_opts, "file"},
    {"metrics", fs_cmd_metrics, "write a results file's GPUs as DCGM telemetry (Prometheus)",
     "usage: fleetsim metrics RESULTS.h5 (--tsdb DIR | -o FILE) [--step S] [--origin T]\n"
     "                        [--pools LIST] [--nodes FIRST-LAST] [--families LIST]\n"
     "                        [--level gpu|node|pool] [--from T] [--to T] [--max-size SIZE]\n"
     "                        [--block HOURS] [--xid-window S] [--legacy-hostname]\n"
     "                        [--lenient]\n"
     "\n"
     "Writes the GPUs of a run made with output.gpu_intervals: true with dcgm-exporter's\n"
     "metric names and labels (DCGM_FI_DEV_GPU_UTIL, ...; pods: namespace = tenant or\n"
     "service, pod = job-ID or SERVICE-REPLICA), one sample per series every --step\n"
     "seconds (default 60), timestamps from --origin (Unix seconds of simulated time 0;\n"
     "default 1767225600, 2026-01-01), as Prometheus TSDB blocks with staleness markers\n"
     "(--tsdb: a stock 'prometheus --storage.tsdb.path=DIR' answers exactly) or as\n"
     "OpenMetrics text (-o; docs/observability.md).  The expected size is printed first.\n"
     "\n"
     "  --tsdb DIR           write blocks into DIR (new, empty or a Prometheus data dir)\n"
     "  -o, --output FILE    write OpenMetrics text (atomically)\n"
     "  --step S             seconds between samples (a whole number >= 1)\n"
     "  --origin T           Unix seconds of simulated time 0\n"
     "  --pools LIST         only the GPUs of these pools (names, comma-separated)\n"
     "  --nodes FIRST-LAST   only the nodes FIRST..LAST of each pool (hostname POOL-N)\n"
     "  --families LIST      only these metric families (names, comma-separated)\n"
     "  --level L            gpu (default: dcgm-exporter's series), node or pool (recording-\n"
     "                       rule series such as fleetsim:gpu_util:avg_node)\n"
     "  --from T, --to T     only the samples in [T1, T2] of simulated time (90s, 2h, 3d)\n"
     "  --max-size SIZE      refuse an export expected above SIZE (bytes, or 500M, 20G)\n"
     "  --block HOURS        --tsdb: block range, a multiple of 2 (default 24; 2 as promtool)\n"
     "  --xid-window S       DCGM_EXP_XID_ERRORS_COUNT counts the Xids of the last S\n"
     "                       seconds (default 300, dcgm-exporter's --xid-count-window-size)\n"
     "  --legacy-hostname    label Hostname (dcgm-exporter before 3.3) instead of hostname\n"
     "  --lenient            a --step below /timeline's interval: leave the scheduler's\n"
     "                       series (fleetsim_*) out, with a note, instead of exit 2\n"
     "  -q, --quiet          nothing on stdout\n"
     "\n"
     "Exit status: 0 success, 1 the output could not be written or SIGINT/SIGTERM stopped\n"
     "it (nothing is left), 2 bad usage or input (also a --step below /timeline's\n"
     "interval while the scheduler's series are written).\n",
     metrics_opts, "file"},
    {"merge", fs_cmd_merge, "write a sharded sweep's index once every shard has finished",
     "usage: fleetsim merge DIR\n"
     "\n"
     "Builds DIR/index.h5 from DIR/sweep.h5 and DIR/runs/*.h5 after every shard of\n"
     "'fleetsim sweep --shard I/N' has finished; refuses (exit 1), naming the missing or\n"
     "incomplete runs, otherwise.\n",
     merge_opts, "dir"},
    {"calibrate", fs_cmd_calibrate, "fit what a log does not record to its recorded waits",
     "usage: fleetsim calibrate SCENARIO.yaml [--split DAYS] [--max-over F|off] [-j N]\n"
     "                          [--set KEY=VALUE]... [--json]\n"
     "\n"
     "Fits the parameters a trace replay's log does not record -- the outages read\n"
     "off its recorded utilization (the threshold of 'fleetsim trace outages') and\n"
     "the effective capacity share -- to the recorded waits of the jobs submitted\n"
     "before the split (a grid of replays; objective KS + |ln mean ratio|/2 +\n"
     "|ln p90 ratio|/2), and reports the fit's error on the jobs submitted from the\n"
     "split on, against the targets KS <= 0.15, Spearman >= 0.5, mean and p90\n"
     "within 20% (docs/validation.md).\n"
     "\n"
     "  --split DAYS   the split, days from the first submission (default: the\n"
     "                 middle of the submissions)\n"
     "  --max-over F   a point whose capacity the log's recorded schedule exceeds\n"
     "                 (more GPUs busy than it has) more than the fraction F of the\n"
     "                 time is shown but not chosen: such a capacity did not run\n"
     "                 the log (default 0.05; 'off': any point may be chosen)\n"
     "  -j, --jobs N   replays at once, on N threads (default 1; the grid and the\n"
     "                 fit are the same for every N)\n"
     "  --set K=V      override a scenario key (repeatable)\n"
     "  --json         one JSON document on stdout\n"
     "\n"
     "Exit status: 0 success (whether or not the targets are met), 1 run-time\n"
     "failure, 2 bad usage or input.\n",
     calibrate_opts, "file"},
    {"trace", fs_cmd_trace, "inspect a trace, convert it to native CSV, or fit a workload to it",
     "usage: fleetsim trace info FILE [--format F] [--lenient] [--keep-origin] [--json]\n"
     "       fleetsim trace convert FILE -o OUT.csv[.gz] [--format F] [--lenient]\n"
     "       fleetsim trace fit FILE -o workload.yaml [--format F] [--classes R,...]\n"
     "       fleetsim trace outages FILE -o OUT.csv --capacity GPUS [--threshold X]\n"
     "       (or --scenario SCENARIO.yaml instead of FILE: that scenario's workload)\n"
     "\n"
     "info: jobs, span, GPU-hours, GPU-count histogram, run-time and wait\n"
     "percentiles, arrival rates by hour of day and day of week, states, tenants.\n"
     "convert: to the native format (docs/traces.md), written atomically.\n"
     "fit: a synthetic workload (scenario fragment) reproducing the trace.\n"
     "outages: capacity outages inferred from the recorded utilization (cluster.outages).\n"
     "'fleetsim trace SUBCOMMAND --help' shows one subcommand.\n"
     "Exit status: 0 success, 1 run-time failure, 2 bad usage or invalid input.\n",
     trace_opts, "info convert fit outages"},
    {"versus", fs_cmd_versus, "one workload under several policies side by side (common random numbers)",
     "usage: fleetsim versus SCENARIO.yaml -p NAME=KEY=VALUE[,KEY=VALUE...] -p NAME=... ...\n"
     "                       -o DIR [-r REPS] [-j N] [--metrics LIST] [--set KEY=VALUE]...\n"
     "\n"
     "Runs the scenario under every policy variant given with -p (the first is the\n"
     "baseline), REPS replications each; replication r of every variant sees the same\n"
     "random streams (the same arrivals, the same failures).  A key a variant does not\n"
     "set keeps the scenario's value, whatever its type (a list, a block such as\n"
     "scheduler.plugin); scheduler.queue=X without scheduler.plugin.* is the built-in\n"
     "X.  Prints each summary metric per variant as\n"
     "mean +- the 95% t half-width, then every variant minus the baseline, paired by\n"
     "replication, with its 95% interval and * where it excludes 0.  DIR is a sweep\n"
     "directory (points in -p order): fleetsim report DIR/index.h5 and fleetsim compare\n"
     "DIR/index.h5 --points 0 1 work on it (docs/policies.md).\n"
     "\n"
     "  -p, --policy NAME=KEY=VALUE[,KEY=VALUE...]   a variant (commas inside {} and []\n"
     "                       belong to the value); NAME alone: the scenario as it is\n"
     "  -o, --output DIR     output directory (created)\n"
     "  -r, --replications N replications per variant (default 10; 1 when nothing in\n"
     "                       the scenario draws random numbers, e.g. a trace replay)\n"
     "  -j, --jobs N         worker threads (default: the number of CPUs)\n"
     "  --metrics LIST       summary fields to show (default jobs_completed,utilization,\n"
     "                       goodput,wait_mean,wait_p95,jct_mean,makespan), or a\n"
     "                       service's SERVICE.COLUMN (chat.ttft_p99, as plan's SLOs)\n"
     "  --set KEY=VALUE      override a key of the base scenario (every variant)\n"
     "  --resume             keep the finished runs of an interrupted comparison\n"
     "  -q, --quiet          only the tables\n"
     "  --json               one JSON document on stdout (docs/cli.md)\n"
     "  --progress S         runs done and ETA every S seconds (default: redrawn on a\n"
     "                       terminal, a whole line every 30 s otherwise; 0: none)\n"
     "\n"
     "Exit status: 0 success (whatever the differences), 1 run-time failure (a\n"
     "variant whose runs fail is marked with its error, the others are shown),\n"
     "2 bad usage or invalid input.\n",
     versus_opts, "file"},
    {"help", fs_cmd_help, "list the commands, or show one command's usage",
     "usage: fleetsim help [COMMAND] [--man] [--completion bash]\n"
     "\n"
     "  --man               the man page fleetsim.1 (roff), from the command table\n"
     "  --completion bash   the bash completion script (commands, options, scenario keys)\n",
     help_opts, "command"},
    {"frag", fs_cmd_frag, "GPU fragmentation experiment: placements under growing demand (ATC'23)",
     "usage: fleetsim frag SCENARIO.yaml [--placements LIST] [--seeds N] [--demand F]\n"
     "                     [--shapes given|learned] [--typical PCT] [--draw uniform|list]\n"
     "                     [-j N] [-o OUT.csv] [--set KEY=VALUE]...\n"
     "\n"
     "The fragmentation experiment of Weng et al. (USENIX ATC'23, section 6); its\n"
     "defaults reproduce the paper's openb table within 1 point (docs/validation.md).\n"
     "Pods of the scenario's trace (an openb pod list) are placed one by one on the\n"
     "scenario's cluster (cluster.from the openb node list); pods never leave; a pod\n"
     "that does not fit is left out.  Stops when the GPUs requested reach F x\n"
     "capacity.  Pods hold their CPU and memory where the pools model them; CPU-only\n"
     "pods (workload.trace.cpu_only: place) are placed too and add no GPU demand.\n"
     "Node scores are integers with ties to the first node by name (the ATC'23\n"
     "simulator's: scheduler.node_score=kubernetes_name, which a --set replaces).\n"
     "Prints, per placement, the GPU allocation ratio (allocated / capacity) at 100%\n"
     "and at F x capacity, mean and standard deviation over the seeds (replications\n"
     "0..N-1, common random numbers).\n"
     "\n"
     "  --placements LIST  placements to compare (default random,atc_best_fit,\n"
     "                     gpu_packing,fgd: the paper's four; also pack, first_fit,\n"
     "                     best_fit, binpack, spread, topology)\n"
     "  --seeds N          replications (default 10)\n"
     "  --demand F         final demand / capacity (default 1.3)\n"
     "  --shapes S         fgd's task shapes: given (the whole pod list, default) or\n"
     "                     learned (the pods drawn so far)\n"
     "  --typical PCT      given shapes: only the most popular (GPUs, milli, CPU, GPU\n"
     "                     model) shapes that cover PCT% of the pods (default 95, the\n"
     "                     ATC'23 simulator's typical pods; 100: every shape)\n"
     "  --draw D           list: every pod of the list once, plus (or minus) uniform\n"
     "                     draws to reach the demand, shuffled (the ATC'23 simulator's\n"
     "                     workload tuning, default); uniform: pods drawn with\n"
     "                     replacement\n"
     "  -j N               runs in parallel on N threads (default: the CPUs; the\n"
     "                     output is the same for any N)\n"
     "  -o FILE            CSV: the allocation ratio at every 5% of demand, per run\n"
     "  --pools            print each pool's unallocated GPUs at the end of each run\n"
     "                     (stderr)\n"
     "  --set KEY=VALUE    override a scenario key\n"
     "\n"
     "Exit status: 0 success, 1 run-time failure, 2 bad usage or input.\n",
     frag_opts, "file"},
    {"version", fs_cmd_version, "print the version", "usage: fleetsim version\n",
     version_opts, NULL},
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

int fs_cli_parse_shard(const char *s, size_t *i, size_t *n)
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

/* ---- getopt_long over a command's option table ---------------------------------------------- */

int fs_cli_getopt_init(fs_cli_getopt_t *g, const char *cmd, int argc, char **argv,
                       const fs_cli_opt_t *opts)
{
    memset(g, 0, sizeof *g);
    g->cmd = cmd;
    g->argc = argc;
    g->argv = argv;
    g->opts = opts;
    size_t n = 0;
    while (opts && opts[n].name && n < FS_CLI_MAX_OPTS)
        n++;
    struct option *lo = g->longs;
    /* "-": operands come back in order (code 1); ":": a missing value is ':' */
    size_t k = 0;
    g->shorts[k++] = '-';
    g->shorts[k++] = ':';
    for (size_t i = 0; i < n; i++) {
        lo[i].name = opts[i].name;
        lo[i].has_arg = opts[i].has_arg ? required_argument : no_argument;
        lo[i].flag = NULL;
        lo[i].val = opts[i].id;
        if (opts[i].short_name && k + 3 < sizeof g->shorts) {
            g->shorts[k++] = (char)opts[i].short_name;
            if (opts[i].has_arg)
                g->shorts[k++] = ':';
        }
    }
    memset(&lo[n], 0, sizeof lo[n]);
    g->shorts[k] = '\0';
    optind = 0;     /* GNU: start over (a fresh parse in this process) */
    opterr = 0;     /* our own messages */
    return 0;
}

static const fs_cli_opt_t *opt_by_id(const fs_cli_opt_t *opts, int id)
{
    for (size_t i = 0; opts && opts[i].name; i++)
        if (opts[i].id == id)
            return &opts[i];
    return NULL;
}

int fs_cli_getopt(fs_cli_getopt_t *g)
{
    g->arg = NULL;
    g->opt = NULL;
    if (g->rest) {
        if (optind >= g->argc)
            return FS_CLI_END;
        g->arg = g->argv[optind++];
        return FS_CLI_OPERAND;
    }
    int li = -1;
    int prev = optind ? optind : 1;
    int c = getopt_long(g->argc, g->argv, g->shorts, g->longs, &li);
    if (c == -1) {
        if (optind < g->argc) {     /* after "--" */
            g->rest = 1;
            return fs_cli_getopt(g);
        }
        return FS_CLI_END;
    }
    if (c == 1) {
        g->arg = optarg;
        return FS_CLI_OPERAND;
    }
    const char *written = g->argv[optind - 1 >= prev ? optind - 1 : prev];
    if (c == '?') {
        const fs_cli_opt_t *o = optopt ? opt_by_id(g->opts, optopt) : NULL;
        if (o && !o->has_arg && strncmp(written, "--", 2) == 0)
            fs_cli_usage_error(g->cmd, "--%s takes no value ('%s')", o->name, written);
        else if (optopt && optopt < 256 && strncmp(written, "--", 2) != 0)
            fs_cli_usage_error(g->cmd, "unknown option '-%c'", optopt);
        else
            fs_cli_usage_error(g->cmd, "unknown option '%s'", written);
        g->status = 2;
        return FS_CLI_BAD;
    }
    if (c == ':')
        c = optopt;     /* the option whose value is missing: the caller says what it needs */
    else
        g->arg = optarg;
    const fs_cli_opt_t *o = opt_by_id(g->opts, c);
    if (o && li >= 0)
        snprintf(g->optbuf, sizeof g->optbuf, "--%s", o->name);
    else
        snprintf(g->optbuf, sizeof g->optbuf, "-%c", c < 256 ? c : '?');
    g->opt = g->optbuf;
    return c;
}

const char *fs_cli_getopt_take(fs_cli_getopt_t *g)
{
    if (optind >= g->argc)
        return NULL;
    return g->argv[optind++];
}

/* ---- the man page and the shell completion, from the tables -------------------------------- */

/* Text for roff: backslashes doubled as \e, a leading '.' or '\'' guarded,
 * '-' as \- (a real minus, so that searches for options find them). */
static void roff_text(FILE *f, const char *s)
{
    int bol = 1;
    for (; *s; s++) {
        if (bol && (*s == '.' || *s == '\''))
            fputs("\\&", f);
        bol = *s == '\n';
        if (*s == '\\')
            fputs("\\e", f);
        else if (*s == '-')
            fputs("\\-", f);
        else
            fputc(*s, f);
    }
}

void fs_cli_write_man(FILE *f)
{
    size_t n;
    const fs_command_t *c = fs_cli_commands(&n);
    fprintf(f, ".\\\" Generated by 'fleetsim help --man' from the command table "
               "(sim/cli/fs_cli.c); do not edit.\n");
    fprintf(f, ".TH FLEETSIM 1 \"\" \"fleetsim %s\" \"User Commands\"\n", FLEETSIM_VERSION);
    fputs(".SH NAME\nfleetsim \\- discrete-event simulator and capacity planner for GPU fleets\n"
          ".SH SYNOPSIS\n.B fleetsim\n.I COMMAND\n[\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n"
          ".SH DESCRIPTION\nfleetsim replays job traces or synthesizes workloads, runs them "
          "against a modeled GPU cluster with failures, scheduling and recovery policies, and "
          "writes utilization, queue-wait, goodput and cost results to HDF5.\n"
          ".PP\nEvery command takes its options in the usual long forms "
          "(\\fB\\-\\-output FILE\\fR, \\fB\\-\\-output=FILE\\fR, a unique prefix such as "
          "\\fB\\-\\-out\\fR), short options can be clustered (\\fB\\-qo FILE\\fR), and "
          "\\fB\\-\\-\\fR ends the options.\n"
          ".SH COMMANDS\n", f);
    for (size_t i = 0; i < n; i++) {
        fputs(".SS ", f);
        roff_text(f, c[i].name);
        fputs("\n", f);
        roff_text(f, c[i].summary);
        fputs(".\n.PP\n.nf\n", f);
        roff_text(f, c[i].usage);
        fputs(".fi\n", f);
        if (c[i].opts && c[i].opts[0].name) {
            fputs(".PP\nOptions:\n", f);
            for (const fs_cli_opt_t *o = c[i].opts; o->name; o++) {
                fputs(".TP\n", f);
                if (o->short_name)
                    fprintf(f, "\\fB\\-%c\\fR, ", o->short_name);
                fputs("\\fB\\-\\-", f);
                roff_text(f, o->name);
                fputs("\\fR", f);
                if (o->has_arg) {
                    fputs(" \\fI", f);
                    roff_text(f, o->value ? o->value : "VALUE");
                    fputs("\\fR", f);
                }
                fputs("\n.br\n", f);
            }
        }
    }
    fputs(".SH EXIT STATUS\n0 success, 1 run-time failure, 2 bad usage or invalid input.\n"
          ".SH ENVIRONMENT\n.TP\n.B FLEETSIM_DATADIR\nwhere \\fBfleetsim report\\fR looks for "
          "report.py first.\n"
          ".SH SEE ALSO\nThe documentation in docs/ (installed under share/doc/fleetsim): "
          "cli.md, scenario.md, results.md, sweeps.md, plan.md, report.md.\n", f);
}

#include "../../scenarios/fs_keys.h"

/* Every scenario key a --set can reach, as words (lists by item 0). */
static void key_words(FILE *f, const fs_keytab_t *t, const char *prefix)
{
    for (size_t i = 0; i < t->n; i++) {
        const fs_key_t *k = &t->rows[i];
        char p[256];
        snprintf(p, sizeof p, "%s%s", prefix, k->path);
        if (k->type == FS_KT_LIST && k->sub) {
            char q[512];
            snprintf(q, sizeof q, "%s.0.", p);
            key_words(f, k->sub, q);
        } else if (k->type == FS_KT_DIST && k->sub) {
            fprintf(f, " %s", p);
            char q[512];
            snprintf(q, sizeof q, "%s.", p);
            key_words(f, k->sub, q);
        } else if (k->type != FS_KT_CHOICE) {
            fprintf(f, " %s", p);
        }
    }
}

void fs_cli_write_bash_completion(FILE *f)
{
    size_t n;
    const fs_command_t *c = fs_cli_commands(&n);
    fputs("# bash completion for fleetsim.  Generated by 'fleetsim help --completion bash'\n"
          "# from the command, option and scenario key tables; do not edit.\n"
          "_fleetsim()\n{\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    local cmds='", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%s", i ? " " : "", c[i].name);
    fputs("'\n    local keys='", f);
    key_words(f, &fs_keys_config, "");
    fputs("'\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "        COMPREPLY=($(compgen -W \"$cmds\" -- \"$cur\"))\n"
          "        return\n"
          "    fi\n"
          "    local opts='' valopts='' operands=''\n"
          "    case ${COMP_WORDS[1]} in\n", f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "    %s)\n        opts='", c[i].name);
        int first = 1;
        for (const fs_cli_opt_t *o = c[i].opts; o && o->name; o++) {
            fprintf(f, "%s--%s", first ? "" : " ", o->name);
            if (o->short_name)
                fprintf(f, " -%c", o->short_name);
            first = 0;
        }
        fputs("'\n        valopts='", f);
        first = 1;
        for (const fs_cli_opt_t *o = c[i].opts; o && o->name; o++) {
            if (!o->has_arg)
                continue;
            fprintf(f, "%s--%s", first ? "" : " ", o->name);
            if (o->short_name)
                fprintf(f, " -%c", o->short_name);
            first = 0;
        }
        fprintf(f, "'\n        operands='%s' ;;\n", c[i].operands ? c[i].operands : "");
    }
    fputs("    esac\n"
          "    case $prev in\n"
          "    --set)\n"
          "        compopt -o nospace 2>/dev/null\n"
          "        COMPREPLY=($(compgen -S = -W \"$keys\" -- \"$cur\"))\n"
          "        return ;;\n"
          "    esac\n"
          "    local w\n"
          "    for w in $valopts; do\n"
          "        if [ \"$prev\" = \"$w\" ]; then\n"
          "            COMPREPLY=($(compgen -f -- \"$cur\"))\n"
          "            return\n"
          "        fi\n"
          "    done\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "        return\n"
          "    fi\n"
          "    case $operands in\n"
          "    file) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
          "    dir) COMPREPLY=($(compgen -d -- \"$cur\")) ;;\n"
          "    command) COMPREPLY=($(compgen -W \"$cmds\" -- \"$cur\")) ;;\n"
          "    '') ;;\n"
          "    *) if [ \"$COMP_CWORD\" -eq 2 ]; then\n"
          "           COMPREPLY=($(compgen -W \"$operands\" -- \"$cur\"))\n"
          "       else\n"
          "           COMPREPLY=($(compgen -f -- \"$cur\"))\n"
          "       fi ;;\n"
          "    esac\n"
          "}\n"
          "complete -F _fleetsim fleetsim\n", f);
}

int fs_cli_parse_progress(const char *cmd, const char *v, double *every)
{
    char *end;
    double d;
    if (!v || (d = strtod(v, &end), *end) || !(d >= 0 && d <= 86400))
        return fs_cli_usage_error(cmd, "--progress needs seconds between progress lines, "
                                  "0 to 86400 (0: none)");
    *every = d;
    return 0;
}

void fs_cli_progress_mode(double every, int none, int *progress, double *progress_every)
{
    if (none || every == 0) {
        *progress = 0;
        *progress_every = 0;
    } else if (every > 0 || !isatty(STDERR_FILENO)) {
        *progress = 1;
        *progress_every = every > 0 ? every : 30;
    } else {
        *progress = 1;      /* a terminal: one line redrawn in place */
        *progress_every = 0;
    }
}

/* ---- stopping on SIGINT/SIGTERM ------------------------------------------------------------- */

volatile sig_atomic_t fs_cli_stop;

static void on_stop_signal(int sig)
{
    fs_cli_stop = sig;
}

void fs_cli_catch_stop(int once)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = once ? SA_RESETHAND : 0;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
