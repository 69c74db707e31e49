#include "fs_cli.h"
#include "../api/fs_runner.h"
#include "../../scenarios/fs_scenario.h"
#include "../fs_bench.h"
#include "bench_policy.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* The end-to-end benchmark workload: mixed 1-128 GPU jobs with lognormal run
 * times on an H100 fleet at about 90% offered load, FIFO with packing, every
 * job written to /jobs.  Mean size 10.28 GPUs, mean run time 30 min x
 * exp(1.2^2/2) = 61.6 min, so rate = 0.9 x GPUs / (10.28 x 1.027 h). */
#define E2E_YAML \
    "name: bench-e2e\n" \
    "seed: 42\n" \
    "horizon: 1y\n" \
    "cluster:\n" \
    "  pools:\n" \
    "    - {name: main, gpu: H100, nodes: %u, gpus_per_node: 8}\n" \
    "workload:\n" \
    "  synthetic:\n" \
    "    arrivals: {process: poisson, rate: %.3f/h}\n" \
    "    max_jobs: %llu\n" \
    "    gpus: {1: 0.4, 2: 0.1, 4: 0.1, 8: 0.2, 16: 0.1, 32: 0.05, 64: 0.03, 128: 0.02}\n" \
    "    duration: {dist: lognormal, median: 30m, sigma: 1.2}\n" \
    "scheduler: {queue: fifo, mode: best_effort, placement: pack}\n" \
    "output: {timeline_interval: 5m}\n"

/* An inference service alone (docs/services.md): 100 requests/s with
 * lognormal token counts on H100 replicas of 32 slots. */
#define SVC_YAML \
    "name: bench-services\n" \
    "seed: 42\n" \
    "horizon: %s\n" \
    "until: horizon\n" \
    "cluster: {pools: [{name: main, gpu: H100, nodes: 32, gpus_per_node: 8}]}\n" \
    "workload: {synthetic: {arrivals: {rate: 1/d}, gpus: {1: 1.0}, " \
    "duration: {dist: constant, value: 1m}}}\n" \
    "services:\n" \
    "  - name: chat\n" \
    "    mode: %s\n" \
    "    min_replicas: 20\n" \
    "    max_replicas: 200\n" \
    "    requests: {rate: 100/s, input: {dist: lognormal, median: 600, sigma: 1}, " \
    "output: {dist: lognormal, median: 200, sigma: 0.8}%s}\n" \
    "    performance: [{gpu: H100, prefill: 8000, decode: 1500, max_batch: 32, " \
    "decode_single: 80}]\n" \
    "    autoscale: {metric: concurrency, target: 24}\n" \
    "output: {timeline_interval: 1h}\n"

static int bench_services(int quick)
{
    static const char *const modes[2] = {"request", "fluid"};
    for (int k = 0; k < 2; k++) {
        char yaml[2048];
        snprintf(yaml, sizeof yaml, SVC_YAML, k ? (quick ? "30d" : "365d") : (quick ? "2h" : "1d"),
                 modes[k],
                 k ? ", profile: {hourly: {0: 0.02, 1: 0.02, 2: 0.02, 3: 0.02, 4: 0.02, 5: 0.02, "
                     "6: 0.03, 7: 0.04, 8: 0.05, 9: 0.06, 10: 0.06, 11: 0.06, 12: 0.06, 13: 0.06, "
                     "14: 0.06, 15: 0.06, 16: 0.05, 17: 0.05, 18: 0.05, 19: 0.05, 20: 0.04, "
                     "21: 0.04, 22: 0.03, 23: 0.03}}"
                   : "");
        fs_config_t cfg;
        fs_error_t err;
        fs_error_clear(&err);
        int rc = fs_scenario_load_string("<bench>", yaml, NULL, 0, &cfg, &err);
        fs_run_opts_t opts;
        fs_run_opts_init(&opts);
        fs_run_report_t rep;
        if (!rc)
            rc = fs_run_config(&cfg, &opts, &rep, &err);
        if (rc) {
            fprintf(stderr, "fleetsim bench: %s\n", err.msg);
            fs_config_release(&cfg);
            return fs_error_exit_status(rc);
        }
        const fs_service_row_t *s = &rep.services[0];
        double days = rep.totals.end_time / 86400;
        if (k == 0)
            printf("service, request mode  %llu requests in %.3f s (%.2f d, 100 req/s, HPA): "
                   "%.2f M requests/s; TTFT p99 %.3f s\n", (unsigned long long)s->requests,
                   rep.wall_s, days, (double)s->requests / rep.wall_s / 1e6, s->ttft_p99);
        else
            printf("service, fluid mode    %.0f d at 100 req/s with a daily profile (%.3g "
                   "requests, HPA) in %.3f s; TTFT p99 %.3f s (target: a year in < 5 s)\n",
                   days, (double)s->requests, rep.wall_s, s->ttft_p99);
        fs_config_release(&cfg);
    }
    return 0;
}

