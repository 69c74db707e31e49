#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strcasecmp */
#endif
#include "fs_units.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* 128-bit integers hold the exact product mantissa * unit (< 10^35). */
__extension__ typedef unsigned __int128 fs_u128;

/* Significant digits kept exactly; more (non-zero) digits are refused. */
#define MAX_SIG_DIGITS 30

/* A duration unit: microseconds = mult * 10^pow10. */
typedef struct unit {
    const char *name;
    unsigned mult;
    int pow10;
} unit_t;

static const unit_t units[] = {
    {"us", 1, 0},        {"ms", 1, 3},       {"s", 1, 6},        {"m", 6, 7},
    {"min", 6, 7},       {"h", 36, 8},       {"d", 864, 8},      {"w", 6048, 8},
    {"y", 31536, 9},
};
#define N_UNITS (sizeof units / sizeof units[0])
#define UNIT_LIST "us, ms, s, m, h, d, w, y"

static const unit_t *find_unit(const char *p, size_t n)
{
    for (size_t i = 0; i < N_UNITS; i++)
        if (strlen(units[i].name) == n && memcmp(units[i].name, p, n) == 0)
            return &units[i];
    return NULL;
}

static int64_t unit_us(const unit_t *u)
{
    int64_t v = u->mult;
    for (int i = 0; i < u->pow10; i++)
        v *= 10;
    return v;
}

/* Trims blanks: [*b, *e) is the text without leading/trailing space. */
static void trim(const char *s, const char **b, const char **e)
{
    const char *p = s, *q = s + strlen(s);
    while (p < q && isspace((unsigned char)*p))
        p++;
    while (q > p && isspace((unsigned char)q[-1]))
        q--;
    *b = p;
    *e = q;
}

/* Does [p, e) start with NaN or an infinity as strtod or YAML write them? */
static int nonfinite_word(const char *p, const char *e)
{
    if (p < e && (*p == '+' || *p == '-'))
        p++;
    if (p < e && *p == '.')
        p++;
    size_t n = (size_t)(e - p);
    return (n >= 3 && (strncasecmp(p, "nan", 3) == 0 || strncasecmp(p, "inf", 3) == 0));
}

/* Scans a decimal number [+-]?(d+(.d*)?|.d+)([eE][+-]?d+)? at p (not past
 * e); returns the end, or p if there is no number. */
static const char *scan_number(const char *p, const char *e)
{
    const char *q = p;
    if (q < e && (*q == '+' || *q == '-'))
        q++;
    size_t nd = 0;
    while (q < e && isdigit((unsigned char)*q))
        q++, nd++;
    if (q < e && *q == '.') {
        q++;
        while (q < e && isdigit((unsigned char)*q))
            q++, nd++;
    }
    if (nd == 0)
        return p;
    if (q < e && (*q == 'e' || *q == 'E')) {
        const char *r = q + 1;
        if (r < e && (*r == '+' || *r == '-'))
            r++;
        if (r < e && isdigit((unsigned char)*r)) {
            while (r < e && isdigit((unsigned char)*r))
                r++;
            q = r;
        }
    }
    return q;
}

/* Splits a scanned, unsigned decimal [p, e) into mant * 10^exp exactly.
 * Returns 0, or -1 when it has more than MAX_SIG_DIGITS significant digits. */
static int decimal_split(const char *p, const char *e, fs_u128 *mant, long *exp10)
{
    fs_u128 m = 0;
    long x = 0;
    int nsig = 0, frac = 0;
    if (p < e && *p == '+')
        p++;
    for (; p < e && *p != 'e' && *p != 'E'; p++) {
        if (*p == '.') {
            frac = 1;
            continue;
        }
        unsigned d = (unsigned)(*p - '0');
        if (m == 0 && d == 0) {
            if (frac)
                x--;
        } else if (nsig < MAX_SIG_DIGITS) {
            m = m * 10 + d;
            nsig++;
            if (frac)
                x--;
        } else if (d != 0) {
            return -1;
        } else if (!frac) {
            x++; /* a zero beyond the kept digits, before the point: x10 */
        }
    }
    if (p < e) { /* exponent */
        p++;
        int neg = 0;
        if (*p == '+' || *p == '-')
            neg = *p++ == '-';
        long ev = 0;
        for (; p < e; p++)
            if (ev < 100000)
                ev = ev * 10 + (*p - '0');
        x += neg ? -ev : ev;
    }
    *mant = m;
    *exp10 = x;
    return 0;
}

static fs_u128 pow10_u128(int k)
{
    fs_u128 v = 1;
    while (k-- > 0)
        v *= 10;
    return v;
}

/* Exact mant * 10^exp10 * unit, rounded half up.  Returns 0 and *us, or -1
 * when the result exceeds FS_TIME_MAX_INPUT. */
