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
#include "cmd_trace_int.h"

/* ---- streaming statistics ----------------------------------------------- */


void trc_tstat_release(tstat_t *s)
{
    fs_free(s->sizes);
    fs_free(s->size_n);
    fs_free(s->dur);
    fs_free(s->cls);
    fs_free(s->wait);
    fs_free(s->t_jobs);
    fs_free(s->t_gpuh);
    fs_free(s->day_wait);
    fs_free(s->day_waits);
    fs_free(s->day_busy);
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

/* Makes the per-day tables cover day d (from day0), zero-filled.  A day
 * past 100 years of the origin is not tracked (1). */
static int days_cover(tstat_t *s, size_t d)
{
    if (d >= 36600)
        return 1;
    if (d < s->n_days)
        return 0;
    if (fs_grow((void **)&s->day_wait, &s->cap_dw, d + 1, sizeof *s->day_wait) ||
        fs_grow((void **)&s->day_waits, &s->cap_dn, d + 1, sizeof *s->day_waits) ||
        fs_grow((void **)&s->day_busy, &s->cap_db, d + 1, sizeof *s->day_busy))
        return FS_ENOMEM;
    for (size_t i = s->n_days; i <= d; i++) {
        s->day_wait[i] = 0;
        s->day_waits[i] = 0;
        s->day_busy[i] = 0;
    }
    s->n_days = d + 1;
    return 0;
}

/* The job's recorded wait (by its submission day) and run (GPU-seconds
 * per day it overlaps). */
static int add_recorded(tstat_t *s, const fs_job_t *j)
{
    double sub = fs_time_to_s(j->submit) - s->day0;
    if (j->rec_start < 0 || sub < 0)
        return 0;
    int rc = days_cover(s, (size_t)(sub / 86400));
    if (rc)
        return rc == FS_ENOMEM ? rc : 0;
    s->day_wait[(size_t)(sub / 86400)] += fs_time_to_s(j->rec_start - j->submit);
    s->day_waits[(size_t)(sub / 86400)]++;
    if (j->rec_end < 0)
        return 0;
    s->have_busy = 1;
    double a = fs_time_to_s(j->rec_start) - s->day0, b = fs_time_to_s(j->rec_end) - s->day0;
    double g = (double)fs_job_milli(j) / 1000.0;
    for (double d = floor(a / 86400); d * 86400 < b; d++) {
        if ((rc = days_cover(s, (size_t)d)))
            return rc == FS_ENOMEM ? rc : 0;
        s->day_busy[(size_t)d] += g * (fmin(b, (d + 1) * 86400) - fmax(a, d * 86400));
    }
    return 0;
}

static int trc_tstat_add(tstat_t *s, const fs_job_t *j)
{
    double submit = fs_time_to_s(j->submit), dur = fs_time_to_s(j->duration);
    if (s->jobs == 0) {
        s->first = submit;
        s->day0 = floor(submit / 86400) * 86400;
    }
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
        if (add_recorded(s, j))
            return FS_ENOMEM;
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

/* Seconds of [a, b) falling in each hour of the week (the trc_exposure). */
void trc_exposure(double a, double b, double out[HOURS_PER_WEEK])
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
 * trc_exposure-weighted; NaN where the window never covers that hour/day. */
void trc_rate_profile(const tstat_t *s, double hourly[24], double daily[7])
{
    double ex[HOURS_PER_WEEK];
    trc_exposure(s->first, s->last, ex);
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

int trc_cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

double trc_quantile_f(const float *sorted, size_t n, double p)
{
    return n ? gsl_stats_float_quantile_from_sorted_data(sorted, 1, n, p) : NAN;
}

/* ---- input ----------------------------------------------------------------- */


static const char *trc_default_format(void)
{
    return fs_trace_format_find("auto") ? "auto" : "native";
}

static int trc_open_input(const topts_t *o, input_t *in, fs_error_t *err)
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
    in->format = o->format ? o->format : trc_default_format();
    in->name = o->file;
    return fs_trace_open(in->format, o->file, &topt, &in->src, err);
}

static void trc_close_input(input_t *in)
{
    if (in->src)
        fs_source_destroy(in->src);
    if (in->have_cfg)
        fs_config_release(&in->cfg);
    memset(in, 0, sizeof *in);
}

/* Reads the whole stream into s. */
int trc_read_all(input_t *in, tstat_t *s, fs_error_t *err)
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
            if (trc_tstat_add(s, &buf[i])) {
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
const char *trc_human_s(double s, char *buf, size_t n)
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
void trc_put_yaml_str(FILE *f, const char *s)
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
void trc_put_json_str(FILE *f, const char *s)
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

void trc_put_json_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.10g", x);
    else
        fputs("null", f);
}

/* Rounds shares to 6 decimals keeping the sum at 1 (the residual goes to
 * the largest), so that the scenario language's "sum to 1" holds. */
void trc_round_shares(double *p, size_t n)
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

int trc_interrupted_error(fs_error_t *err)
{
    return fs_error_set(err, FS_EINTR, "interrupted by %s; nothing written",
                        fs_cli_stop == SIGINT ? "SIGINT" : "SIGTERM");
}

/* Writes OUTPUT through fn into a temporary beside it, renamed into place
 * when complete (sim/fs_out.h: the target's rules and the temporary's
 * name); on any failure nothing is left. */
int trc_write_out(const char *output, int (*fn)(FILE *f, void *ud, fs_error_t *err), void *ud,
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

/* ---- the command ---------------------------------------------------------------------- */

typedef struct tsub {
    const char *name;
    int (*fn)(const topts_t *, input_t *, fs_error_t *);
    const char *usage;
} tsub_t;

static const tsub_t subs[] = {
    {"info", trc_do_info,
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
    {"convert", trc_do_convert,
     "usage: fleetsim trace convert FILE -o OUT.csv[.gz] [--format F] [--lenient] [--keep-origin]\n"
     "       fleetsim trace convert --scenario SCENARIO.yaml -o OUT.csv[.gz]\n"
     "\n"
     "Converts a trace (or a scenario's workload) to the native format\n"
     "(docs/traces.md); gzip when OUT ends in .gz.  OUT appears only when complete.\n"
     "\n"
     "Exit status: 0 success, 1 run-time failure, 2 bad usage or invalid input.\n"},
    {"fit", trc_do_fit,
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
    {"outages", trc_do_outages,
     "usage: fleetsim trace outages FILE -o OUT.csv --capacity GPUS [--threshold X]\n"
     "                              [--gpus-per-node G] [--format F] [--lenient]\n"
     "\n"
     "Infers capacity outages from a log's recorded utilization and writes them as\n"
     "an outage file for cluster.outages (docs/traces.md, Outage files).  The rule:\n"
     "an hour is out when fewer than X x GPUS GPUs were busy (recorded runs) while\n"
     "a job waited (recorded wait over a minute); consecutive out hours make one\n"
     "outage, whose nodes down are the capacity less the most GPUs busy in it.\n"
     "\n"
     "  --capacity GPUS    the cluster's GPUs (required)\n"
     "  --threshold X      busy share under which an hour is out (default 0.1)\n"
     "  --gpus-per-node G  GPUs per node of the outage file's nodes (default 1)\n"
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
        return fs_cli_usage_error("trace", "'%s' is not a trace subcommand (info, convert, fit, outages)", argv[1]);
    topts_t o;
    memset(&o, 0, sizeof o);
    o.sub = sub->name;
    o.threshold = 0.1;
    o.gpus_per_node = 1;
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
        } else if ((id == FS_OPT_THRESHOLD || id == FS_OPT_CAPACITY || id == FS_OPT_GPN) &&
                   sub->fn == trc_do_outages) {
            char *end = NULL;
            double x = v ? strtod(v, &end) : NAN;
            if (!v || *end || !isfinite(x) || x <= 0 || (id == FS_OPT_THRESHOLD && x > 1) ||
                (id == FS_OPT_GPN && (x != floor(x) || x > 1e6)) ||
                (id == FS_OPT_CAPACITY && x > 1e12))
                return fs_cli_usage_error("trace", "%s needs %s", a,
                                          id == FS_OPT_THRESHOLD ? "a share in (0, 1], e.g. 0.1"
                                          : id == FS_OPT_GPN     ? "a whole number >= 1"
                                                                 : "a number of GPUs > 0");
            if (id == FS_OPT_THRESHOLD)
                o.threshold = x;
            else if (id == FS_OPT_CAPACITY)
                o.capacity = x;
            else
                o.gpus_per_node = (unsigned)x;
        } else if (id == FS_OPT_LENIENT) {
            o.lenient = 1;
        } else if (id == FS_OPT_KEEP_ORIGIN) {
            o.keep_origin = 1;
        } else if (id == FS_OPT_JSON && sub->fn == trc_do_info) {
            o.json = 1;
        } else if (id == FS_OPT_REQUESTS && sub->fn == trc_do_fit) {
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
    if (sub->fn != trc_do_info && !o.output)
        return fs_cli_usage_error("trace", "trace %s needs -o OUT", sub->name);
    if (sub->fn == trc_do_outages && !(o.capacity > 0))
        return fs_cli_usage_error("trace", "trace outages needs --capacity GPUS (the cluster's)");
    if (o.classes && sub->fn != trc_do_fit)
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
        int rc = trc_do_fit_requests(&o, &err);
        if (rc) {
            fprintf(stderr, "%s\n", err.msg);
            return fs_error_exit_status(rc);
        }
        return 0;
    }
    if (o.classes) { /* checked before anything is read */
        sclass_t cls[MAX_CLASSES];
        size_t n_cls;
        if (trc_parse_classes(o.classes, cls, &n_cls, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 2;
        }
    }
    input_t in;
    int rc = trc_open_input(&o, &in, &err);
    if (!rc && o.output) {   /* the output is none of the inputs */
        const char *inputs[FS_SCENARIO_MAX_INPUTS];
        size_t n_inputs = 0;
        inputs[n_inputs++] = o.file ? o.file : o.scenario;
        if (in.have_cfg)
            fs_scenario_inputs(&in.cfg, inputs, &n_inputs, FS_SCENARIO_MAX_INPUTS);
        int orc = fs_cli_check_output("trace", o.output, inputs, n_inputs);
        if (orc) {
            trc_close_input(&in);
            return orc;
        }
    }
    if (!rc && o.output)
        set_trace_signals();
    if (!rc)
        rc = sub->fn(&o, &in, &err);
    trc_close_input(&in);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        return fs_error_exit_status(rc);
    }
    return 0;
}
