#include "fs_rdr.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/fs_alloc.h"

#define NONE INT64_MIN
#define OTHER_REASON "other reasons"

/* ------------------------------------------------------------------ */
/* Field parsers                                                       */

static int is_digit(char ch) { return (unsigned)(ch - '0') < 10u; }

int fs_rdr_u64(const char *s, size_t n, uint64_t *out)
{
    size_t i = 0;
    if (n && s[0] == '+')
        i++;
    if (i == n)
        return -1;
    uint64_t v = 0;
    if (n - i <= 19) {  /* cannot overflow: no division per digit */
        for (; i < n; i++) {
            unsigned d = (unsigned)(s[i] - '0');
            if (d > 9)
                return -1;
            v = v * 10 + d;
        }
        *out = v;
        return 0;
    }
    for (; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9 || v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int fs_rdr_i64(const char *s, size_t n, int64_t *out)
{
    int neg = n && s[0] == '-';
    uint64_t v;
    if (neg ? (n > 1 && s[1] == '+') || fs_rdr_u64(s + 1, n - 1, &v) : fs_rdr_u64(s, n, &v))
        return -1;
    if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
        return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* The fixed-point form through fs_rdr_fixed (integer arithmetic, so that
 * integer-second traces never touch floating point). */
int fs_rdr_seconds(const char *s, size_t n, fs_time_t *out)
{
    fs_rdr_fixed_t f;
    if (fs_rdr_fixed(s, n, &f)) {
        if (f.big || f.ip > (uint64_t)(FS_TIME_MAX_INPUT / FS_US_PER_S))
            return -1;
        uint64_t us = f.ip * 1000000u + f.frac;
        if (us > (uint64_t)FS_TIME_MAX_INPUT)
            return -1;
        *out = f.neg ? -(fs_time_t)us : (fs_time_t)us;
        return 0;
    }
    if (n == 0 || memchr(s, 'x', n) || memchr(s, 'X', n) || s[0] == ' ')
        return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (end != s + n || !isfinite(v) || !(fabs(v) <= (double)(FS_TIME_MAX_INPUT / FS_US_PER_S)))
        return -1;
    *out = fs_time_from_s(v);
    return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int digits(const char *s, size_t n, size_t at, size_t k, unsigned *v)
{
    if (at + k > n)
        return -1;
    unsigned x = 0;
    for (size_t i = at; i < at + k; i++) {
        if (!is_digit(s[i]))
            return -1;
        x = x * 10 + (unsigned)(s[i] - '0');
    }
    *v = x;
    return 0;
}

int fs_rdr_datetime(const char *s, size_t n, fs_time_t *out)
{
    unsigned y, mo, d, h, mi, se;
    if (digits(s, n, 0, 4, &y) || n < 19 || s[4] != '-' || digits(s, n, 5, 2, &mo) ||
        s[7] != '-' || digits(s, n, 8, 2, &d) || (s[10] != ' ' && s[10] != 'T') ||
        digits(s, n, 11, 2, &h) || s[13] != ':' || digits(s, n, 14, 2, &mi) || s[16] != ':' ||
        digits(s, n, 17, 2, &se))
        return -1;
    static const unsigned mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap) ||
        h > 23 || mi > 59 || se > 60)
        return -1;
    size_t i = 19;
    int64_t frac = 0;
    if (i < n && s[i] == '.') {
        int fd = 0;
        for (i++; i < n && is_digit(s[i]); i++)
            if (fd < 6) {
                frac = frac * 10 + (s[i] - '0');
                fd++;
            }
        if (fd == 0)
            return -1;
        for (; fd < 6; fd++)
            frac *= 10;
    }
    int64_t off = 0;
    if (i < n && s[i] == 'Z') {
        i++;
    } else if (i < n && (s[i] == '+' || s[i] == '-')) {
        int sign = s[i] == '-' ? -1 : 1;
        unsigned oh, om = 0;
        if (digits(s, n, i + 1, 2, &oh))
            return -1;
        i += 3;
        if (i < n && s[i] == ':')
            i++;
        if (i < n) {
            if (digits(s, n, i, 2, &om))
                return -1;
            i += 2;
        }
        if (oh > 23 || om > 59)
            return -1;
        off = sign * (int64_t)(oh * 3600 + om * 60);
    }
    if (i != n)
        return -1;
    int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off;
    *out = secs * FS_US_PER_S + frac;
    return 0;
}

int fs_rdr_valid_name(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c < 0x80) {
            if (c < 0x20 || c == 0x7f)
                return 0;
            i++;
            continue;
        }
        size_t k;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
            k = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            cp = c & 0x07;
        } else {
            return 0;
        }
        if (n - i <= k)
            return 0;
        for (size_t j = 1; j <= k; j++) {
            unsigned cc = s[i + j];
            if ((cc & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (cc & 0x3F);
        }
        if (k == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)))
            return 0;
        if (k == 3 && (cp < 0x10000 || cp > 0x10FFFF))
            return 0;
        if (cp >= 0x80 && cp < 0xA0)
            return 0;
        i += k + 1;
    }
    return 1;
}