static int exact_us(fs_u128 mant, long exp10, const unit_t *u, int64_t *us)
{
    const fs_u128 max = (fs_u128)FS_TIME_MAX_INPUT;
    if (mant == 0) {
        *us = 0;
        return 0;
    }
    fs_u128 x = mant * u->mult; /* < 10^30 * 31536 < 10^35 */
    long q = exp10 + u->pow10;
    if (q >= 0) {
        if (q > 17)
            return -1;
        fs_u128 f = pow10_u128((int)q);
        if (x > max / f)
            return -1;
        x *= f;
    } else {
        long p = -q;
        if (p >= 36) {
            *us = 0; /* x < 10^35: x / 10^p < 0.5 */
            return 0;
        }
        fs_u128 d = pow10_u128((int)p);
        fs_u128 r = x % d;
        x /= d;
        if (2 * r >= d)
            x++;
    }
    if (x > max)
        return -1;
    *us = (int64_t)x;
    return 0;
}

int fs_units_parse_duration(const char *s, fs_time_t *out, fs_error_t *err)
{
    const char *b, *e;
    trim(s, &b, &e);
    int len = (int)(e - b);
    if (b == e)
        return fs_error_set(err, FS_EINVAL, "empty value (" FS_UNITS_DURATION_EXPECT ")");
    if (nonfinite_word(b, e))
        return fs_error_set(err, FS_EINVAL, "'%.*s' is not a finite duration (" FS_UNITS_DURATION_EXPECT ")",
                            len, b);
    const char *q = scan_number(b, e);
    if (q == b)
        return fs_error_set(err, FS_EINVAL, "'%.*s' is not a duration (" FS_UNITS_DURATION_EXPECT ")",
                            len, b);
    if (*b == '-')
        return fs_error_set(err, FS_EINVAL, "'%.*s': a duration cannot be negative (" FS_UNITS_DURATION_EXPECT ")",
                            len, b);
    fs_u128 mant;
    long x;
    if (decimal_split(b, q, &mant, &x) != 0)
        return fs_error_set(err, FS_EINVAL, "'%.*s' has more than %d significant digits",
                            len, b, MAX_SIG_DIGITS);
    const char *r = q;
    while (r < e && isspace((unsigned char)*r))
        r++;
    if (r == e) {
        if (mant == 0) {
            *out = 0;
            return 0;
        }
        return fs_error_set(err, FS_EINVAL, "'%.*s' has no unit (" FS_UNITS_DURATION_EXPECT ")", len, b);
    }
    const unit_t *u = find_unit(r, (size_t)(e - r));
    if (!u)
        return fs_error_set(err, FS_EINVAL,
                            "unknown unit '%.*s' in '%.*s' (" FS_UNITS_DURATION_EXPECT "; units: " UNIT_LIST ")",
                            (int)(e - r), r, len, b);
    int64_t us;
    if (exact_us(mant, x, u, &us) != 0)
        return fs_error_set(err, FS_EINVAL, "'%.*s' is beyond the limit of 1000 years", len, b);
    *out = us;
    return 0;
}

/* strtod on [b, e) (already scanned as a number). */
static double span_strtod(const char *b, const char *e, int *toolong)
{
    char buf[512];
    size_t n = (size_t)(e - b);
    if (n >= sizeof buf) {
        *toolong = 1;
        return NAN;
    }
    memcpy(buf, b, n);
    buf[n] = '\0';
    *toolong = 0;
    return strtod(buf, NULL);
}

int fs_units_parse_rate(const char *s, double *per_s, fs_error_t *err)
{
    const char *b, *e;
    trim(s, &b, &e);
    int len = (int)(e - b);
    if (b == e)
        return fs_error_set(err, FS_EINVAL, "empty value (" FS_UNITS_RATE_EXPECT ")");
    if (nonfinite_word(b, e))
        return fs_error_set(err, FS_EINVAL, "'%.*s' is not a finite rate (" FS_UNITS_RATE_EXPECT ")", len, b);
    const char *q = scan_number(b, e);
    if (q == b)
        return fs_error_set(err, FS_EINVAL, "'%.*s' is not a rate (" FS_UNITS_RATE_EXPECT ")", len, b);
    if (*b == '-')
        return fs_error_set(err, FS_EINVAL, "'%.*s': a rate cannot be negative (" FS_UNITS_RATE_EXPECT ")",
                            len, b);
    int toolong;
    double v = span_strtod(b, q, &toolong);
    if (toolong)
        return fs_error_set(err, FS_EINVAL, "'%.*s' is too long a number", len > 60 ? 60 : len, b);
    const char *r = q;
    while (r < e && isspace((unsigned char)*r))
        r++;
    if (r == e) {
        if (v == 0) {
            *per_s = 0;
            return 0;
        }
        return fs_error_set(err, FS_EINVAL, "'%.*s' has no unit (" FS_UNITS_RATE_EXPECT ")", len, b);
    }
    if (*r != '/')
        return fs_error_set(err, FS_EINVAL, "'%.*s' is not a rate (" FS_UNITS_RATE_EXPECT ")", len, b);
    r++;
    while (r < e && isspace((unsigned char)*r))
        r++;
    const unit_t *u = find_unit(r, (size_t)(e - r));
    if (!u)
        return fs_error_set(err, FS_EINVAL,
                            "unknown unit '/%.*s' in '%.*s' (" FS_UNITS_RATE_EXPECT "; units: " UNIT_LIST ")",
                            (int)(e - r), r, len, b);
    int64_t uu = unit_us(u);
    double rate = uu >= FS_US_PER_S ? v / ((double)uu / 1e6) : v * (1e6 / (double)uu);
    if (!isfinite(rate))
        return fs_error_set(err, FS_EINVAL, "'%.*s' is too large a rate", len, b);
    *per_s = rate == 0 ? 0 : rate;
    return 0;
}

