/*
 * fleetsim trace info|convert|fit: inspect a trace, convert it to the native
 * format, or fit a synthetic workload (a scenario fragment) to it.
 *
 * Every subcommand reads the trace through fs_trace_open (any format of the
 * table in traces/fs_trace.c) in batches.  Memory: the statistics keep
 * fixed-size tables (168 hour-of-week counts, the GPU-count histogram, one
 * row per tenant) plus ONE FLOAT PER JOB for the run-time percentiles and
 * fits (4 bytes: 10 M jobs cost 40 MB; a float keeps 7 significant digits,
 * far finer than any trace records run times) and one float per job with a
 * recorded start for the wait percentiles; fit adds one byte per job (its
 * size class).  Quantiles are GSL's (type 7, interpolated).
 *
 * Time of day: hours and days are counted from the trace's time origin
 * (t = 0 as the reader delivers it: with the readers' defaults, the first
 * submission; --keep-origin keeps the trace's own origin, e.g. Unix time,
 * whose day 0 is a Thursday, hours in UTC).  A fitted profile is aligned
 * the same way: hour 0 of the synthetic run is hour 0 of that origin.
 */
#include "fs_cli.h"
#include "fs_cliout.h"
#include "../../analysis/fs_fit.h"
#include "../../models/fs_mig.h"
#include "../../scenarios/fs_scenario.h"
#include "../../scenarios/fs_units.h"
#include "../../traces/fs_synth.h"
#include "../../traces/fs_reqtrace.h"
#include "../../traces/fs_trace.h"
#include "../fs_alloc.h"
#include "../fs_out.h"
#include "../../traces/fs_native.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_statistics_float.h>

#define HOURS_PER_WEEK (FS_SYNTH_HOURS * FS_SYNTH_DAYS)
#define BATCH 4096
/* At most this many size classes (--classes). */
#define MAX_CLASSES 32
/* A size class needs this many jobs to get its own duration model. */
#define MIN_CLASS_JOBS 30
/* The largest GPU count (as in the scenario language). */
#define MAX_GPUS 2147483648.0

/* ---- options ------------------------------------------------------------ */

typedef struct topts {
    const char *sub;            /* info, convert, fit */
    const char *file;           /* the trace (or NULL with --scenario) */
    const char *scenario;       /* --scenario: the workload of a scenario */
    const char *format;         /* --format (NULL: auto when the table has it, else native) */
    const char *output;         /* -o */
    const char *classes;        /* --classes */
    int lenient, json, keep_origin;
    int requests;               /* fit --requests: FILE is a request trace */
} topts_t;

typedef struct sclass {
    uint32_t lo, hi;
} sclass_t;

/* ---- streaming statistics ----------------------------------------------- */

typedef struct tstat {
    uint64_t jobs, fractional, no_tenant;
    double first, last;             /* submit, s */
    double gpu_hours;
    double dur_sum;                 /* s */
    uint32_t *sizes;                /* GPU-count histogram, ascending sizes */
    uint64_t *size_n;
    size_t n_sizes, cap_sizes;
    float *dur;                     /* run time of each job, s */
    uint8_t *cls;                   /* fit: size class of each job (n_cls = none) */
    size_t n_dur, cap_dur, cap_cls;
    float *wait;                    /* recorded waits, s */
    size_t n_wait, cap_wait;
    uint64_t week[HOURS_PER_WEEK];  /* arrivals per hour of the week */
    uint64_t states[8];             /* by enum fs_job_rec_state */
    uint64_t *t_jobs;               /* per tenant */
    double *t_gpuh;
    size_t cap_t;
    int32_t n_t;
    const sclass_t *classes;        /* fit only */
    size_t n_cls;
} tstat_t;

static void tstat_release(tstat_t *s)
{
    fs_free(s->sizes);
    fs_free(s->size_n);
    fs_free(s->dur);
    fs_free(s->cls);
    fs_free(s->wait);
    fs_free(s->t_jobs);
    fs_free(s->t_gpuh);
    memset(s, 0, sizeof *s);
}

static int count_size(tstat_t *s, uint32_t g)
{
    size_t lo = 0, hi = s->n_sizes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->sizes[mid] < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < s->n_sizes && s->sizes[lo] == g) {
        s->size_n[lo]++;
        return 0;
    }
    size_t cap = s->cap_sizes;
    if (fs_grow((void **)&s->sizes, &cap, s->n_sizes + 1, sizeof *s->sizes))
        return FS_ENOMEM;
    cap = s->cap_sizes;
    if (fs_grow((void **)&s->size_n, &cap, s->n_sizes + 1, sizeof *s->size_n))
        return FS_ENOMEM;
    s->cap_sizes = cap;
    memmove(s->sizes + lo + 1, s->sizes + lo, (s->n_sizes - lo) * sizeof *s->sizes);
    memmove(s->size_n + lo + 1, s->size_n + lo, (s->n_sizes - lo) * sizeof *s->size_n);
    s->sizes[lo] = g;
    s->size_n[lo] = 1;
    s->n_sizes++;
    return 0;
}

static size_t class_of(const tstat_t *s, uint32_t g)
{
    for (size_t i = 0; i < s->n_cls; i++)
        if (g >= s->classes[i].lo && g <= s->classes[i].hi)
            return i;
    return s->n_cls;
}

static int tstat_add(tstat_t *s, const fs_job_t *j)
{
    double submit = fs_time_to_s(j->submit), dur = fs_time_to_s(j->duration);
    if (s->jobs == 0)
        s->first = submit;
    s->last = submit;
    s->jobs++;
    s->gpu_hours += (double)fs_job_milli(j) / 1000.0 * dur / 3600.0;
    s->dur_sum += dur;
    if (j->gpu_milli < FS_GPU_MILLI_WHOLE)
        s->fractional++;
    if (count_size(s, j->gpus))
        return FS_ENOMEM;
    if (fs_grow((void **)&s->dur, &s->cap_dur, s->n_dur + 1, sizeof *s->dur))
        return FS_ENOMEM;
    if (s->classes) {
        if (fs_grow((void **)&s->cls, &s->cap_cls, s->n_dur + 1, sizeof *s->cls))
            return FS_ENOMEM;
        s->cls[s->n_dur] = (uint8_t)class_of(s, j->gpus);
    }
    s->dur[s->n_dur++] = (float)dur;
    if (j->rec_start >= 0) {
        if (fs_grow((void **)&s->wait, &s->cap_wait, s->n_wait + 1, sizeof *s->wait))
            return FS_ENOMEM;
        s->wait[s->n_wait++] = (float)fs_time_to_s(j->rec_start - j->submit);
    }
    double h = floor(submit / 3600.0);
    s->week[(size_t)fmod(h, HOURS_PER_WEEK)]++;
    s->states[j->rec_state < 8 ? j->rec_state : 0]++;
    if (j->tenant < 0) {
        s->no_tenant++;
    } else {
        size_t need = (size_t)j->tenant + 1, cap = s->cap_t;
        if (need > (size_t)s->n_t) {
            if (fs_grow((void **)&s->t_jobs, &cap, need, sizeof *s->t_jobs))
                return FS_ENOMEM;
            cap = s->cap_t;
            if (fs_grow((void **)&s->t_gpuh, &cap, need, sizeof *s->t_gpuh))
                return FS_ENOMEM;
            s->cap_t = cap;
            for (size_t i = (size_t)s->n_t; i < need; i++) {
                s->t_jobs[i] = 0;
                s->t_gpuh[i] = 0;
            }
            s->n_t = (int32_t)need;
        }
        s->t_jobs[j->tenant]++;
        s->t_gpuh[j->tenant] += (double)fs_job_milli(j) / 1000.0 * dur / 3600.0;
    }
    return 0;
}

