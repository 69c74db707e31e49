/*
 * fleetsim trace info: a trace's jobs, sizes, run times, arrival rates,
 * recorded waits and utilization over time (cmd_trace.c parses the command
 * line).
 */
#include "cmd_trace_int.h"

/* Past this many distinct GPU counts the text histogram buckets them by
 * powers of two (1, 2, 3-4, 5-8, ...). */
#define MAX_EXACT_SIZES 12

/* The GPU-count histogram: exact sizes, or power-of-two buckets. */
static void print_sizes(const tstat_t *s)
{
    printf("GPUs         ");
    if (s->n_sizes <= MAX_EXACT_SIZES) {
        for (size_t i = 0; i < s->n_sizes; i++)
            printf("%s%u: %llu (%.1f%%)", i ? ", " : "", s->sizes[i],
                   (unsigned long long)s->size_n[i], 100.0 * (double)s->size_n[i] / (double)s->jobs);
        printf("\n");
        return;
    }
    printf("%zu distinct counts, by powers of two:\n", s->n_sizes);
    size_t i = 0;
    while (i < s->n_sizes) {
        uint64_t hi = 1;
        while (hi < s->sizes[i])
            hi *= 2;
        uint64_t lo = hi / 2 + 1, n = 0;
        size_t distinct = 0;
        for (; i < s->n_sizes && s->sizes[i] <= hi; i++, distinct++)
            n += s->size_n[i];
        char range[48];
        if (lo >= hi)
            snprintf(range, sizeof range, "%llu", (unsigned long long)hi);
        else
            snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)lo, (unsigned long long)hi);
        printf("  %-24s %10llu jobs (%5.1f%%) %4zu sizes\n", range, (unsigned long long)n,
               100.0 * (double)n / (double)s->jobs, distinct);
    }
}

/* Recorded waits and GPUs busy per day (per week past 60 days). */
static void print_recorded(const tstat_t *s)
{
    if (!s->n_days)
        return;
    size_t step = s->n_days > 60 ? 7 : 1;
    printf("recorded over time (per %s from day %.0f of the origin): mean wait of the jobs "
           "submitted%s\n", step == 7 ? "week" : "day", s->day0 / 86400,
           s->have_busy ? ", mean GPUs busy" : "");
    for (size_t d = 0; d < s->n_days; d += step) {
        double w = 0, busy = 0;
        uint64_t n = 0;
        size_t k = 0;
        for (; k < step && d + k < s->n_days; k++) {
            w += s->day_wait[d + k];
            n += s->day_waits[d + k];
            busy += s->day_busy[d + k];
        }
        char a[48];
        printf("  %s %4zu  %7llu jobs  wait %-10s", step == 7 ? "week" : "day ", d / step,
               (unsigned long long)n, n ? trc_human_s(w / (double)n, a, sizeof a) : "-");
        if (s->have_busy)
            printf("  busy %10.1f GPUs", busy / ((double)k * 86400));
        printf("\n");
    }
}

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
    printf("span         %.0f s .. %.0f s  (%s)\n", s->first, s->last, trc_human_s(span, a, sizeof a));
    printf("GPU-hours    %.1f\n", s->gpu_hours);
    if (span > 0)
        printf("arrivals     %.4g jobs/h on average\n", (double)(s->jobs - 1) / (span / 3600));
    print_sizes(s);
    if (s->fractional)
        printf("             %llu jobs ask for a fraction of one GPU\n", (unsigned long long)s->fractional);
    printf("duration     mean %s", trc_human_s(s->dur_sum / (double)s->jobs, a, sizeof a));
    for (size_t i = 0; i < N_DUR_P; i++)
        printf("  %s %s", k_dur_pn[i], trc_human_s(trc_quantile_f(s->dur, s->n_dur, k_dur_p[i]), b, sizeof b));
    printf("  max %s\n", trc_human_s(s->dur[s->n_dur - 1], b, sizeof b));
    if (s->n_wait)
        printf("wait         %zu recorded: p50 %s  p90 %s  p99 %s\n", s->n_wait,
               trc_human_s(trc_quantile_f(s->wait, s->n_wait, 0.5), a, sizeof a),
               trc_human_s(trc_quantile_f(s->wait, s->n_wait, 0.9), b, sizeof b),
               trc_human_s(trc_quantile_f(s->wait, s->n_wait, 0.99), c, sizeof c));
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
    trc_rate_profile(s, hourly, daily);
    printf("jobs per hour by hour of day (from the trace origin):\n ");
    for (int h = 0; h < 24; h++)
        printf(" %2d:%.4g", h, hourly[h]);
    printf("\njobs per day by day of week (day 0 = the origin's day):\n ");
    for (int d = 0; d < 7; d++)
        printf(" %d:%.4g", d, daily[d]);
    printf("\n");
    print_recorded(s);
}