static long peak_rss_kb(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

/* 1 if files a and b hold the same bytes; *size = a's size (0 unknown). */
static int same_bytes(const char *a, const char *b, long *size)
{
    struct stat sa, sb;
    *size = stat(a, &sa) == 0 ? (long)sa.st_size : 0;
    if (stat(b, &sb) != 0 || sb.st_size != sa.st_size)
        return 0;
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        char x[65536], y[65536];
        size_t na = fread(x, 1, sizeof x, fa), nb = fread(y, 1, sizeof y, fb);
        same = na == nb && memcmp(x, y, na) == 0;
        if (na == 0)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

static int bench_e2e(unsigned long long jobs, unsigned long long gpus)
{
    unsigned nodes = (unsigned)((gpus + 7) / 8);
    double rate_h = 0.9 * (double)nodes * 8 / (10.28 * 1.0268);
    char yaml[2048];
    snprintf(yaml, sizeof yaml, E2E_YAML, nodes, rate_h, jobs);
    fs_config_t cfg;
    fs_error_t err;
    fs_error_clear(&err);
    int rc = fs_scenario_load_string("<bench>", yaml, NULL, 0, &cfg, &err);
    if (rc) {
        fprintf(stderr, "fleetsim bench: %s\n", err.msg);
        return fs_error_exit_status(rc);
    }
    char out[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(out, sizeof out, "%s/fleetsim-bench-%ld.h5", tmp && *tmp ? tmp : "/tmp", (long)getpid());
    fs_run_opts_t opts;
    fs_run_opts_init(&opts);
    opts.output = out;
    opts.writer_thread = 1;     /* as `fleetsim run` */
    fs_run_report_t rep;
    rc = fs_run_config(&cfg, &opts, &rep, &err);
    if (rc) {
        fprintf(stderr, "fleetsim bench: %s\n", err.msg);
        fs_config_release(&cfg);
        return fs_error_exit_status(rc);
    }
    /* the same file written on the run's own thread: the time the writer
     * thread saves, and a check that it writes the same bytes */
    char out1[4160];
    snprintf(out1, sizeof out1, "%s.1", out);
    fs_run_report_t one;
    opts.output = out1;
    opts.writer_thread = 0;
    rc = fs_run_config(&cfg, &opts, &one, &err);
    opts.writer_thread = 1;
    if (rc) {
        fprintf(stderr, "fleetsim bench: %s\n", err.msg);
        unlink(out);
        fs_config_release(&cfg);
        return fs_error_exit_status(rc);
    }
    long size = 0;
    int same = same_bytes(out, out1, &size);
    unlink(out);
    unlink(out1);
    /* the same run without the results file: what writing it costs */
    fs_run_report_t bare;
    opts.output = NULL;
    rc = fs_run_config(&cfg, &opts, &bare, &err);
    if (rc) {
        fprintf(stderr, "fleetsim bench: %s\n", err.msg);
        fs_config_release(&cfg);
        return fs_error_exit_status(rc);
    }
    printf("end-to-end  %llu jobs on %u GPUs (FIFO, pack, HDF5 written)\n",
           (unsigned long long)rep.summary.jobs_submitted, nodes * 8);
    printf("  wall          %.3f s\n", rep.wall_s);
    printf("  jobs/s        %.0f\n", (double)rep.summary.jobs_submitted / rep.wall_s);
    printf("  events/s      %.0f (%llu events, %llu passes)\n", (double)rep.summary.events / rep.wall_s,
           (unsigned long long)rep.summary.events, (unsigned long long)rep.summary.passes);
    printf("  utilization   %.1f%%, wait p95 %.0f s, simulated %.1f d\n",
           100 * rep.summary.utilization, rep.summary.wait_p95, rep.summary.makespan / 86400);
    printf("  results file  %.1f MB compressed (%.1f bytes per job)\n", (double)size / 1e6,
           rep.summary.jobs_submitted ? (double)size / (double)rep.summary.jobs_submitted : 0.0);
    printf("  no output     %.3f s: with the file %.2fx the run without it (target <= 1.3x on 2 cores)\n",
           bare.wall_s, bare.wall_s > 0 ? rep.wall_s / bare.wall_s : 0.0);
    printf("  one thread    %.3f s with the file written by the run's thread (%.2fx); %s\n",
           one.wall_s, bare.wall_s > 0 ? one.wall_s / bare.wall_s : 0.0,
           same ? "the same bytes as with the writer thread"
                : "FILES DIFFER from the writer thread's");
    printf("  peak RSS      %.1f MB\n", (double)peak_rss_kb() / 1024.0);
    fs_config_release(&cfg);
    return 0;
}

int fs_cmd_bench(int argc, char **argv)
{
    int quick = 0, policy_only = 0, trace = 1, trace_only = 0, services_only = 0;
    unsigned long long jobs = 1000000, gpus = 10000, trace_rows = 5000000;
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "bench", argc, argv, fs_cli_find("bench")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        const char *v = g.arg;
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("bench"));
            return 0;
        } else if (id == FS_OPT_QUICK) {
            quick = 1;
        } else if (id == FS_OPT_POLICY_BENCH) {
            policy_only = 1;
        } else if (id == FS_OPT_TRACE) {
            trace_only = 1;
        } else if (id == FS_OPT_NO_TRACE) {
            trace = 0;
        } else if (id == FS_OPT_SERVICES) {
            services_only = 1;
        } else if (id == FS_OPT_TRACE_ROWS) {
            if (!v || fs_cli_parse_u64(v, &trace_rows) || trace_rows == 0)
                return fs_cli_usage_error("bench", "--trace-rows needs a positive integer");
        } else if (id == 'j') {
            if (!v || fs_cli_parse_u64(v, &jobs) || jobs == 0)
                return fs_cli_usage_error("bench", "--jobs needs a positive integer");
        } else if (id == FS_OPT_GPUS) {
            if (!v || fs_cli_parse_u64(v, &gpus) || gpus == 0 || gpus > 100000000)
                return fs_cli_usage_error("bench", "--gpus needs an integer in 1..100000000");
        } else if (id == FS_CLI_BAD) {
            return g.status;
        } else {
            return fs_cli_usage_error("bench", "unknown argument '%s'", g.arg);
        }
    }
    if (quick && jobs == 1000000)
        jobs = 100000;
    if (policy_only)
        return fs_bench_policy(jobs);
    if (quick && trace_rows == 5000000)
        trace_rows = 1000000;
    if (trace_only)
        return fs_bench_trace(trace_rows);
    if (services_only)
        return bench_services(quick);
    /* end to end first, so that peak RSS is the run's, not the micro-benchmarks' */
    int rc = bench_e2e(jobs, gpus);
    if (rc)
        return rc;
    size_t n;
    const fs_bench_entry_t *t = fs_bench_table(&n);
    static const size_t sizes[] = {100, 10000, 1000000};
    printf("\nevent set, ns per operation at N pending:\n");
    printf("  %-12s %12s %12s %12s\n", "benchmark", "N=1e2", "N=1e4", "N=1e6");
    for (size_t i = 0; i < n; i++) {
        printf("  %-12s", t[i].name);
        for (size_t k = 0; k < 3; k++) {
            fs_bench_result_t r;
            uint64_t ops = quick ? 1000000 : 5000000;
            if (t[i].fn(sizes[k], ops, 1, &r)) {
                printf(" %12s", "error");
                continue;
            }
            printf(" %12.1f", r.ns_per_op);
        }
        printf("\n");
    }
    printf("(target: hold <= 40 ns at N=1e4 on the 2-core reference machine)\n");
    rc = fs_bench_policy(quick ? 30000 : 200000);
    if (!rc) {
        printf("\n");
        rc = bench_services(quick);
    }
    if (!rc && trace)
        rc = fs_bench_trace(trace_rows);
    return rc;
}
