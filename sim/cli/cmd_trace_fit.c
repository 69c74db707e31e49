/*
 * fleetsim trace fit: a synthetic workload (or a service's requests) fitted to a trace (cmd_trace.c parses the command line).
 */
#include "cmd_trace_int.h"

/* ---- fit ------------------------------------------------------------------------------- */

/* "1,2-4,5-8,9-64,65-": ranges of GPU counts ("65-": 65 and up). */
int trc_parse_classes(const char *text, sclass_t *out, size_t *n, fs_error_t *err)
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
    trc_round_shares(p, n);
    fprintf(f, "%s%s: {", indent, key);
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        if (p[i] <= 0)
            continue;
        fprintf(f, "%s", first ? "" : ", ");
        first = 0;
        if (names)
            trc_put_yaml_str(f, names[i]);
        else
            fprintf(f, "%u", ids ? ids[i] : (unsigned)i);
        fprintf(f, ": %s", fs_units_format_number(p[i], a, sizeof a));
    }
    fprintf(f, "}\n");
}

/* The arrival model of a trace (jobs or requests): a separable hour-of-day
 * x day-of-week profile, trc_exposure-weighted, fitted when the trace spans a
 * day (a week), and the base rate that makes the expected count over the
 * window equal to the count (n - 1 gaps over the profile-weighted
 * trc_exposure).  rate is NaN when the window is empty. */
typedef struct arrfit {
    double span, rate;          /* s, per s */
    double hshare[24], dshare[7];
    int use_h, use_d;
} arrfit_t;

static void fit_arrivals(const tstat_t *s, arrfit_t *af)
{
    double span = af->span = s->last - s->first;
    double hourly[24], daily[7];
    trc_rate_profile(s, hourly, daily);
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
        trc_round_shares(hshare, 24);
    if (use_d)
        trc_round_shares(dshare, 7);
    /* base rate: the expected count over the window equals the count */
    double ex[HOURS_PER_WEEK], expect = 0;
    trc_exposure(s->first, s->last, ex);
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
               "trace origin);\n#   base rate = (jobs - 1) / the profile-weighted trc_exposure of the "
               "window;\n");
    fprintf(f, "#   hourly profile: %s; weekly profile: %s.\n",
            use_h ? "fitted (trc_exposure-weighted rates per hour of day)" : "flat (the trace spans < 1 day)",
            use_d ? "fitted (trc_exposure-weighted rates per day of week)" : "flat (the trace spans < 7 days)");
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

int trc_do_fit(const topts_t *o, input_t *in, fs_error_t *err)
{
    sclass_t cls[MAX_CLASSES];
    size_t n_cls = 0;
    int rc = trc_parse_classes(o->classes ? o->classes : "1,2-4,5-8,9-64,65-", cls, &n_cls, err);
    if (rc)
        return rc;
    tstat_t s;
    memset(&s, 0, sizeof s);
    s.classes = cls;
    s.n_cls = n_cls;
    if ((rc = trc_read_all(in, &s, err)) != 0 || (fs_cli_stop && (rc = trc_interrupted_error(err))))
        goto out;
    if (s.jobs < 2) {
        rc = fs_error_set(err, FS_EINVAL, "%s: %llu job%s: a fit needs at least 2", in->name,
                          (unsigned long long)s.jobs, s.jobs == 1 ? "" : "s");
        goto out;
    }
    struct fit_args fa = {o, in, &s, cls, n_cls};
    rc = trc_write_out(o->output, write_fit_cb, &fa, err);
    if (!rc)
        fprintf(stderr, "fleetsim trace fit: %llu jobs -> %s\n", (unsigned long long)s.jobs, o->output);
out:
    trc_tstat_release(&s);
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
            rc = trc_interrupted_error(err);
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
            af.use_h ? "fitted (trc_exposure-weighted rates per hour of day)" : "flat (the trace spans < 1 day)",
            af.use_d ? "fitted (trc_exposure-weighted rates per day of week)" : "flat (the trace spans < 7 days)");
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

int trc_do_fit_requests(const topts_t *o, fs_error_t *err)
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
    rc = trc_write_out(o->output, write_fit_requests_cb, &ra, err);
    if (!rc)
        fprintf(stderr, "fleetsim trace fit --requests: %zu requests -> %s\n", r.n, o->output);
out:
    rstat_release(&r);
    return rc;
}
