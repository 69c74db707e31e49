/*
 * fs_cli: the fleetsim program's commands, as rows of one table (git's
 * builtin.h style).  Each command is one file sim/cli/cmd_<name>.c with a
 * function fs_cmd_<name>(argc, argv) returning the process exit status:
 * 0 success, 1 run-time failure, 2 bad usage or invalid input.
 * The CLI is the only place that wires scenarios, traces, models and
 * analysis together (sim/cli/fs_runner.c).
 */
#ifndef FS_CLI_H
#define FS_CLI_H

#include <getopt.h>
#include <signal.h>
#include <stdio.h>

/* One option of a command, for getopt_long: every command parses its
 * arguments with fs_cli_getopt over its row's table, so that the long
 * forms (--output FILE, --output=FILE, unique prefixes such as --out),
 * short clusters (-qo FILE, -oFILE) and "--" work alike everywhere; the
 * same tables generate the man page and the shell completion. */
typedef struct fs_cli_opt {
    const char *name;       /* long name without "--" */
    int short_name;         /* 'o', or 0 */
    int has_arg;            /* 0 flag, 1 takes a value */
    int id;                 /* returned by fs_cli_getopt: the short letter, or >= 256 */
    const char *value;      /* the value's name for the docs ("FILE"), or NULL */
} fs_cli_opt_t;

typedef struct fs_command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;    /* one line for `fleetsim help` */
    const char *usage;      /* full usage text for `fleetsim CMD --help` */
    const fs_cli_opt_t *opts;  /* options, ending with a {NULL} row */
    const char *operands;   /* what completes the positional arguments: "file", "dir",
                               "command", a word list "info convert fit", or NULL */
} fs_command_t;

/* Ids of fs_cli_getopt beyond the options' own. */
enum { FS_CLI_END = -1, FS_CLI_OPERAND = -2, FS_CLI_BAD = -3 };
#define FS_CLI_MAX_OPTS 32
/* Ids of the long-only options (the others use their short letter). */
enum fs_cli_opt_id {
    FS_OPT_SET = 256, FS_OPT_SEED, FS_OPT_NO_OUTPUT, FS_OPT_JSON, FS_OPT_DUMP, FS_OPT_KEYS,
    FS_OPT_QUICK, FS_OPT_POLICY_BENCH, FS_OPT_GPUS, FS_OPT_TRACE, FS_OPT_NO_TRACE,
    FS_OPT_TRACE_ROWS, FS_OPT_CSV, FS_OPT_LEVEL, FS_OPT_NO_WAITS, FS_OPT_POINTS, FS_OPT_PYTHON,
    FS_OPT_SHARD, FS_OPT_RESUME, FS_OPT_DRY_RUN, FS_OPT_SCAN, FS_OPT_FORMAT, FS_OPT_LENIENT,
    FS_OPT_KEEP_ORIGIN, FS_OPT_CLASSES, FS_OPT_SCENARIO, FS_OPT_METRICS, FS_OPT_PLACEMENTS,
    FS_OPT_SEEDS, FS_OPT_DEMAND, FS_OPT_SHAPES, FS_OPT_POOLS, FS_OPT_TYPICAL, FS_OPT_DRAW,
    FS_OPT_MAN, FS_OPT_COMPLETION,
    FS_OPT_PROGRESS, FS_OPT_STEP, FS_OPT_ORIGIN, FS_OPT_SERVICES, FS_OPT_REQUESTS, FS_OPT_NODES,
    FS_OPT_XID_WINDOW, FS_OPT_RECORDED, FS_OPT_THRESHOLD, FS_OPT_CAPACITY, FS_OPT_GPN, FS_OPT_SPLIT,
    FS_OPT_TSDB, FS_OPT_BLOCK, FS_OPT_FAMILIES, FS_OPT_FROM, FS_OPT_TO, FS_OPT_MAX_SIZE,
    FS_OPT_LEGACY_HOSTNAME, FS_OPT_MAX_OVER
};

typedef struct fs_cli_getopt {
    const char *cmd;
    int argc;
    char **argv;
    const fs_cli_opt_t *opts;
    int rest;               /* after "--": every argument is an operand */
    const char *arg;        /* the option's value, or the operand; NULL when missing */
    const char *opt;        /* the option as written ("-o", "--output") for messages */
    char optbuf[64];
    char shorts[128];
    struct option longs[FS_CLI_MAX_OPTS + 1];
    int status;             /* FS_CLI_BAD: the exit status to return (2, or 1 for no memory) */
} fs_cli_getopt_t;

