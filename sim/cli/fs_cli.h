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

#include <stdio.h>

typedef struct fs_command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;    /* one line for `fleetsim help` */
    const char *usage;      /* full usage text for `fleetsim CMD --help` */
} fs_command_t;

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
/* The trace-parsing benchmark of `fleetsim bench` (sim/cli/bench_trace.c). */
int fs_bench_trace(unsigned long long rows);
int fs_cmd_frag(int argc, char **argv);
int fs_cmd_versus(int argc, char **argv);

/* Prints "fleetsim CMD: message" to stderr and returns 2 (usage error). */
int fs_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True when argv[i] is -h or --help. */
int fs_cli_is_help(const char *arg);
/* Prints a command's usage to f. */
void fs_cli_print_usage(FILE *f, const fs_command_t *c);
/* Parses an unsigned 64-bit integer (decimal); returns 0 on success. */
int fs_cli_parse_u64(const char *s, unsigned long long *out);
/* Warm-up (s) of a results file, from its "scenario" attribute loaded with
 * the scenario language (cmd_compare.c).  0 or an FS_E* code with err set. */
#include "../fs_error.h"
int fs_cli_results_warmup(const char *path, double *warmup_s, fs_error_t *err);

#endif
