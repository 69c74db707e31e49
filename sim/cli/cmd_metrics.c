/*
 * fleetsim metrics RESULTS.h5 -o FILE | --tsdb DIR: the run's GPUs as DCGM
 * telemetry, in OpenMetrics text or as Prometheus TSDB blocks
 * (analysis/fs_metrics.h, analysis/fs_tsdb.h, docs/observability.md).
 */
#include "fs_cli.h"
#include "../../analysis/fs_metrics.h"
#include "../../analysis/fs_tsdb.h"
#include "../../scenarios/fs_units.h"
#include "../fs_out.h"
#include "../fs_time.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct report {
    int quiet, progress;
    const char *out;
    double start, last;     /* wall time of the start and of the last progress line */
} report_t;

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int on_estimate(void *arg, uint64_t series, uint64_t samples, uint64_t bytes)
{
    report_t *r = arg;
    if (!r->quiet)
        printf("metrics      %s: expected about %llu series, %llu samples, %.1f MB\n", r->out,
               (unsigned long long)series, (unsigned long long)samples, (double)bytes / 1e6);
    fflush(stdout);
    return 0;
}

/* a line on stderr every 2 s of a long export (redrawn in place on a terminal) */
static void on_progress(void *arg, uint64_t done, uint64_t total)
{
    report_t *r = arg;
    double now = wall();
    if (!r->progress || now - r->start < 2 || (now - r->last < 2 && done < total))
        return;
    r->last = now;
    int tty = isatty(2);
    fprintf(stderr, "%smetrics      %5.1f%% of the GPU series%s", tty ? "\r" : "",
            total ? 100.0 * (double)done / (double)total : 100.0, tty ? "" : "\n");
    if (tty && done == total)
        fputc('\n', stderr);
}

/* SIZE: bytes, or a number with k, M, G, T (powers of 1000) */
static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    double v = strtod(s, &end);
    double mul = 1;
    if (end == s || !(v > 0))
        return -1;
    if (*end) {
        const char *u = "kMGT";
        const char *p = strchr(u, *end);
        if (!p || (end[1] && strcmp(end + 1, "B") != 0))
            return -1;
        mul = pow(1000, (double)(p - u + 1));
    }
    if (v * mul >= 1.8e19)
        return -1;
    *out = (uint64_t)(v * mul);
    return 0;
}

static int parse_time(const char *opt, const char *v, double *out)
{
    fs_time_t t;
    fs_error_t e;
    if (!v || fs_units_parse_duration(v, &t, &e) || t < 0)
        return fs_cli_usage_error("metrics", "%s: " FS_UNITS_DURATION_EXPECT " (simulated time "
                                  "from the start of the run), got '%s'", opt, v ? v : "");
    *out = fs_time_to_s(t);
    return 0;
}