/* Seconds of [a, b) falling in each hour of the week (the exposure). */
static void exposure(double a, double b, double out[HOURS_PER_WEEK])
{
    for (size_t i = 0; i < HOURS_PER_WEEK; i++)
        out[i] = 0;
    if (!(b > a))
        return;
    for (double h = floor(a / 3600.0); h * 3600.0 < b; h++) {
        double lo = fmax(a, h * 3600.0), hi = fmin(b, (h + 1) * 3600.0);
        out[(size_t)fmod(h, HOURS_PER_WEEK)] += hi - lo;
    }
}

/* Arrivals per hour by hour of day (24) and per day by day of week (7),
 * exposure-weighted; NaN where the window never covers that hour/day. */
static void rate_profile(const tstat_t *s, double hourly[24], double daily[7])
{
    double ex[HOURS_PER_WEEK];
    exposure(s->first, s->last, ex);
    if (s->jobs && !(s->last > s->first))
        ex[(size_t)fmod(floor(s->first / 3600.0), HOURS_PER_WEEK)] = 0;
    for (int h = 0; h < 24; h++) {
        double c = 0, e = 0;
        for (int d = 0; d < 7; d++) {
            c += (double)s->week[d * 24 + h];
            e += ex[d * 24 + h];
        }
        hourly[h] = e > 0 ? c / (e / 3600.0) : NAN;
    }
    for (int d = 0; d < 7; d++) {
        double c = 0, e = 0;
        for (int h = 0; h < 24; h++) {
            c += (double)s->week[d * 24 + h];
            e += ex[d * 24 + h];
        }
        daily[d] = e > 0 ? c / (e / 86400.0) : NAN;
    }
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static double quantile_f(const float *sorted, size_t n, double p)
{
    return n ? gsl_stats_float_quantile_from_sorted_data(sorted, 1, n, p) : NAN;
}

/* ---- input ----------------------------------------------------------------- */

typedef struct input {
    fs_config_t cfg;
    int have_cfg;
    fs_source_t *src;
    const char *format;
    const char *name;
} input_t;

static const char *default_format(void)
{
    return fs_trace_format_find("auto") ? "auto" : "native";
}

static int open_input(const topts_t *o, input_t *in, fs_error_t *err)
{
    memset(in, 0, sizeof *in);
    if (o->scenario) {
        int rc = fs_scenario_load_file(o->scenario, NULL, 0, &in->cfg, err);
        if (rc)
            return rc;
        in->have_cfg = 1;
        in->name = o->scenario;
        if (in->cfg.workload.kind == FS_WORKLOAD_TRACE) {
            in->format = in->cfg.workload.trace.format ? in->cfg.workload.trace.format : "native";
            return fs_trace_open(in->format, in->cfg.workload.trace.path, &in->cfg.workload.trace.opts,
                                 &in->src, err);
        }
        in->format = "synthetic";
        fs_synth_cfg_t sc = in->cfg.workload.synth; /* shallow, as the runner does */
        sc.horizon = in->cfg.horizon;
        return fs_synth_create(&sc, in->cfg.seed, in->cfg.replication, &in->src, err);
    }
    fs_trace_opts_t topt;
    fs_trace_opts_init(&topt);
    topt.mig_profile = fs_mig_code_find;
    topt.lenient = o->lenient;
    topt.keep_origin = o->keep_origin;
    in->format = o->format ? o->format : default_format();
    in->name = o->file;
    return fs_trace_open(in->format, o->file, &topt, &in->src, err);
}

static void close_input(input_t *in)
{
    if (in->src)
        fs_source_destroy(in->src);
    if (in->have_cfg)
        fs_config_release(&in->cfg);
    memset(in, 0, sizeof *in);
}

/* Reads the whole stream into s. */
static int read_all(input_t *in, tstat_t *s, fs_error_t *err)
{
    fs_job_t *buf = fs_malloc(BATCH * sizeof *buf);
    if (!buf)
        return fs_error_set(err, FS_ENOMEM, "out of memory");
    int rc = 0;
    for (;;) {
        size_t n = 0;
        if ((rc = fs_source_next(in->src, buf, BATCH, &n, err)) != 0 || n == 0)
            break;
        for (size_t i = 0; i < n; i++)
            if (tstat_add(s, &buf[i])) {
                rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory after %llu jobs", in->name,
                                  (unsigned long long)s->jobs);
                break;
            }
        if (rc)
            break;
    }
    fs_free(buf);
    return rc;
}

/* ---- formatting helpers ------------------------------------------------------ */

/* A duration in seconds for people: "45.2 min". */
static const char *human_s(double s, char *buf, size_t n)
{
    if (isnan(s))
        snprintf(buf, n, "-");
    else if (s < 120)
        snprintf(buf, n, "%.1f s", s);
    else if (s < 7200)
        snprintf(buf, n, "%.1f min", s / 60);
    else if (s < 2 * 86400)
        snprintf(buf, n, "%.2f h", s / 3600);
    else
        snprintf(buf, n, "%.2f d", s / 86400);
    return buf;
}

/* A YAML double-quoted string. */
static void put_yaml_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* A JSON string. */
static void put_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void put_json_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.10g", x);
    else
        fputs("null", f);
}

/* Rounds shares to 6 decimals keeping the sum at 1 (the residual goes to
 * the largest), so that the scenario language's "sum to 1" holds. */
static void round_shares(double *p, size_t n)
{
    double sum = 0;
    size_t big = 0;
    for (size_t i = 0; i < n; i++) {
        p[i] = round(p[i] * 1e6) / 1e6;
        sum += p[i];
        if (p[i] > p[big])
            big = i;
    }
    if (n)
        p[big] = round((p[big] + (1 - sum)) * 1e6) / 1e6;
}

/* ---- info ---------------------------------------------------------------------- */

static const double k_dur_p[] = {0.1, 0.25, 0.5, 0.75, 0.9, 0.99};
static const char *const k_dur_pn[] = {"p10", "p25", "p50", "p75", "p90", "p99"};
#define N_DUR_P (sizeof k_dur_p / sizeof k_dur_p[0])