int fs_units_parse_number(const char *s, double *out, fs_error_t *err)
{
    const char *b, *e;
    trim(s, &b, &e);
    int len = (int)(e - b);
    if (b == e)
        return fs_error_set(err, FS_EINVAL, "empty value (expected a number)");
    if (nonfinite_word(b, e))
        return fs_error_set(err, FS_EINVAL, "'%.*s' is not a finite number", len, b);
    const char *q = scan_number(b, e);
    if (q == b || q != e)
        return fs_error_set(err, FS_EINVAL, "'%.*s' is not a number", len, b);
    int toolong;
    double v = span_strtod(b, q, &toolong);
    if (toolong)
        return fs_error_set(err, FS_EINVAL, "'%.*s...' is too long a number", 60, b);
    if (!isfinite(v))
        return fs_error_set(err, FS_EINVAL, "'%.*s' is too large (not a finite number)", len, b);
    *out = v == 0 ? 0 : v;
    return 0;
}

char *fs_units_format_duration(fs_time_t t, char *buf, size_t n)
{
    static const struct { const char *name; int64_t us; } fmt[] = {
        {"d", FS_US_PER_DAY}, {"h", FS_US_PER_H}, {"m", FS_US_PER_MIN},
        {"s", FS_US_PER_S},   {"ms", 1000},       {"us", 1},
    };
    if (t == 0) {
        snprintf(buf, n, "0s");
        return buf;
    }
    for (size_t i = 0; i < sizeof fmt / sizeof fmt[0]; i++)
        if (t % fmt[i].us == 0) {
            snprintf(buf, n, "%lld%s", (long long)(t / fmt[i].us), fmt[i].name);
            break;
        }
    return buf;
}

char *fs_units_format_number(double x, char *buf, size_t n)
{
    if (!isfinite(x)) {
        snprintf(buf, n, "%s", isnan(x) ? ".nan" : x > 0 ? ".inf" : "-.inf");
        return buf;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, x);
        if (strtod(buf, NULL) == x) {
            /* the shortest %g may use an exponent where plain digits are as
             * short ("8e+01" for 80): then the plain integer */
            char fixed[48];
            if (strchr(buf, 'e') && fabs(x) < 1e15 && x == floor(x) &&
                snprintf(fixed, sizeof fixed, "%.0f", x) <= (int)strlen(buf) &&
                strlen(fixed) < n)
                memcpy(buf, fixed, strlen(fixed) + 1);
            return buf;
        }
    }
    snprintf(buf, n, "%.17g", x);
    return buf;
}

char *fs_units_format_rate(double per_s, char *buf, size_t n)
{
    static const char *const cand[] = {"s", "min", "h", "d"};
    char best[FS_UNITS_BUF] = "";
    char tmp[FS_UNITS_BUF];
    if (!isfinite(per_s) || per_s == 0) {
        snprintf(buf, n, "%s/s", isfinite(per_s) ? "0" : ".nan");
        return buf;
    }
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        const unit_t *u = find_unit(cand[i], strlen(cand[i]));
        double x = per_s * ((double)unit_us(u) / 1e6);
        for (int p = 1; p <= 17; p++) {
            snprintf(tmp, sizeof tmp, "%.*g/%s", p, x, cand[i]);
            double back;
            if (fs_units_parse_rate(tmp, &back, NULL) == 0 && back == per_s) {
                if (!best[0] || strlen(tmp) < strlen(best))
                    memcpy(best, tmp, sizeof best);
            }
        }
    }
    if (!best[0])
        snprintf(best, sizeof best, "%.17g/s", per_s);
    snprintf(buf, n, "%s", best);
    return buf;
}