void fs_rdr_show(char *dst, size_t cap, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (o + 8 >= cap || i >= 48) {
            memcpy(dst + o, "...", 3);
            o += 3;
            break;
        }
        if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
            dst[o++] = (char)ch;
        } else {
            dst[o++] = '\\';
            dst[o++] = 'x';
            dst[o++] = hex[ch >> 4];
            dst[o++] = hex[ch & 15];
        }
    }
    dst[o] = '\0';
}

/* ------------------------------------------------------------------ */
/* Errors and counting                                                 */

static unsigned long long line_no(const fs_rdr_t *r)
{
    return r->has_csv ? (unsigned long long)r->csv.line_no : 0;
}

static const char *path_of(const fs_rdr_t *r) { return r->has_csv ? r->csv.path : r->name; }

static void count_reason(fs_rdr_t *r, const char *what)
{
    for (size_t i = 0; i < r->n_reasons; i++)
        if (strcmp(r->reasons[i].what, what) == 0) {
            r->reasons[i].count++;
            return;
        }
    if (r->n_reasons == FS_RDR_MAX_REASONS) {
        fs_rdr_reason_t *last = &r->reasons[FS_RDR_MAX_REASONS - 1];
        snprintf(last->what, sizeof last->what, "%s", OTHER_REASON);
        last->count++;
        return;
    }
    snprintf(r->reasons[r->n_reasons].what, sizeof r->reasons[0].what, "%s", what);
    r->reasons[r->n_reasons++].count = 1;
}

int fs_rdr_field_error(fs_rdr_t *r, const char *field, const char *expected, const char *text,
                       size_t len)
{
    if (r->opts.lenient) {
        snprintf(r->bad_reason, sizeof r->bad_reason, "field %s", field);
        return FS_EINVAL;
    }
    char got[256];
    fs_rdr_show(got, sizeof got, text, len);
    return fs_error_set(&r->error, FS_EINVAL, "%s:%llu: field %s: expected %s (got '%s')",
                        path_of(r), line_no(r), field, expected, got);
}