static void print_info_text(const input_t *in, tstat_t *s)
{
    char a[48], b[48], c[48];
    double span = s->jobs ? s->last - s->first : 0;
    printf("trace        %s (format %s)\n", in->name, in->format);
    printf("jobs         %llu", (unsigned long long)s->jobs);
    uint64_t skipped = fs_source_skipped(in->src);
    if (skipped) {
        printf("  (skipped %llu:", (unsigned long long)skipped);
        uint64_t cnt;
        const char *why;
        for (size_t i = 0; (why = fs_source_skip_reason(in->src, i, &cnt)) != NULL; i++)
            printf("%s %s %llu", i ? "," : "", why, (unsigned long long)cnt);
        printf(")");
    }
    printf("\n");
    if (!s->jobs)
        return;
    printf("span         %.0f s .. %.0f s  (%s)\n", s->first, s->last, human_s(span, a, sizeof a));
    printf("GPU-hours    %.1f\n", s->gpu_hours);
    if (span > 0)
        printf("arrivals     %.4g jobs/h on average\n", (double)(s->jobs - 1) / (span / 3600));
    printf("GPUs         ");
    for (size_t i = 0; i < s->n_sizes; i++)
        printf("%s%u: %llu (%.1f%%)", i ? ", " : "", s->sizes[i], (unsigned long long)s->size_n[i],
               100.0 * (double)s->size_n[i] / (double)s->jobs);
    printf("\n");
    if (s->fractional)
        printf("             %llu jobs ask for a fraction of one GPU\n", (unsigned long long)s->fractional);
    printf("duration     mean %s", human_s(s->dur_sum / (double)s->jobs, a, sizeof a));
    for (size_t i = 0; i < N_DUR_P; i++)
        printf("  %s %s", k_dur_pn[i], human_s(quantile_f(s->dur, s->n_dur, k_dur_p[i]), b, sizeof b));
    printf("  max %s\n", human_s(s->dur[s->n_dur - 1], b, sizeof b));
    if (s->n_wait)
        printf("wait         %zu recorded: p50 %s  p90 %s  p99 %s\n", s->n_wait,
               human_s(quantile_f(s->wait, s->n_wait, 0.5), a, sizeof a),
               human_s(quantile_f(s->wait, s->n_wait, 0.9), b, sizeof b),
               human_s(quantile_f(s->wait, s->n_wait, 0.99), c, sizeof c));
    else
        printf("wait         not recorded\n");
    printf("states      ");
    for (int st = 0; st < 8; st++)
        if (s->states[st])
            printf(" %s %llu", fs_job_rec_state_name(st), (unsigned long long)s->states[st]);
    printf("\n");
    if (s->n_t) {
        printf("tenants      %d", (int)s->n_t);
        if (s->no_tenant)
            printf(" (%llu jobs without)", (unsigned long long)s->no_tenant);
        printf("\n");
        for (int32_t t = 0; t < s->n_t; t++) {
            const char *nm = fs_source_tenant_name(in->src, t);
            printf("  %-24s %10llu jobs %12.1f GPU-h\n", nm ? nm : "?", (unsigned long long)s->t_jobs[t],
                   s->t_gpuh[t]);
        }
    }
    double hourly[24], daily[7];
    rate_profile(s, hourly, daily);
    printf("jobs per hour by hour of day (from the trace origin):\n ");
    for (int h = 0; h < 24; h++)
        printf(" %2d:%.4g", h, hourly[h]);
    printf("\njobs per day by day of week (day 0 = the origin's day):\n ");
    for (int d = 0; d < 7; d++)
        printf(" %d:%.4g", d, daily[d]);
    printf("\n");
}

static void print_info_json(const input_t *in, tstat_t *s)
{
    FILE *f = stdout;
    fprintf(f, "{\"trace\": ");
    put_json_str(f, in->name);
    fprintf(f, ", \"format\": ");
    put_json_str(f, in->format);
    fprintf(f, ", \"jobs\": %llu, \"skipped\": %llu, \"skip_reasons\": {", (unsigned long long)s->jobs,
            (unsigned long long)fs_source_skipped(in->src));
    uint64_t cnt;
    const char *why;
    for (size_t i = 0; (why = fs_source_skip_reason(in->src, i, &cnt)) != NULL; i++) {
        fprintf(f, "%s", i ? ", " : "");
        put_json_str(f, why);
        fprintf(f, ": %llu", (unsigned long long)cnt);
    }
    fprintf(f, "}, \"first_submit_s\": ");
    put_json_num(f, s->jobs ? s->first : NAN);
    fprintf(f, ", \"last_submit_s\": ");
    put_json_num(f, s->jobs ? s->last : NAN);
    fprintf(f, ", \"span_s\": ");
    put_json_num(f, s->jobs ? s->last - s->first : NAN);
    fprintf(f, ", \"gpu_hours\": ");
    put_json_num(f, s->gpu_hours);
    fprintf(f, ", \"fractional_jobs\": %llu, \"gpus\": {", (unsigned long long)s->fractional);
    for (size_t i = 0; i < s->n_sizes; i++)
        fprintf(f, "%s\"%u\": %llu", i ? ", " : "", s->sizes[i], (unsigned long long)s->size_n[i]);
    fprintf(f, "}, \"duration_s\": {\"mean\": ");
    put_json_num(f, s->jobs ? s->dur_sum / (double)s->jobs : NAN);
    for (size_t i = 0; i < N_DUR_P; i++) {
        fprintf(f, ", \"%s\": ", k_dur_pn[i]);
        put_json_num(f, quantile_f(s->dur, s->n_dur, k_dur_p[i]));
    }
    fprintf(f, ", \"max\": ");
    put_json_num(f, s->n_dur ? s->dur[s->n_dur - 1] : NAN);
    fprintf(f, "}, \"wait_s\": {\"recorded\": %zu, \"p50\": ", s->n_wait);
    put_json_num(f, quantile_f(s->wait, s->n_wait, 0.5));
    fprintf(f, ", \"p90\": ");
    put_json_num(f, quantile_f(s->wait, s->n_wait, 0.9));
    fprintf(f, ", \"p99\": ");
    put_json_num(f, quantile_f(s->wait, s->n_wait, 0.99));
    fprintf(f, "}, \"states\": {");
    int first = 1;
    for (int st = 0; st < 8; st++)
        if (s->states[st]) {
            fprintf(f, "%s\"%s\": %llu", first ? "" : ", ", fs_job_rec_state_name(st),
                    (unsigned long long)s->states[st]);
            first = 0;
        }
    fprintf(f, "}, \"tenants\": {");
    for (int32_t t = 0; t < s->n_t; t++) {
        const char *nm = fs_source_tenant_name(in->src, t);
        fprintf(f, "%s", t ? ", " : "");
        put_json_str(f, nm ? nm : "?");
        fprintf(f, ": {\"jobs\": %llu, \"gpu_hours\": ", (unsigned long long)s->t_jobs[t]);
        put_json_num(f, s->t_gpuh[t]);
        fprintf(f, "}");
    }
    fprintf(f, "}, \"jobs_without_tenant\": %llu", (unsigned long long)s->no_tenant);
    double hourly[24], daily[7];
    rate_profile(s, hourly, daily);
    fprintf(f, ", \"jobs_per_hour_by_hour_of_day\": [");
    for (int h = 0; h < 24; h++) {
        fprintf(f, "%s", h ? ", " : "");
        put_json_num(f, hourly[h]);
    }
    fprintf(f, "], \"jobs_per_day_by_day_of_week\": [");
    for (int d = 0; d < 7; d++) {
        fprintf(f, "%s", d ? ", " : "");
        put_json_num(f, daily[d]);
    }
    fprintf(f, "], \"arrivals_by_hour_of_day\": [");
    for (int h = 0; h < 24; h++) {
        uint64_t c = 0;
        for (int d = 0; d < 7; d++)
            c += s->week[d * 24 + h];
        fprintf(f, "%s%llu", h ? ", " : "", (unsigned long long)c);
    }
    fprintf(f, "]}\n");
}

static int do_info(const topts_t *o, input_t *in, fs_error_t *err)
{
    tstat_t s;
    memset(&s, 0, sizeof s);
    int rc = read_all(in, &s, err);
    if (!rc) {
        if (s.n_dur)
            qsort(s.dur, s.n_dur, sizeof *s.dur, cmp_float);
        if (s.n_wait)
            qsort(s.wait, s.n_wait, sizeof *s.wait, cmp_float);
        if (o->json)
            print_info_json(in, &s);
        else
            print_info_text(in, &s);
    }
    tstat_release(&s);
    return rc;
}