int fs_cmd_metrics(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *tsdb = NULL;
    report_t rep = {0};
    fs_metrics_opts_t o = {.step = 60, .origin = 1767225600, .node_hi = UINT32_MAX,
                           .xid_window = 300, .to = -1};
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "metrics", argc, argv, fs_cli_find("metrics")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        unsigned long long v;
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("metrics"));
            return 0;
        } else if (id == FS_CLI_BAD) {
            return g.status;
        } else if (id == 'q') {
            rep.quiet = 1;
        } else if (id == 'o') {
            if (!g.arg)
                return fs_cli_usage_error("metrics", "-o needs a file");
            out = g.arg;
        } else if (id == FS_OPT_TSDB) {
            if (!g.arg || !*g.arg)
                return fs_cli_usage_error("metrics", "--tsdb needs a directory");
            tsdb = g.arg;
        } else if (id == FS_OPT_BLOCK) {
            if (!g.arg || fs_cli_parse_u64(g.arg, &v) || v < 2 || v % 2 || v > 24 * 31)
                return fs_cli_usage_error("metrics", "--block: expected whole hours, a multiple "
                                          "of 2 from 2 to 744, got '%s'", g.arg ? g.arg : "");
            o.block_ms = (int64_t)v * 3600 * 1000;
        } else if (id == FS_OPT_STEP) {
            if (!g.arg || fs_cli_parse_u64(g.arg, &v) || v < 1 || v > 86400 * 365)
                return fs_cli_usage_error("metrics", "--step: expected whole seconds from 1 to "
                                          "31536000, got '%s'", g.arg ? g.arg : "");
            o.step = (uint32_t)v;
        } else if (id == FS_OPT_ORIGIN) {
            if (!g.arg || fs_cli_parse_u64(g.arg, &v) || v > 32503680000ULL)
                return fs_cli_usage_error("metrics", "--origin: expected Unix seconds from 0 to "
                                          "32503680000, got '%s'", g.arg ? g.arg : "");
            o.origin = (int64_t)v;
        } else if (id == FS_OPT_XID_WINDOW) {
            if (!g.arg || fs_cli_parse_u64(g.arg, &v) || v < 1 || v > 86400 * 365)
                return fs_cli_usage_error("metrics", "--xid-window: expected whole seconds from 1 "
                                          "to 31536000, got '%s'", g.arg ? g.arg : "");
            o.xid_window = (uint32_t)v;
        } else if (id == FS_OPT_POOLS) {
            if (!g.arg || !*g.arg)
                return fs_cli_usage_error("metrics", "--pools: expected pool names, comma-separated");
            o.pools = g.arg;
        } else if (id == FS_OPT_FAMILIES) {
            if (!g.arg || !*g.arg)
                return fs_cli_usage_error("metrics", "--families: expected metric names, "
                                          "comma-separated");
            o.families = g.arg;
        } else if (id == FS_OPT_LEVEL) {
            if (g.arg && strcmp(g.arg, "gpu") == 0)
                o.level = FS_METRICS_GPU;
            else if (g.arg && strcmp(g.arg, "node") == 0)
                o.level = FS_METRICS_NODE;
            else if (g.arg && strcmp(g.arg, "pool") == 0)
                o.level = FS_METRICS_POOL;
            else
                return fs_cli_usage_error("metrics", "--level: expected gpu, node or pool, got '%s'",
                                          g.arg ? g.arg : "");
        } else if (id == FS_OPT_FROM) {
            if (parse_time("--from", g.arg, &o.from))
                return 2;
        } else if (id == FS_OPT_TO) {
            if (parse_time("--to", g.arg, &o.to))
                return 2;
        } else if (id == FS_OPT_MAX_SIZE) {
            if (!g.arg || parse_size(g.arg, &o.max_size))
                return fs_cli_usage_error("metrics", "--max-size: expected bytes, or a number with "
                                          "k, M, G or T (e.g. 20G), got '%s'", g.arg ? g.arg : "");
        } else if (id == FS_OPT_LEGACY_HOSTNAME) {
            o.legacy_hostname = 1;
        } else if (id == FS_OPT_LENIENT) {
            o.lenient = 1;
        } else if (id == FS_OPT_NODES) {
            unsigned long long lo, hi;
            char *dash = g.arg ? strchr(g.arg, '-') : NULL;
            char first[32];
            size_t n = dash ? (size_t)(dash - g.arg) : 0;
            if (!dash || n == 0 || n >= sizeof first ||
                (memcpy(first, g.arg, n), first[n] = '\0', fs_cli_parse_u64(first, &lo)) ||
                fs_cli_parse_u64(dash + 1, &hi) || lo > hi || hi > UINT32_MAX)
                return fs_cli_usage_error("metrics", "--nodes: expected FIRST-LAST (node numbers "
                                          "in each pool, FIRST <= LAST), got '%s'",
                                          g.arg ? g.arg : "");
            o.node_lo = (uint32_t)lo;
            o.node_hi = (uint32_t)hi;
        } else if (!in) {
            in = g.arg;
        } else {
            return fs_cli_usage_error("metrics", "only one results file may be given");
        }
    }
    if (!in)
        return fs_cli_usage_error("metrics", "the results file is needed");
    if (out && tsdb)
        return fs_cli_usage_error("metrics", "-o FILE and --tsdb DIR: give one of them");
    if (!out && !tsdb)
        return fs_cli_usage_error("metrics", "-o FILE (OpenMetrics text) or --tsdb DIR (Prometheus "
                                  "blocks) is needed");
    if (o.block_ms && !tsdb)
        return fs_cli_usage_error("metrics", "--block applies to --tsdb");
    if (o.to >= 0 && o.to < o.from)
        return fs_cli_usage_error("metrics", "--to is before --from");
    o.tsdb = tsdb != NULL;
    const char *target = tsdb ? tsdb : out;
    fs_error_t err;
    const char *inputs[] = {in};
    if (fs_out_check_inputs("metrics", target, inputs, 1, &err)) {
        fprintf(stderr, "fleetsim metrics: %s\n", err.msg);
        return 2;
    }
    rep.out = target;
    rep.progress = 1;
    rep.start = rep.last = wall();
    o.on_estimate = on_estimate;
    o.on_progress = on_progress;
    o.arg = &rep;
    /* SIGINT/SIGTERM: stop between GPUs and remove what was written (a
     * second signal kills at once) */
    fs_cli_catch_stop(1);
    o.interrupt = &fs_cli_stop;
    fs_metrics_stats_t st;
    int rc = fs_metrics_write(in, target, &o, &st, &err);
    if (rc) {
        fprintf(stderr, "fleetsim metrics: %s\n", err.msg);
        return rc == FS_EINVAL ? 2 : fs_error_exit_status(rc);
    }
    if (st.sched_skipped_interval > 0)
        fprintf(stderr, "fleetsim metrics: note: the scheduler's series (fleetsim_*) are left out: "
                "/timeline is sampled every %.0f s, more than --step %u\n",
                st.sched_skipped_interval, (unsigned)o.step);
    if (!rep.quiet) {
        if (tsdb)
            printf("metrics      %s: %llu GPUs, %llu series, %llu samples, %llu blocks, %.1f MB "
                   "(%.2f bytes per sample)\n", target, (unsigned long long)st.gpus,
                   (unsigned long long)st.series, (unsigned long long)st.samples,
                   (unsigned long long)st.blocks, (double)st.bytes / 1e6,
                   st.samples ? (double)st.bytes / (double)st.samples : 0.0);
        for (size_t f = 0; tsdb && f < fs_metrics_n_families() && f < FS_METRICS_MAX_FAMILIES; f++)
            if (st.fam_samples[f])
                printf("  %-46s %12llu samples  %6.3f chunk bytes per sample\n",
                       fs_metrics_family_name(f), (unsigned long long)st.fam_samples[f],
                       (double)st.fam_bytes[f] / (double)st.fam_samples[f]);
        if (!tsdb)
            printf("metrics      %s: %llu GPUs, %llu series, %llu samples, %.1f MB\n", target,
                   (unsigned long long)st.gpus, (unsigned long long)st.series,
                   (unsigned long long)st.samples, (double)st.bytes / 1e6);
    }
    return 0;
}