int fs_rdr_row_error(fs_rdr_t *r, const char *reason, const char *fmt, ...)
{
    if (r->opts.lenient) {
        snprintf(r->bad_reason, sizeof r->bad_reason, "%s", reason);
        return FS_EINVAL;
    }
    char msg[FS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fs_error_set(&r->error, FS_EINVAL, "%s:%llu: %s", path_of(r), line_no(r), msg);
}

int fs_rdr_skip(fs_rdr_t *r, const char *reason)
{
    count_reason(r, reason);
    r->skipped++;
    return FS_RDR_SKIPPED;
}

int fs_rdr_fatal(fs_rdr_t *r, int code, const char *fmt, ...)
{
    char msg[FS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->fatal = 1;
    return fs_error_set(&r->error, code, "%s:%llu: %s", path_of(r), line_no(r), msg);
}

int fs_rdr_intern(fs_rdr_t *r, fs_strtab_t *t, const char *s, size_t len, int32_t *idx)
{
    if (!s || !len) {
        *idx = -1;
        return 0;
    }
    int rc = fs_strtab_intern(t, s, len, idx);
    if (rc == FS_ENOMEM)
        return fs_rdr_fatal(r, rc, "out of memory");
    if (rc)
        return fs_rdr_fatal(r, rc, "too many distinct names");
    return 0;
}

int fs_rdr_next_line(fs_rdr_t *r, const char *comment)
{
    for (;;) {
        int rc = fs_csv_next_line(&r->csv, &r->error);
        if (rc < 0)
            r->fatal = 1;   /* truncated gzip, long line, read error: fatal in both modes */
        if (rc <= 0)
            return rc;
        const char *l = r->csv.line;
        if (r->csv.line_len && comment && strchr(comment, l[0]))
            continue;
        for (size_t i = 0; i < r->csv.line_len; i++)
            if (l[i] != ' ' && l[i] != '\t')
                return 1;
    }
}

int fs_rdr_header(fs_rdr_t *r, char sep, const char *const *names, size_t n,
                  uint32_t required, int *col, size_t *width, fs_error_t *err)
{
    fs_csv_t *c = &r->csv;
    int rc = fs_rdr_next_line(r, "#");
    if (rc < 0) {
        *err = r->error;
        return rc;
    }
    if (rc == 0) {
        char list[512] = "";
        for (size_t k = 0; k < n; k++)
            if (required & (1u << k)) {
                if (*list)
                    strncat(list, ",", sizeof list - strlen(list) - 1);
                strncat(list, names[k], sizeof list - strlen(list) - 1);
            }
        return fs_error_set(err, FS_EINVAL, "%s: empty file (expected a header line with %s)",
                            c->path, list);
    }
    unsigned long long line = (unsigned long long)c->line_no;
    char got[200];
    fs_rdr_show(got, sizeof got, c->line, c->line_len);
    if ((rc = fs_csv_split(c, sep, err)))
        return rc;
    for (size_t k = 0; k < n; k++)
        col[k] = -1;
    for (size_t i = 0; i < c->n_fields; i++) {
        const fs_csv_field_t *f = &c->fields[i];
        for (size_t k = 0; k < n; k++) {
            if (strlen(names[k]) != f->len || memcmp(names[k], f->s, f->len) != 0)
                continue;
            if (col[k] >= 0)
                return fs_error_set(err, FS_EINVAL, "%s:%llu: duplicate column '%s' (fields "
                                    "%d and %zu)", c->path, line, names[k], col[k] + 1, i + 1);
            col[k] = (int)i;
        }
    }
    for (size_t k = 0; k < n; k++)
        if ((required & (1u << k)) && col[k] < 0) {
            return fs_error_set(err, FS_EINVAL, "%s:%llu: missing required column '%s' (%s "
                                "header expected; got '%s')", c->path, line, names[k], r->name,
                                got);
        }
    *width = c->n_fields;
    return 0;
}

int fs_rdr_split(fs_rdr_t *r, char sep, size_t width)
{
    fs_csv_t *c = &r->csv;
    fs_error_t e;
    int rc = fs_csv_split(c, sep, &e);
    if (rc == FS_EINVAL) {
        if (r->opts.lenient) {
            snprintf(r->bad_reason, sizeof r->bad_reason, "quoting");
            return rc;
        }
        r->error = e;
        return rc;
    }
    if (rc)
        return fs_rdr_fatal(r, rc, "out of memory");
    if (c->n_fields != width)
        return fs_rdr_row_error(r, "field count", "expected %zu fields as in the header, got %zu",
                                width, c->n_fields);
    return 0;
}

/* Skip reasons: i-th reason and its count (NULL past the end). */
static const char *fs_rdr_reason(const fs_rdr_t *r, size_t i, uint64_t *count)
{
    if (i >= r->n_reasons)
        return NULL;
    if (count)
        *count = r->reasons[i].count;
    return r->reasons[i].what;
}

int fs_rdr_get_uint(fs_rdr_t *r, const char *field, const fs_csv_field_t *f, uint64_t lo,
                    uint64_t hi, uint64_t *out)
{
    if (fs_rdr_u64(f->s, f->len, out) || *out < lo || *out > hi) {
        char what[80];
        snprintf(what, sizeof what, "an integer in %llu..%llu", (unsigned long long)lo,
                 (unsigned long long)hi);
        return fs_rdr_field_error(r, field, what, f->s, f->len);
    }
    return 0;
}

int fs_rdr_get_time(fs_rdr_t *r, const char *field, const fs_csv_field_t *f, fs_time_t *out)
{
    if (fs_rdr_seconds(f->s, f->len, out) || *out < 0)
        return fs_rdr_field_error(r, field, "a time in seconds >= 0", f->s, f->len);
    return 0;
}

fs_time_t fs_rdr_scale(const fs_rdr_t *r, fs_time_t us)
{
    if (r->opts.time_scale != 1.0) {
        double v = (double)us * r->opts.time_scale + 0.5;
        us = v >= (double)FS_TIME_MAX_INPUT ? FS_TIME_MAX_INPUT : (fs_time_t)v;
    }
    return us < 1 ? 1 : us;
}

int fs_rdr_get_run(fs_rdr_t *r, const char *field, const fs_csv_field_t *f, fs_time_t *out)
{
    if (fs_rdr_seconds(f->s, f->len, out) || *out <= 0)
        return fs_rdr_field_error(r, field, "a duration in seconds > 0", f->s, f->len);
    *out = fs_rdr_scale(r, *out);
    return 0;
}

int fs_rdr_get_name(fs_rdr_t *r, const char *field, const fs_csv_field_t *f)
{
    if (!fs_rdr_valid_name(f->s, f->len))
        return fs_rdr_field_error(r, field, "a UTF-8 name without control characters", f->s,
                                  f->len);
    return 0;
}

/* ------------------------------------------------------------------ */
/* The sort window: a ring of jobs kept sorted by (submit, file order) */

/*
 * Why a sorted ring rather than a heap: traces are nearly sorted.  A row
 * in order is appended (O(1), one copy in and one out); only a row that
 * comes earlier than the last one held is inserted by binary search and
 * shifting (O(window) worst case, rare in real traces).  A binary heap
 * pays O(log window) swaps of 96-byte jobs for every row -- three times
 * slower on sorted input.  Equal submissions stay in file order (a new row
 * goes after every held row with the same submit).
 */
#define RING_AT(r, i) ((r)->ring[((r)->ring_head + (i)) & ((r)->ring_cap - 1)])

static int ring_grow(fs_rdr_t *r)
{
    size_t cap = r->ring_cap ? r->ring_cap * 2 : 1024;
    fs_job_t *nr = fs_malloc(cap * sizeof *nr);
    if (!nr)
        return fs_rdr_fatal(r, FS_ENOMEM, "out of memory (sort window)");
    for (size_t i = 0; i < r->ring_n; i++)
        nr[i] = RING_AT(r, i);
    fs_free(r->ring);
    r->ring = nr;
    r->ring_cap = cap;
    r->ring_head = 0;
    return 0;
}

static int ring_push(fs_rdr_t *r, const fs_job_t *j)
{
    if (r->ring_n == r->ring_cap) {
        int rc = ring_grow(r);
        if (rc)
            return rc;
    }
    size_t n = r->ring_n;
    if (n == 0 || RING_AT(r, n - 1).submit <= j->submit) {
        RING_AT(r, n) = *j;
    } else {
        size_t lo = 0, hi = n;  /* first held job with submit > j->submit */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (RING_AT(r, mid).submit <= j->submit)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t i = n; i > lo; i--)
            RING_AT(r, i) = RING_AT(r, i - 1);
        RING_AT(r, lo) = *j;
    }
    r->ring_n++;
    return 0;
}

static fs_job_t ring_pop(fs_rdr_t *r)
{
    fs_job_t top = RING_AT(r, 0);
    r->ring_head = (r->ring_head + 1) & (r->ring_cap - 1);
    r->ring_n--;
    return top;
}

/* ------------------------------------------------------------------ */
/* The source                                                          */

static void emit(fs_rdr_t *r, fs_job_t *j)
{
    if (!r->origin_set) {
        r->origin = r->opts.keep_origin ? 0 : j->submit;
        r->origin_set = 1;
    }
    r->last_out = j->submit;
    j->submit -= r->origin;
    if (j->rec_start >= 0)
        j->rec_start -= r->origin;
    if (j->rec_end >= 0)
        j->rec_end -= r->origin;
    r->delivered++;
}

static int rdr_fail(fs_rdr_t *r, int rc, fs_error_t *err)
{
    r->status = rc;
    r->error.code = rc;
    if (err)
        *err = r->error;
    return rc;
}

static void finish(fs_rdr_t *r)
{
    r->done = 1;
    if (r->skipped) {
        fprintf(r->log, "%s: note: skipped %llu row%s:", path_of(r),
                (unsigned long long)r->skipped, r->skipped == 1 ? "" : "s");
        for (size_t i = 0; i < r->n_reasons; i++)
            fprintf(r->log, "%s %s %llu", i ? "," : "", r->reasons[i].what,
                    (unsigned long long)r->reasons[i].count);
        fprintf(r->log, "%s\n", r->opts.lenient ? " (lenient mode)" : "");
    }
    if (r->resorted)
        fprintf(r->log, "%s: note: %llu row%s came before an earlier row's submission and %s "
                "re-sorted (sort window %u rows)\n", path_of(r),
                (unsigned long long)r->resorted, r->resorted == 1 ? "" : "s",
                r->resorted == 1 ? "was" : "were", r->opts.sort_window);
}

int fs_rdr_op_next(void *state, fs_job_t *buf, size_t cap, size_t *n, fs_error_t *err)
{
    fs_rdr_t *r = state;
    *n = 0;
    if (r->status)
        return rdr_fail(r, r->status, err);
    if (cap == 0)
        return fs_error_set(err, FS_EINVAL, "%s: batch capacity must be >= 1", path_of(r));
    size_t k = 0;
    while (k < cap && !r->done) {
        if (r->ring_n && (r->eof || r->ring_n >= r->opts.sort_window)) {
            buf[k] = ring_pop(r);
            emit(r, &buf[k++]);
            continue;
        }
        if (r->eof) {
            finish(r);
            break;
        }
        fs_job_t j;
        int rc = r->pull(r, &j);
        if (rc == FS_RDR_SKIPPED)
            continue;
        if (rc == FS_EINVAL && r->opts.lenient && !r->fatal) {
            count_reason(r, r->bad_reason);
            r->skipped++;
            continue;
        }
        if (rc)
            return rdr_fail(r, rc, err);
        if (r->eof)
            continue;
        /* every reader: no time beyond the input limit (far-future wall-clock
         * dates found by fuzzing helios/acme/philly) */
        if (j.submit > FS_TIME_MAX_INPUT || j.duration > FS_TIME_MAX_INPUT ||
            j.estimate > FS_TIME_MAX_INPUT || j.rec_start > FS_TIME_MAX_INPUT ||
            j.rec_end > FS_TIME_MAX_INPUT) {
            if (r->opts.lenient) {
                count_reason(r, "time beyond 1000 years");
                r->skipped++;
                continue;
            }
            fs_error_set(&r->error, FS_EINVAL, "%s:%llu: field %s: expected times within 1000 "
                         "years (FS_TIME_MAX_INPUT)", path_of(r), line_no(r),
                         r->submit_field ? r->submit_field : "submit");
            return rdr_fail(r, FS_EINVAL, err);
        }
        if (r->last_out != NONE && j.submit < r->last_out) {
            char what[200];
            fs_time_t t = r->last_out - (r->origin_set ? r->origin : 0);
            snprintf(what, sizeof what, "%s >= %lld.%06lld s, a submission already delivered "
                     "(rows must be sorted by submission; out of order within %u rows is "
                     "re-sorted: workload.trace.sort_window)",
                     r->opts.keep_origin ? "a time" : "a time after the origin",
                     (long long)(t / FS_US_PER_S), (long long)(t % FS_US_PER_S),
                     r->opts.sort_window);
            if (r->opts.lenient) {
                count_reason(r, "unsorted beyond the sort window");
                r->skipped++;
                continue;
            }
            fs_error_set(&r->error, FS_EINVAL, "%s:%llu: field %s: expected %s", path_of(r),
                         line_no(r), r->submit_field ? r->submit_field : "submit", what);
            return rdr_fail(r, FS_EINVAL, err);
        }
        if (r->delivered + r->ring_n > 0 && j.submit < r->max_in)
            r->resorted++;
        if (r->delivered + r->ring_n == 0 || j.submit > r->max_in)
            r->max_in = j.submit;
        if (r->opts.sort_window == 0) {
            buf[k] = j;
            emit(r, &buf[k++]);
        } else if ((rc = ring_push(r, &j))) {
            return rdr_fail(r, rc, err);
        }
    }
    *n = k;
    return 0;
}

const char *fs_rdr_op_tenant_name(void *state, int32_t i)
{
    return fs_strtab_name(&((fs_rdr_t *)state)->tenants, i);
}

int32_t fs_rdr_op_tenant_count(void *state)
{
    return fs_strtab_count(&((fs_rdr_t *)state)->tenants);
}

const char *fs_rdr_op_gpu_type_name(void *state, int32_t i)
{
    return fs_strtab_name(&((fs_rdr_t *)state)->gpu_types, i);
}

int32_t fs_rdr_op_gpu_type_count(void *state)
{
    return fs_strtab_count(&((fs_rdr_t *)state)->gpu_types);
}

uint64_t fs_rdr_op_skipped(void *state) { return ((fs_rdr_t *)state)->skipped; }

const char *fs_rdr_op_skip_reason(void *state, size_t i, uint64_t *count)
{
    return fs_rdr_reason(state, i, count);
}

void fs_rdr_op_destroy(void *state)
{
    fs_rdr_t *r = state;
    if (!r)
        return;
    if (r->fmt_free)
        r->fmt_free(r->fmt);
    if (r->has_csv)
        fs_csv_close(&r->csv);
    fs_strtab_release(&r->tenants);
    fs_strtab_release(&r->gpu_types);
    fs_free(r->ring);
    fs_free(r);
}

int fs_rdr_open(const fs_source_ops_t *ops, const char *path, const fs_trace_opts_t *opts,
                int (*header)(fs_rdr_t *r, fs_error_t *err), fs_source_t **out,
                fs_error_t *err)
{
    *out = NULL;
    fs_trace_opts_t o;
    if (opts)
        o = *opts;
    else
        fs_trace_opts_init(&o);
    if (!isfinite(o.time_scale) || o.time_scale <= 0)
        return fs_error_set(err, FS_EINVAL, "%s: time_scale must be a finite number > 0 (got %g)",
                            path, o.time_scale);
    if (o.procs_per_gpu < 1)
        return fs_error_set(err, FS_EINVAL, "%s: procs_per_gpu must be >= 1", path);
    fs_source_t *src = fs_malloc(sizeof *src);
    fs_rdr_t *r = fs_calloc(1, sizeof *r);
    if (!src || !r) {
        fs_free(src);
        fs_free(r);
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    }
    r->name = ops->name;
    r->opts = o;
    r->log = o.log ? (FILE *)o.log : stderr;
    r->last_out = NONE;
    fs_strtab_init(&r->tenants);
    fs_strtab_init(&r->gpu_types);
    int rc = fs_csv_take(&r->csv, o.take_csv, path, err);
    r->opts.take_csv = NULL;   /* taken (or not ours): never kept */
    if (rc) {
        fs_free(r);
        fs_free(src);
        return rc;
    }
    r->has_csv = 1;
    rc = header(r, err);
    if (rc) {
        fs_rdr_op_destroy(r);
        fs_free(src);
        return rc;
    }
    src->ops = ops;
    src->state = r;
    *out = src;
    return 0;
}