/* ---- convert ------------------------------------------------------------------------ */

static int interrupted_error(fs_error_t *err)
{
    return fs_error_set(err, FS_EINTR, "interrupted by %s; nothing written",
                        fs_cli_stop == SIGINT ? "SIGINT" : "SIGTERM");
}

static int do_convert(const topts_t *o, input_t *in, fs_error_t *err)
{
    fs_native_writer_t *w = NULL;
    int rc = fs_native_writer_open(o->output, &w, err);
    if (rc)
        return rc;
    fs_job_t *buf = fs_malloc(BATCH * sizeof *buf);
    if (!buf) {
        fs_native_writer_abort(w);
        return fs_error_set(err, FS_ENOMEM, "out of memory");
    }
    uint64_t total = 0;
    for (;;) {
        size_t n = 0;
        if (fs_cli_stop) {
            rc = interrupted_error(err);
            break;
        }
        if ((rc = fs_source_next(in->src, buf, BATCH, &n, err)) != 0 || n == 0) {
            if (rc && fs_cli_stop)   /* a read cut short by the signal */
                rc = interrupted_error(err);
            break;
        }
        for (size_t i = 0; i < n && !rc; i++)
            rc = fs_native_writer_put(w, &buf[i], fs_source_tenant_name(in->src, buf[i].tenant),
                                      fs_source_gpu_type_name(in->src, buf[i].gpu_type), err);
        if (rc)
            break;
        total += n;
    }
    fs_free(buf);
    if (rc) {
        fs_native_writer_abort(w);
        return rc;
    }
    if ((rc = fs_native_writer_close(w, err)) != 0)
        return rc;
    fprintf(stderr, "fleetsim trace convert: %llu jobs written to %s", (unsigned long long)total,
            o->output);
    if (fs_source_skipped(in->src))
        fprintf(stderr, " (%llu rows skipped)", (unsigned long long)fs_source_skipped(in->src));
    fprintf(stderr, "\n");
    return 0;
}

/* ---- fit ------------------------------------------------------------------------------- */

/* "1,2-4,5-8,9-64,65-": ranges of GPU counts ("65-": 65 and up). */
static int parse_classes(const char *text, sclass_t *out, size_t *n, fs_error_t *err)
{
    *n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        unsigned long long lo = strtoull(p, &end, 10), hi = lo;
        if (end == p || errno || lo < 1 || (double)lo > MAX_GPUS)
            return fs_error_set(err, FS_EINVAL, "--classes: expected ranges such as 1,2-4,5-8,9-64,65- "
                                "(got '%s')", text);
        p = end;
        if (*p == '-') {
            p++;
            if (*p == ',' || !*p) {
                hi = (unsigned long long)MAX_GPUS;
            } else {
                hi = strtoull(p, &end, 10);
                if (end == p || errno || hi < lo || (double)hi > MAX_GPUS)
                    return fs_error_set(err, FS_EINVAL, "--classes: bad range in '%s'", text);
                p = end;
            }
        }
        if (*n && lo <= out[*n - 1].hi)
            return fs_error_set(err, FS_EINVAL, "--classes: ranges must be ascending and disjoint "
                                "(got '%s')", text);
        if (*n >= MAX_CLASSES)
            return fs_error_set(err, FS_EINVAL, "--classes: at most %d classes", MAX_CLASSES);
        out[*n].lo = (uint32_t)lo;
        out[*n].hi = (uint32_t)hi;
        (*n)++;
        if (*p == ',')
            p++;
        else if (*p)
            return fs_error_set(err, FS_EINVAL, "--classes: unexpected '%c' in '%s'", *p, text);
    }
    if (!*n)
        return fs_error_set(err, FS_EINVAL, "--classes: no ranges given");
    return 0;
}

typedef struct cfit {
    size_t n;                   /* jobs */
    int ok;                     /* fits done */
    fs_fit_t fit[FS_FIT_N];
    int best;
    double q[3];                /* trace p50, p90, p99 (s) */
    double constant;            /* all values equal: that value; else NaN */
} cfit_t;

static const double k_fit_p[3] = {0.5, 0.9, 0.99};

/* Fits the n values at x (sorts them) into cf; x is the caller's. */
static void fit_values(double *x, size_t n, cfit_t *cf)
{
    memset(cf, 0, sizeof *cf);
    cf->best = -1;
    cf->constant = NAN;
    cf->n = n;
    if (!n)
        return;
    fs_error_t e;
    if (fs_fit_all(x, n, cf->fit, &cf->best, &e) == 0)
        cf->ok = 1;
    /* x is sorted now (fs_fit_all sorts first, whatever it returns) */
    for (int i = 0; i < 3; i++)
        cf->q[i] = gsl_stats_quantile_from_sorted_data(x, 1, n, k_fit_p[i]);
    if (x[0] == x[n - 1])
        cf->constant = x[0];
}

/* Fits the durations selected by cls == want (want = SIZE_MAX: all). */
static int fit_group(const tstat_t *s, size_t want, cfit_t *cf, fs_error_t *err)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_dur; i++)
        n += want == SIZE_MAX || s->cls[i] == want;
    if (!n) {
        fit_values(NULL, 0, cf);
        return 0;
    }
    double *x = fs_malloc(n * sizeof *x);
    if (!x)
        return fs_error_set(err, FS_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < s->n_dur; i++)
        if (want == SIZE_MAX || s->cls[i] == want)
            x[k++] = s->dur[i];
    fit_values(x, n, cf);
    fs_free(x);
    return 0;
}

/* A duration for the fitted YAML: whole seconds from 100 s up, else ms
 * (0.5% at worst, far below the sampling error of any fit). */
static const char *fit_duration(double sec, char *buf, size_t n)
{
    double r = sec >= 100 ? round(sec) : round(sec * 1000) / 1000;
    return fs_units_format_duration(fs_time_from_s(r > 0 ? r : 0.001), buf, n);
}

/* A fitted value for the YAML: a duration (run times) or a plain number
 * (token counts, tokens != 0). */
static const char *fit_value(double v, int tokens, char *buf, size_t n)
{
    if (!tokens)
        return fit_duration(v, buf, n);
    snprintf(buf, n, "%.6g", v);
    return buf;
}

/* The chosen fit as a distribution block (a constant when nothing fits). */
static void put_dist(FILE *f, const cfit_t *cf, int tokens)
{
    char a[FS_UNITS_BUF];
    if (!cf->ok) {
        double v = isnan(cf->constant) ? cf->q[0] : cf->constant;
        fprintf(f, "{dist: constant, value: %s}", fit_value(v, tokens, a, sizeof a));
        return;
    }
    const fs_fit_t *fit = &cf->fit[cf->best];
    if (fit->family == FS_FIT_LOGNORMAL)
        fprintf(f, "{dist: lognormal, median: %s, sigma: %.6g}",
                fit_value(exp(fit->a), tokens, a, sizeof a), fit->b);
    else
        fprintf(f, "{dist: %s, scale: %s, shape: %.6g}", fs_fit_family_name(fit->family),
                fit_value(fit->b, tokens, a, sizeof a), fit->a);
}