static void print_info_json(const input_t *in, tstat_t *s)
{
    FILE *f = stdout;
    fprintf(f, "{\"trace\": ");
    trc_put_json_str(f, in->name);
    fprintf(f, ", \"format\": ");
    trc_put_json_str(f, in->format);
    fprintf(f, ", \"jobs\": %llu, \"skipped\": %llu, \"skip_reasons\": {", (unsigned long long)s->jobs,
            (unsigned long long)fs_source_skipped(in->src));
    uint64_t cnt;
    const char *why;
    for (size_t i = 0; (why = fs_source_skip_reason(in->src, i, &cnt)) != NULL; i++) {
        fprintf(f, "%s", i ? ", " : "");
        trc_put_json_str(f, why);
        fprintf(f, ": %llu", (unsigned long long)cnt);
    }
    fprintf(f, "}, \"first_submit_s\": ");
    trc_put_json_num(f, s->jobs ? s->first : NAN);
    fprintf(f, ", \"last_submit_s\": ");
    trc_put_json_num(f, s->jobs ? s->last : NAN);
    fprintf(f, ", \"span_s\": ");
    trc_put_json_num(f, s->jobs ? s->last - s->first : NAN);
    fprintf(f, ", \"gpu_hours\": ");
    trc_put_json_num(f, s->gpu_hours);
    fprintf(f, ", \"fractional_jobs\": %llu, \"gpus\": {", (unsigned long long)s->fractional);
    for (size_t i = 0; i < s->n_sizes; i++)
        fprintf(f, "%s\"%u\": %llu", i ? ", " : "", s->sizes[i], (unsigned long long)s->size_n[i]);
    fprintf(f, "}, \"duration_s\": {\"mean\": ");
    trc_put_json_num(f, s->jobs ? s->dur_sum / (double)s->jobs : NAN);
    for (size_t i = 0; i < N_DUR_P; i++) {
        fprintf(f, ", \"%s\": ", k_dur_pn[i]);
        trc_put_json_num(f, trc_quantile_f(s->dur, s->n_dur, k_dur_p[i]));
    }
    fprintf(f, ", \"max\": ");
    trc_put_json_num(f, s->n_dur ? s->dur[s->n_dur - 1] : NAN);
    fprintf(f, "}, \"wait_s\": {\"recorded\": %zu, \"p50\": ", s->n_wait);
    trc_put_json_num(f, trc_quantile_f(s->wait, s->n_wait, 0.5));
    fprintf(f, ", \"p90\": ");
    trc_put_json_num(f, trc_quantile_f(s->wait, s->n_wait, 0.9));
    fprintf(f, ", \"p99\": ");
    trc_put_json_num(f, trc_quantile_f(s->wait, s->n_wait, 0.99));
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
        trc_put_json_str(f, nm ? nm : "?");
        fprintf(f, ": {\"jobs\": %llu, \"gpu_hours\": ", (unsigned long long)s->t_jobs[t]);
        trc_put_json_num(f, s->t_gpuh[t]);
        fprintf(f, "}");
    }
    fprintf(f, "}, \"jobs_without_tenant\": %llu", (unsigned long long)s->no_tenant);
    double hourly[24], daily[7];
    trc_rate_profile(s, hourly, daily);
    fprintf(f, ", \"jobs_per_hour_by_hour_of_day\": [");
    for (int h = 0; h < 24; h++) {
        fprintf(f, "%s", h ? ", " : "");
        trc_put_json_num(f, hourly[h]);
    }
    fprintf(f, "], \"jobs_per_day_by_day_of_week\": [");
    for (int d = 0; d < 7; d++) {
        fprintf(f, "%s", d ? ", " : "");
        trc_put_json_num(f, daily[d]);
    }
    fprintf(f, "], \"arrivals_by_hour_of_day\": [");
    for (int h = 0; h < 24; h++) {
        uint64_t c = 0;
        for (int d = 0; d < 7; d++)
            c += s->week[d * 24 + h];
        fprintf(f, "%s%llu", h ? ", " : "", (unsigned long long)c);
    }
    fprintf(f, "], \"recorded_by_day\": [");
    for (size_t d = 0; d < s->n_days; d++) {
        fprintf(f, "%s{\"day\": %.0f, \"jobs_waited\": %llu, \"wait_mean_s\": ", d ? ", " : "",
                s->day0 / 86400 + (double)d, (unsigned long long)s->day_waits[d]);
        trc_put_json_num(f, s->day_waits[d] ? s->day_wait[d] / (double)s->day_waits[d] : NAN);
        fprintf(f, ", \"gpus_busy_mean\": ");
        trc_put_json_num(f, s->have_busy ? s->day_busy[d] / 86400 : NAN);
        fprintf(f, "}");
    }
    fprintf(f, "]}\n");
}

int trc_do_info(const topts_t *o, input_t *in, fs_error_t *err)
{
    tstat_t s;
    memset(&s, 0, sizeof s);
    int rc = trc_read_all(in, &s, err);
    if (!rc) {
        if (s.n_dur)
            qsort(s.dur, s.n_dur, sizeof *s.dur, trc_cmp_float);
        if (s.n_wait)
            qsort(s.wait, s.n_wait, sizeof *s.wait, trc_cmp_float);
        if (o->json)
            print_info_json(in, &s);
        else
            print_info_text(in, &s);
    }
    trc_tstat_release(&s);
    return rc;
}
