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
     "usage: fleetsim bench [--quick] [--jobs N] [--gpus N]\n"
     "\n"
     "Runs the event-set hold benchmark (10^2, 10^4, 10^6 pending events) and an\n"
     "end-to-end run (synthetic jobs, FIFO, results written to HDF5), and prints\n"
     "ns per hold, jobs/s, events/s and peak memory.  Timing never fails anything.\n"
     "  --quick    smaller sizes (a few seconds)\n"
     "  --jobs N   end-to-end jobs (default 1000000)\n"
     "  --gpus N   end-to-end fleet size in GPUs (default 10000)\n"},
    {"help", fs_cmd_help, "list the commands, or show one command's usage",
     "usage: fleetsim help [COMMAND]\n"},
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
