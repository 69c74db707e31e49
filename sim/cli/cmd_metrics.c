/*
 * fleetsim metrics RESULTS.h5 -o FILE: the run's GPUs as DCGM telemetry in
 * OpenMetrics text (analysis/fs_metrics.h, docs/observability.md).
 */
#include "fs_cli.h"
#include "../../analysis/fs_metrics.h"
#include "../fs_out.h"

#include <stdint.h>
#include <string.h>


int fs_cmd_metrics(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    int quiet = 0;
    fs_metrics_opts_t o = {.step = 60, .origin = 1767225600, .node_hi = UINT32_MAX,
                           .xid_window = 300};
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
            quiet = 1;
        } else if (id == 'o') {
            if (!g.arg)
                return fs_cli_usage_error("metrics", "-o needs a file");
            out = g.arg;
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
    if (!out)
        return fs_cli_usage_error("metrics", "-o FILE is needed");
    fs_error_t err;
    const char *inputs[] = {in};
    if (fs_out_check_inputs("metrics", out, inputs, 1, &err)) {
        fprintf(stderr, "fleetsim metrics: %s\n", err.msg);
        return 2;
    }
    fs_metrics_stats_t st;
    int rc = fs_metrics_write(in, out, &o, &st, &err);
    if (rc) {
        fprintf(stderr, "fleetsim metrics: %s\n", err.msg);
        return rc == FS_EINVAL ? 2 : fs_error_exit_status(rc);
    }
    if (!quiet)
        printf("metrics      %s: %llu GPUs, %llu series, %llu samples, %.1f MB\n", out,
               (unsigned long long)st.gpus, (unsigned long long)st.series,
               (unsigned long long)st.samples, (double)st.bytes / 1e6);
    return 0;
}