static void report_group(FILE *f, const char *label, const cfit_t *cf, const char *unit)
{
    int tok = strcmp(unit, "s") != 0;
    fprintf(f, "#   %-10s n=%-9zu trace p50/p90/p99 = %.6g / %.6g / %.6g %s\n", label, cf->n, cf->q[0],
            cf->q[1], cf->q[2], unit);
    if (!cf->ok) {
        fprintf(f, "#              no fit (%s): constant\n",
                cf->n < 2 ? (tok ? "fewer than 2 requests" : "fewer than 2 jobs")
                          : (tok ? "all counts equal or no likelihood root"
                                 : "all run times equal or no likelihood root"));
        return;
    }
    for (int i = 0; i < FS_FIT_N; i++) {
        const fs_fit_t *fit = &cf->fit[i];
        if (!isfinite(fit->aic)) {
            fprintf(f, "#              %-9s  (no fit)\n", fs_fit_family_name(i));
            continue;
        }
        fprintf(f, "#              %-9s  %s=%-10.5g %s=%-10.5g lnL=%-14.6g AIC=%-14.6g KS=%.4f  "
                   "p50/p90/p99 = %.6g / %.6g / %.6g %s%s\n",
                fs_fit_family_name(i), i == FS_FIT_LOGNORMAL ? "mu" : "shape", fit->a,
                i == FS_FIT_LOGNORMAL ? "sigma" : "scale", fit->b, fit->loglik, fit->aic, fit->ks,
                fs_fit_quantile(fit, 0.5), fs_fit_quantile(fit, 0.9), fs_fit_quantile(fit, 0.99),
                unit, i == cf->best ? "  <- chosen" : "");
    }
}

static void put_shares_line(FILE *f, const char *indent, const char *key, double *p, const char **names,
                            const uint32_t *ids, size_t n)
{
    char a[FS_UNITS_BUF];
    round_shares(p, n);
    fprintf(f, "%s%s: {", indent, key);
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        if (p[i] <= 0)
            continue;
        fprintf(f, "%s", first ? "" : ", ");
        first = 0;
        if (names)
            put_yaml_str(f, names[i]);
        else
            fprintf(f, "%u", ids ? ids[i] : (unsigned)i);
        fprintf(f, ": %s", fs_units_format_number(p[i], a, sizeof a));
    }
    fprintf(f, "}\n");
}

/* The arrival model of a trace (jobs or requests): a separable hour-of-day
 * x day-of-week profile, exposure-weighted, fitted when the trace spans a
 * day (a week), and the base rate that makes the expected count over the
 * window equal to the count (n - 1 gaps over the profile-weighted
 * exposure).  rate is NaN when the window is empty. */
typedef struct arrfit {
    double span, rate;          /* s, per s */
    double hshare[24], dshare[7];
    int use_h, use_d;
} arrfit_t;

static void fit_arrivals(const tstat_t *s, arrfit_t *af)
{
    double span = af->span = s->last - s->first;
    double hourly[24], daily[7];
    rate_profile(s, hourly, daily);
    int use_h = span >= 86400, use_d = span >= 7 * 86400;
    double hs = 0, ds = 0;
    for (int h = 0; h < 24; h++)
        hs += use_h ? hourly[h] : 0;
    for (int d = 0; d < 7; d++)
        ds += use_d ? daily[d] : 0;
    use_h &= hs > 0;
    use_d &= ds > 0;
    double hshare[24], dshare[7];
    for (int h = 0; h < 24; h++)
        hshare[h] = use_h ? hourly[h] / hs : 1.0 / 24;
    for (int d = 0; d < 7; d++)
        dshare[d] = use_d ? daily[d] / ds : 1.0 / 7;
    if (use_h)
        round_shares(hshare, 24);
    if (use_d)
        round_shares(dshare, 7);
    /* base rate: the expected count over the window equals the count */
    double ex[HOURS_PER_WEEK], expect = 0;
    exposure(s->first, s->last, ex);
    for (int d = 0; d < 7; d++)
        for (int h = 0; h < 24; h++)
            expect += ex[d * 24 + h] * 24 * hshare[h] * 7 * dshare[d];
    af->rate = expect > 0 ? (double)(s->jobs - 1) / expect : NAN;
    af->use_h = use_h;
    af->use_d = use_d;
    memcpy(af->hshare, hshare, sizeof hshare);
    memcpy(af->dshare, dshare, sizeof dshare);
}

static int write_fit(FILE *f, const topts_t *o, const input_t *in, tstat_t *s, const sclass_t *cls,
                     size_t n_cls, fs_error_t *err)
{
    char a[FS_UNITS_BUF];
    arrfit_t af;
    fit_arrivals(s, &af);
    double span = af.span, rate = af.rate, *hshare = af.hshare, *dshare = af.dshare;
    int use_h = af.use_h, use_d = af.use_d;
    if (!(rate > 0) || !isfinite(rate))
        return fs_error_set(err, FS_EINVAL, "%s: the trace spans no time (%llu jobs, all submitted at "
                            "%.0f s): no arrival rate to fit", in->name, (unsigned long long)s->jobs,
                            s->first);
    /* durations: pooled, and per class */
    cfit_t pooled, cf[MAX_CLASSES];
    int rc = fit_group(s, SIZE_MAX, &pooled, err);
    for (size_t i = 0; i < n_cls && !rc; i++)
        rc = fit_group(s, i, &cf[i], err);
    if (rc)
        return rc;

    fprintf(f, "# fleetsim trace fit: a synthetic workload fitted to %s (format %s)\n", in->name,
            in->format);
    fprintf(f, "# %llu jobs, submitted over %.0f s (%.2f d)", (unsigned long long)s->jobs, span,
            span / 86400);
    if (fs_source_skipped(in->src))
        fprintf(f, "; %llu rows skipped", (unsigned long long)fs_source_skipped(in->src));
    fprintf(f, ".\n#\n# Arrivals: Poisson, rate x 24 hourly[h] x 7 weekly[d] (hours and days from the "
               "trace origin);\n#   base rate = (jobs - 1) / the profile-weighted exposure of the "
               "window;\n");
    fprintf(f, "#   hourly profile: %s; weekly profile: %s.\n",
            use_h ? "fitted (exposure-weighted rates per hour of day)" : "flat (the trace spans < 1 day)",
            use_d ? "fitted (exposure-weighted rates per day of week)" : "flat (the trace spans < 7 days)");
    fprintf(f, "#\n# Run times: lognormal, Weibull and gamma by maximum likelihood; chosen: the "
               "smallest AIC\n# (= 4 - 2 lnL, two parameters each); KS = Kolmogorov-Smirnov "
               "distance. Classes with\n# fewer than %d jobs use the pooled model.\n",
            MIN_CLASS_JOBS);
    report_group(f, "all", &pooled, "s");
    for (size_t i = 0; i < n_cls; i++) {
        char label[40];
        if (cls[i].lo == cls[i].hi)
            snprintf(label, sizeof label, "%u GPU%s", cls[i].lo, cls[i].lo == 1 ? "" : "s");
        else if ((double)cls[i].hi >= MAX_GPUS)
            snprintf(label, sizeof label, "%u+ GPUs", cls[i].lo);
        else
            snprintf(label, sizeof label, "%u-%u GPUs", cls[i].lo, cls[i].hi);
        if (cf[i].n)
            report_group(f, label, &cf[i], "s");
    }
    if (s->fractional)
        fprintf(f, "#\n# %llu jobs ask for a fraction of one GPU: they count as 1 GPU in the mix.\n",
                (unsigned long long)s->fractional);
    fprintf(f, "#\n# Use it beside cluster: and horizon: keys (the trace spans %s).\n",
            fs_units_format_duration(fs_time_from_s(ceil(span)), a, sizeof a));
    fprintf(f, "workload:\n  synthetic:\n    arrivals:\n      process: poisson\n");
    fprintf(f, "      rate: %.9g/h\n", rate * 3600);
    if (use_h || use_d) {
        fprintf(f, "      profile:\n");
        if (use_h)
            put_shares_line(f, "        ", "hourly", hshare, NULL, NULL, 24);
        if (use_d)
            put_shares_line(f, "        ", "weekly", dshare, NULL, NULL, 7);
    }
    /* the GPU-count mix */
    double *mix = fs_malloc(s->n_sizes * sizeof *mix);
    if (!mix)
        return fs_error_set(err, FS_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->n_sizes; i++)
        mix[i] = (double)s->size_n[i] / (double)s->jobs;
    put_shares_line(f, "    ", "gpus", mix, NULL, s->sizes, s->n_sizes);
    fs_free(mix);
    fprintf(f, "    duration: ");
    put_dist(f, &pooled, 0);
    fprintf(f, "\n");
    int any = 0;
    for (size_t i = 0; i < n_cls; i++) {
        if (cf[i].n < MIN_CLASS_JOBS)
            continue;
        if (!any)
            fprintf(f, "    duration_by_size:\n");
        any = 1;
        fprintf(f, "      - {gpus_min: %u, gpus_max: %u, duration: ", cls[i].lo, cls[i].hi);
        put_dist(f, &cf[i], 0);
        fprintf(f, "}\n");
    }
    /* tenants by job count */
    if (s->n_t) {
        double *sh = fs_malloc((size_t)s->n_t * sizeof *sh);
        const char **names = fs_malloc((size_t)s->n_t * sizeof *names);
        if (!sh || !names) {
            fs_free(sh);
            fs_free(names);
            return fs_error_set(err, FS_ENOMEM, "out of memory");
        }
        uint64_t with = s->jobs - s->no_tenant;
        for (int32_t t = 0; t < s->n_t; t++) {
            sh[t] = (double)s->t_jobs[t] / (double)with;
            const char *nm = fs_source_tenant_name(in->src, t);
            names[t] = nm && *nm ? nm : "?";
        }
        if (s->no_tenant)
            fprintf(f, "    # %llu jobs had no tenant: the shares are among the others\n",
                    (unsigned long long)s->no_tenant);
        put_shares_line(f, "    ", "tenants", sh, names, NULL, (size_t)s->n_t);
        fs_free(sh);
        fs_free(names);
    }
    (void)o;
    return 0;
}

