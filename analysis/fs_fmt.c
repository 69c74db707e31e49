#include "fs_fmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static int ends(const char *s, const char *p)
{
    size_t a = strlen(s), b = strlen(p);
    return a >= b && strcmp(s + a - b, p) == 0;
}

fs_fmt_unit_t fs_fmt_metric_unit(const char *m)
{
    if (!m)
        return FS_FMT_NUMBER;
    if (strcmp(m, "wait_prob") == 0 || starts(m, "utilization") || strcmp(m, "goodput") == 0 ||
        strcmp(m, "availability") == 0 || strcmp(m, "ettr_mean") == 0 || strcmp(m, "little_rel_err") == 0 ||
        ends(m, "_share"))
        return FS_FMT_SHARE;
    if (starts(m, "cost_"))
        return FS_FMT_MONEY;
    if (ends(m, "_rate"))
        return FS_FMT_RATE;
    if (starts(m, "wait_") || starts(m, "jct_") || starts(m, "queued_") ||
        strcmp(m, "makespan") == 0 || strcmp(m, "end_time") == 0 || ends(m, "_s") ||
        starts(m, "gpu_s_"))   /* GPU-seconds shown as GPU-time (s, min, h, d) */
        return FS_FMT_DURATION;
    return FS_FMT_NUMBER;
}

void fs_fmt_duration(char *buf, size_t n, double s)
{
    const char *sign = s < 0 ? "-" : "";
    double a = fabs(s);
    if (!isfinite(s))
        snprintf(buf, n, "-");
    else if (a < 120)
        snprintf(buf, n, "%s%.1f s", sign, a);
    else if (a < 7200)
        snprintf(buf, n, "%s%.1f min", sign, a / 60);
    else if (a < 172800)
        snprintf(buf, n, "%s%.2f h", sign, a / 3600);
    else
        snprintf(buf, n, "%s%.2f d", sign, a / 86400);
}

void fs_fmt_money(char *buf, size_t n, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, n, "-");
        return;
    }
    const char *sign = v < 0 ? "-" : "";
    double a = fabs(v);
    if (a < 100) {
        snprintf(buf, n, "%s$%.2f", sign, a);
        return;
    }
    if (a >= 1e15) {
        snprintf(buf, n, "%s$%.3g", sign, a);
        return;
    }
    /* whole dollars with thousands separators */
    char digits[32], grouped[48];
    snprintf(digits, sizeof digits, "%.0f", a);
    size_t len = strlen(digits), k = 0;
    for (size_t i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0)
            grouped[k++] = ',';
        grouped[k++] = digits[i];
    }
    grouped[k] = '\0';
    snprintf(buf, n, "%s$%s", sign, grouped);
}

static void fmt_number(char *buf, size_t n, double v)
{
    if (!isfinite(v))
        snprintf(buf, n, isnan(v) ? "-" : v > 0 ? "inf" : "-inf");
    else if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "%.6g", v);
}

void fs_fmt_value(char *buf, size_t n, fs_fmt_unit_t u, double v)
{
    if (isnan(v)) {
        snprintf(buf, n, "-");
        return;
    }
    switch (u) {
    case FS_FMT_DURATION:
        fs_fmt_duration(buf, n, v);
        break;
    case FS_FMT_MONEY:
        fs_fmt_money(buf, n, v);
        break;
    case FS_FMT_SHARE:
        snprintf(buf, n, "%.1f%%", 100 * v);
        break;
    case FS_FMT_RATE:
        snprintf(buf, n, "%.4g/h", 3600 * v);
        break;
    default:
        fmt_number(buf, n, v);
        break;
    }
}

void fs_fmt_diff(char *buf, size_t n, fs_fmt_unit_t u, double d)
{
    if (isnan(d)) {
        snprintf(buf, n, "-");
        return;
    }
    if (u == FS_FMT_SHARE) {
        snprintf(buf, n, "%+.1f pts", 100 * d);
        return;
    }
    char v[48];
    fs_fmt_value(v, sizeof v, u, d);
    snprintf(buf, n, "%s%s", d >= 0 ? "+" : "", v);
}

int fs_fmt_is_constant(double mean, double half)
{
    if (half == 0)
        return 1;
    return isfinite(half) && isfinite(mean) && fabs(half) <= 1e-9 * fabs(mean);
}

void fs_fmt_interval(char *buf, size_t n, fs_fmt_unit_t u, double mean, double half)
{
    char m[48], h[48];
    fs_fmt_value(m, sizeof m, u, mean);
    if (isnan(half) || fs_fmt_is_constant(mean, half)) {
        snprintf(buf, n, "%s", m);
        return;
    }
    if (u == FS_FMT_SHARE)
        snprintf(h, sizeof h, "%.1f pts", 100 * half);
    else
        fs_fmt_value(h, sizeof h, u, half);
    snprintf(buf, n, "%s +- %s", m, h);
}