/* Prepares to parse argv[1..argc) (argv[0] is the command name) with the
 * table opts (at most FS_CLI_MAX_OPTS).  Returns 0. */
int fs_cli_getopt_init(fs_cli_getopt_t *g, const char *cmd, int argc, char **argv,
                       const fs_cli_opt_t *opts);
/* The next option's id (g->arg its value: NULL when a value is missing,
 * which the caller reports with its own words), FS_CLI_OPERAND (g->arg the
 * operand, in command-line order), FS_CLI_END, or FS_CLI_BAD (an unknown
 * option or a value given to a flag: the usage error is printed; return
 * g->status). */
int fs_cli_getopt(fs_cli_getopt_t *g);
/* The next raw argument (an option that takes two values: compare
 * --points P Q), or NULL. */
const char *fs_cli_getopt_take(fs_cli_getopt_t *g);

/* The man page fleetsim.1 (roff) and the bash completion script, generated
 * from the command table, the option tables and the scenario key table
 * (`fleetsim help --man`, `fleetsim help --completion bash`). */
void fs_cli_write_man(FILE *f);
void fs_cli_write_bash_completion(FILE *f);

const fs_command_t *fs_cli_commands(size_t *n);
const fs_command_t *fs_cli_find(const char *name);

int fs_cmd_run(int argc, char **argv);
int fs_cmd_validate(int argc, char **argv);
int fs_cmd_bench(int argc, char **argv);
int fs_cmd_help(int argc, char **argv);
int fs_cmd_version(int argc, char **argv);
int fs_cmd_sweep(int argc, char **argv);
int fs_cmd_merge(int argc, char **argv);
int fs_cmd_plan(int argc, char **argv);
int fs_cmd_compare(int argc, char **argv);
int fs_cmd_report(int argc, char **argv);
int fs_cmd_trace(int argc, char **argv);
int fs_cmd_calibrate(int argc, char **argv);
/* The trace-parsing benchmark of `fleetsim bench` (sim/cli/bench_trace.c). */
int fs_bench_trace(unsigned long long rows);
int fs_cmd_frag(int argc, char **argv);
int fs_cmd_versus(int argc, char **argv);
int fs_cmd_metrics(int argc, char **argv);

/* Prints "fleetsim CMD: message" to stderr and returns 2 (usage error). */
int fs_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True when argv[i] is -h or --help. */
int fs_cli_is_help(const char *arg);
/* Prints a command's usage to f. */
void fs_cli_print_usage(FILE *f, const fs_command_t *c);
/* Parses an unsigned 64-bit integer (decimal); returns 0 on success. */
int fs_cli_parse_u64(const char *s, unsigned long long *out);
/* --shard I/N (sweep, plan): 0 <= I < N <= 10^6; returns 0 on success. */
int fs_cli_parse_shard(const char *s, size_t *i, size_t *n);
/* Monotonic wall clock in seconds (progress lines and timings only; never
 * read by the simulation). */
/* --progress S: 0..86400 seconds into *every (a usage error, 2, otherwise). */
int fs_cli_parse_progress(const char *cmd, const char *v, double *every);
/* Where progress goes (stderr; -q quiets stdout only): every < 0 is the
 * default (redrawn in place on a terminal, one whole line every 30 s
 * otherwise); every 0 or none set: no progress; S > 0: a whole line every S
 * seconds.  *progress_every 0 means in place. */
void fs_cli_progress_mode(double every, int none, int *progress, double *progress_every);
/* Warm-up (s) of a results file, from its "scenario" attribute loaded with
 * the scenario language (cmd_compare.c).  0 or an FS_E* code with err set. */
#include "../fs_error.h"
int fs_cli_results_warmup(const char *path, double *warmup_s, fs_error_t *err);

/* ---- stopping on SIGINT/SIGTERM --------------------------------------------------------
 * The commands that stop cleanly (run, trace, sweep, versus, plan) install
 * one handler that stores the signal's number in fs_cli_stop; the run and
 * sweep layers poll it between instants and runs (fs_run_opts_t.interrupt).
 * Process state for signal delivery, not run state: runs only read it.
 * once = 1: a second signal kills at once (SA_RESETHAND; run and trace,
 * whose work is one piece); 0: it is caught again (sweep, versus and plan
 * stop between runs and keep what finished). */
extern volatile sig_atomic_t fs_cli_stop;
void fs_cli_catch_stop(int once);

#endif