/* Writes OUTPUT through fn into a temporary beside it, renamed into place
 * when complete (sim/fs_out.h: the target's rules and the temporary's
 * name); on any failure nothing is left. */
static int write_out(const char *output, int (*fn)(FILE *f, void *ud, fs_error_t *err), void *ud,
                     fs_error_t *err)
{
    fs_out_t out;
    int rc = fs_out_prepare(&out, output, err);
    if (rc)
        return rc;
    FILE *f = fopen(out.tmp, "w");
    if (!f) {
        rc = fs_error_set(err, FS_EIO, "%s: cannot write: %s", output, strerror(errno));
        fs_out_release(&out);
        return rc;
    }
    rc = fn(f, ud, err);
    if (fclose(f) != 0 && !rc)
        rc = fs_error_set(err, FS_EIO, "%s: write failed: %s", output, strerror(errno));
    if (!rc)
        rc = fs_out_commit(&out, NULL, err);
    if (rc)
        remove(out.tmp);
    fs_out_release(&out);
    return rc;
}

struct fit_args {
    const topts_t *o;
    const input_t *in;
    tstat_t *s;
    const sclass_t *cls;
    size_t n_cls;
};

static int write_fit_cb(FILE *f, void *ud, fs_error_t *err)
{
    struct fit_args *a = ud;
    return write_fit(f, a->o, a->in, a->s, a->cls, a->n_cls, err);
}

static int do_fit(const topts_t *o, input_t *in, fs_error_t *err)
{
    sclass_t cls[MAX_CLASSES];
    size_t n_cls = 0;
    int rc = parse_classes(o->classes ? o->classes : "1,2-4,5-8,9-64,65-", cls, &n_cls, err);
    if (rc)
        return rc;
    tstat_t s;
    memset(&s, 0, sizeof s);
    s.classes = cls;
    s.n_cls = n_cls;
    if ((rc = read_all(in, &s, err)) != 0 || (fs_cli_stop && (rc = interrupted_error(err))))
        goto out;
    if (s.jobs < 2) {
        rc = fs_error_set(err, FS_EINVAL, "%s: %llu job%s: a fit needs at least 2", in->name,
                          (unsigned long long)s.jobs, s.jobs == 1 ? "" : "s");
        goto out;
    }
    struct fit_args fa = {o, in, &s, cls, n_cls};
    rc = write_out(o->output, write_fit_cb, &fa, err);
    if (!rc)
        fprintf(stderr, "fleetsim trace fit: %llu jobs -> %s\n", (unsigned long long)s.jobs, o->output);
out:
    tstat_release(&s);
    return rc;
}

/* ---- fit --requests: a service's request process and token lengths -------------------- */

/* The requests of a trace: the arrival statistics of tstat_t (first, last,
 * count, hour-of-week counts) and per request its time and token counts
 * (8 + 2 x 8 bytes). */
typedef struct rstat {
    tstat_t t;
    double *at, *in, *out;
    size_t n, cap_at, cap_in, cap_out;
} rstat_t;

static void rstat_release(rstat_t *r)
{
    fs_free(r->at);
    fs_free(r->in);
    fs_free(r->out);
}

static int read_requests(const char *path, rstat_t *r, fs_error_t *err)
{
    fs_reqtrace_t *rt;
    int rc = fs_reqtrace_open(path, 0, &rt, err);
    if (rc)
        return rc;
    fs_request_t q;
    while ((rc = fs_reqtrace_next(rt, &q, err)) == 1) {
        if (fs_cli_stop) {
            rc = interrupted_error(err);
            break;
        }
        if (fs_grow((void **)&r->at, &r->cap_at, r->n + 1, sizeof *r->at) ||
            fs_grow((void **)&r->in, &r->cap_in, r->n + 1, sizeof *r->in) ||
            fs_grow((void **)&r->out, &r->cap_out, r->n + 1, sizeof *r->out)) {
            rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
            break;
        }
        double at = fs_time_to_s(q.at);
        r->at[r->n] = at;
        r->in[r->n] = q.input;
        r->out[r->n] = q.output;
        r->n++;
        if (r->t.jobs++ == 0)
            r->t.first = at;
        r->t.last = at;
        r->t.week[(size_t)fmod(floor(at / 3600.0), HOURS_PER_WEEK)]++;
    }
    fs_reqtrace_close(rt);
    return rc;
}

/* The profile's clock: operational time at t (s), the integral of the
 * profile factor 24 hshare[h] x 7 dshare[d] (mean 1 over a week) from 0,
 * as the run's time change applies it.  *hour and *base carry the hour
 * reached and the integral at its start: t must not decrease. */
static double op_time(const arrfit_t *af, double t, double *hour, double *base)
{
    for (;;) {
        size_t w = (size_t)fmod(*hour, HOURS_PER_WEEK);
        double f = 24 * af->hshare[w % 24] * 7 * af->dshare[w / 24];
        if (t < (*hour + 1) * 3600.0)
            return *base + f * (t - *hour * 3600.0);
        *base += f * 3600.0;
        *hour += 1;
    }
}

/* The gaps' model: exponential (Poisson arrivals) against gamma (a renewal
 * process), both by maximum likelihood, the likelihood-ratio test between
 * them (one parameter more: chi-square with 1 degree of freedom).  With
 * ties (gaps of 0 at the trace's time resolution) the likelihood is
 * unbounded: the shape is then the method of moments' 1 / CV^2. */
typedef struct gapfit {
    size_t n, zeros;
    double mean, cv2;
    double ll_exp, ll_gamma, shape, p_lr;
    int gamma_ok;               /* the MLE exists (no ties) */
    int bursty;                 /* the chosen process is gamma */
} gapfit_t;

static int fit_gaps(const rstat_t *r, const arrfit_t *af, gapfit_t *g, fs_error_t *err)
{
    memset(g, 0, sizeof *g);
    g->n = r->n - 1;
    double *x = fs_malloc(g->n * sizeof *x);
    if (!x)
        return fs_error_set(err, FS_ENOMEM, "out of memory");
    double hour = 0, base = 0, prev = op_time(af, r->at[0], &hour, &base);
    for (size_t i = 1; i < r->n; i++) {
        double o = op_time(af, r->at[i], &hour, &base);
        x[i - 1] = o - prev;
        prev = o;
        g->zeros += !(x[i - 1] > 0);
    }
    g->mean = gsl_stats_mean(x, 1, g->n);
    double sd = gsl_stats_sd_m(x, 1, g->n, g->mean);
    g->cv2 = g->mean > 0 ? sd * sd / (g->mean * g->mean) : NAN;
    g->ll_exp = -(double)g->n * (log(g->mean) + 1);
    fs_fit_t fit;
    fs_error_t e;
    if (!g->zeros && g->n >= 2 && fs_fit_gamma(x, g->n, &fit, &e) == 0) {
        g->gamma_ok = 1;
        g->shape = fit.a;
        g->ll_gamma = fit.loglik;
        g->p_lr = gsl_cdf_chisq_Q(fmax(0, 2 * (g->ll_gamma - g->ll_exp)), 1);
        g->bursty = g->p_lr < 0.05;
    } else {
        g->shape = g->cv2 > 0 ? 1 / g->cv2 : NAN;
        g->ll_gamma = g->p_lr = NAN;
        g->bursty = isfinite(g->shape) && fabs(g->shape - 1) > 0.05;
    }
    fs_free(x);
    return 0;
}

static int write_fit_requests(FILE *f, const char *name, rstat_t *r, fs_error_t *err)
{
    arrfit_t af;
    fit_arrivals(&r->t, &af);
    if (!(af.rate > 0) || !isfinite(af.rate))
        return fs_error_set(err, FS_EINVAL, "%s: the trace spans no time (%zu requests, all at "
                            "%.0f s): no arrival rate to fit", name, r->n, r->t.first);
    gapfit_t g;
    int rc = fit_gaps(r, &af, &g, err);
    if (rc)
        return rc;
    cfit_t cin, cout;
    fit_values(r->in, r->n, &cin);
    fit_values(r->out, r->n, &cout);
    fprintf(f, "# fleetsim trace fit --requests: a service's requests fitted to %s\n", name);
    fprintf(f, "# %zu requests over %.3f s (%.2f h): %.6g requests/s on average.\n#\n", r->n, af.span,
            af.span / 3600, (double)(r->n - 1) / af.span);
    fprintf(f, "# Arrivals: rate x 24 hourly[h] x 7 weekly[d] (hours and days from the trace's first "
               "request);\n#   hourly profile: %s; weekly profile: %s.\n",
            af.use_h ? "fitted (exposure-weighted rates per hour of day)" : "flat (the trace spans < 1 day)",
            af.use_d ? "fitted (exposure-weighted rates per day of week)" : "flat (the trace spans < 7 days)");
    fprintf(f, "# Gaps between requests on the profile's clock: n=%zu mean %.6g s, CV^2 %.6g%s.\n", g.n,
            g.mean, g.cv2, g.zeros ? "" : " (no ties)");
    fprintf(f, "#   exponential (poisson)  lnL=%.8g\n", g.ll_exp);
    if (g.gamma_ok)
        fprintf(f, "#   gamma                  lnL=%.8g shape=%.6g; likelihood ratio against "
                   "exponential: p = %.3g\n#   chosen: %s\n",
                g.ll_gamma, g.shape, g.p_lr,
                g.bursty ? "gamma (p < 0.05)" : "poisson (gamma not better at p < 0.05)");
    else
        fprintf(f, "#   gamma: no likelihood (%zu gaps of 0 at the trace's time resolution): shape "
                   "= 1 / CV^2 = %.6g by moments\n#   chosen: %s\n",
                g.zeros, g.shape, g.bursty ? "gamma (shape more than 5% from 1)" : "poisson (shape within 5% of 1)");
    fprintf(f, "#\n# Token counts: lognormal, Weibull and gamma by maximum likelihood; chosen: the "
               "smallest AIC\n# (= 4 - 2 lnL); KS = Kolmogorov-Smirnov distance.\n");
    report_group(f, "input", &cin, "tokens");
    report_group(f, "output", &cout, "tokens");
    fprintf(f, "#\n# The block of a service: services: [{name: ..., requests: {...}, ...}] "
               "(docs/services.md).\n");
    fprintf(f, "requests:\n  process: %s\n  rate: %.9g/s\n", g.bursty ? "gamma" : "poisson", af.rate);
    if (g.bursty)
        fprintf(f, "  shape: %.6g\n", g.shape);
    if (af.use_h || af.use_d) {
        fprintf(f, "  profile:\n");
        if (af.use_h)
            put_shares_line(f, "    ", "hourly", af.hshare, NULL, NULL, 24);
        if (af.use_d)
            put_shares_line(f, "    ", "weekly", af.dshare, NULL, NULL, 7);
    }
    fprintf(f, "  input: ");
    put_dist(f, &cin, 1);
    fprintf(f, "\n  output: ");
    put_dist(f, &cout, 1);
    fprintf(f, "\n");
    return 0;
}

struct reqfit_args {
    const char *name;
    rstat_t *r;
};

static int write_fit_requests_cb(FILE *f, void *ud, fs_error_t *err)
{
    struct reqfit_args *a = ud;
    return write_fit_requests(f, a->name, a->r, err);
}

static int do_fit_requests(const topts_t *o, fs_error_t *err)
{
    rstat_t r;
    memset(&r, 0, sizeof r);
    int rc = read_requests(o->file, &r, err);
    if (rc)
        goto out;
    if (r.n < 3) {
        rc = fs_error_set(err, FS_EINVAL, "%s: %zu request%s: a fit needs at least 3", o->file, r.n,
                          r.n == 1 ? "" : "s");
        goto out;
    }
    struct reqfit_args ra = {o->file, &r};
    rc = write_out(o->output, write_fit_requests_cb, &ra, err);
    if (!rc)
        fprintf(stderr, "fleetsim trace fit --requests: %zu requests -> %s\n", r.n, o->output);
out:
    rstat_release(&r);
    return rc;
}

/* ---- the command ---------------------------------------------------------------------- */

typedef struct tsub {
    const char *name;
    int (*fn)(const topts_t *, input_t *, fs_error_t *);
    const char *usage;
} tsub_t;

static const tsub_t subs[] = {
    {"info", do_info,
     "usage: fleetsim trace info FILE [--format F] [--lenient] [--keep-origin] [--json]\n"
     "       fleetsim trace info --scenario SCENARIO.yaml [--json]\n"
     "\n"
     "Reads a trace (streaming) and prints: jobs, span, GPU-hours, the GPU-count\n"
     "histogram, run-time percentiles, arrival rates by hour of day and day of\n"
     "week (from the trace origin), recorded wait percentiles when the trace has\n"
     "start times, final states, tenants and skipped rows.  --scenario reads the\n"
     "workload of a scenario instead (its synthetic generator over the horizon, or\n"
     "its trace).\n"
     "\n"
     "  --format F      trace format (see 'fleetsim validate --keys': workload.trace.format)\n"
     "  --lenient       skip bad rows (counted) instead of stopping at the first\n"
     "  --keep-origin   keep the trace's own time origin (default: first submission = 0)\n"
     "  --json          one JSON object on stdout\n"
     "\n"
     "Exit status: 0 success, 1 run-time failure, 2 bad usage or invalid input\n"
     "(a bad row: FILE:LINE: field NAME: what was expected).\n"},
    {"convert", do_convert,
     "usage: fleetsim trace convert FILE -o OUT.csv[.gz] [--format F] [--lenient] [--keep-origin]\n"
     "       fleetsim trace convert --scenario SCENARIO.yaml -o OUT.csv[.gz]\n"
     "\n"
     "Converts a trace (or a scenario's workload) to the native format\n"
     "(docs/traces.md); gzip when OUT ends in .gz.  OUT appears only when complete.\n"
     "\n"
     "Exit status: 0 success, 1 run-time failure, 2 bad usage or invalid input.\n"},
    {"fit", do_fit,
     "usage: fleetsim trace fit FILE -o workload.yaml [--format F] [--lenient] [--keep-origin]\n"
     "                          [--classes 1,2-4,5-8,9-64,65-]\n"
     "       fleetsim trace fit --requests REQUESTS.csv[.gz] -o requests.yaml\n"
     "\n"
     "Fits a synthetic workload to a trace and writes it as a scenario fragment (a\n"
     "workload: block, with the fit report as comments): Poisson arrivals with an\n"
     "hour-of-day x day-of-week profile, the GPU-count mix, run times per size\n"
     "class (lognormal, Weibull, gamma by maximum likelihood; smallest AIC chosen;\n"
     "KS distances reported) and tenants' shares.  Add cluster: and horizon: to run it.\n"
     "\n"
     "  --classes R,...  size classes of the run-time model (default 1,2-4,5-8,9-64,65-)\n"
     "  --requests       FILE is a request trace (Azure LLM inference, BurstGPT): fits a\n"
     "                   service's requests: block instead (Poisson or gamma arrivals with\n"
     "                   the profile, prompt and output token distributions; docs/traces.md)\n"
     "\n"
     "Exit status: 0 success, 1 run-time failure, 2 bad usage or invalid input.\n"},
};
#define N_SUBS (sizeof subs / sizeof subs[0])

/* SIGINT/SIGTERM: stop between batches, remove the temporary (a second
 * signal kills at once) */
static void set_trace_signals(void)
{
    fs_cli_catch_stop(1);     /* a second signal kills at once */
}

static int usage_all(FILE *f)
{
    fputs(fs_cli_find("trace")->usage, f);
    return 0;
}

int fs_cmd_trace(int argc, char **argv)
{
    if (argc < 2 || fs_cli_is_help(argv[1])) {
        usage_all(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const tsub_t *sub = NULL;
    for (size_t i = 0; i < N_SUBS; i++)
        if (strcmp(argv[1], subs[i].name) == 0)
            sub = &subs[i];
    if (!sub)
        return fs_cli_usage_error("trace", "'%s' is not a trace subcommand (info, convert, fit)", argv[1]);
    topts_t o;
    memset(&o, 0, sizeof o);
    o.sub = sub->name;
    fs_cli_getopt_t g;   /* the subcommand's arguments: argv[1] is its name */
    fs_cli_getopt_init(&g, "trace", argc - 1, argv + 1, fs_cli_find("trace")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        const char *a = g.opt ? g.opt : g.arg, *v = g.arg;
        if (id == 'h') {
            fputs(sub->usage, stdout);
            return 0;
        } else if (id == FS_OPT_FORMAT || id == 'o' || id == FS_OPT_CLASSES ||
                   id == FS_OPT_SCENARIO) {
            if (!v)
                return fs_cli_usage_error("trace", "%s needs a value", a);
            if (id == FS_OPT_FORMAT)
                o.format = v;
            else if (id == FS_OPT_CLASSES)
                o.classes = v;
            else if (id == FS_OPT_SCENARIO)
                o.scenario = v;
            else
                o.output = v;
        } else if (id == FS_OPT_LENIENT) {
            o.lenient = 1;
        } else if (id == FS_OPT_KEEP_ORIGIN) {
            o.keep_origin = 1;
        } else if (id == FS_OPT_JSON && sub->fn == do_info) {
            o.json = 1;
        } else if (id == FS_OPT_REQUESTS && sub->fn == do_fit) {
            o.requests = 1;
        } else if (id == FS_CLI_BAD) {
            return g.status;
        } else if (id != FS_CLI_OPERAND) {
            return fs_cli_usage_error("trace", "unknown option '%s' for trace %s", a, sub->name);
        } else if (!o.file) {
            o.file = a;
        } else {
            return fs_cli_usage_error("trace", "only one trace file may be given");
        }
    }
    if (!o.file == !o.scenario)
        return fs_cli_usage_error("trace", "trace %s needs one trace FILE or --scenario FILE", sub->name);
    if (sub->fn != do_info && !o.output)
        return fs_cli_usage_error("trace", "trace %s needs -o OUT", sub->name);
    if (o.classes && sub->fn != do_fit)
        return fs_cli_usage_error("trace", "--classes is for trace fit");
    if (o.requests && (o.scenario || o.format || o.lenient || o.keep_origin || o.classes))
        return fs_cli_usage_error("trace", "trace fit --requests takes a request trace FILE and -o "
                                  "only (not --scenario, --format, --lenient, --keep-origin or --classes)");
    fs_error_t err;
    fs_error_clear(&err);
    if (o.requests) {
        const char *inputs[1] = {o.file};
        int orc = fs_cli_check_output("trace", o.output, inputs, 1);
        if (orc)
            return orc;
        set_trace_signals();
        int rc = do_fit_requests(&o, &err);
        if (rc) {
            fprintf(stderr, "%s\n", err.msg);
            return fs_error_exit_status(rc);
        }
        return 0;
    }
    if (o.classes) { /* checked before anything is read */
        sclass_t cls[MAX_CLASSES];
        size_t n_cls;
        if (parse_classes(o.classes, cls, &n_cls, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 2;
        }
    }
    input_t in;
    int rc = open_input(&o, &in, &err);
    if (!rc && o.output) {   /* the output is none of the inputs */
        const char *inputs[FS_SCENARIO_MAX_INPUTS];
        size_t n_inputs = 0;
        inputs[n_inputs++] = o.file ? o.file : o.scenario;
        if (in.have_cfg)
            fs_scenario_inputs(&in.cfg, inputs, &n_inputs, FS_SCENARIO_MAX_INPUTS);
        int orc = fs_cli_check_output("trace", o.output, inputs, n_inputs);
        if (orc) {
            close_input(&in);
            return orc;
        }
    }
    if (!rc && o.output)
        set_trace_signals();
    if (!rc)
        rc = sub->fn(&o, &in, &err);
    close_input(&in);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        return fs_error_exit_status(rc);
    }
    return 0;
}
