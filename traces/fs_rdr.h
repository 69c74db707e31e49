/*
 * fs_rdr: the machinery shared by the production-trace readers (tiresias,
 * openb, swf, helios, acme, ...); internal to traces/.
 *
 * Readers: fs_tiresias, fs_openb, fs_swf, fs_pai, fs_philly, fs_helios.
 * A format supplies one function, pull(), that produces the next job of the
 * file in file order with times as the file states them (microseconds,
 * before any shift).  fs_rdr turns that into an fs_source_t:
 *   - batches: fs_source_next fills up to cap jobs per call;
 *   - strict / lenient: a row error (FS_EINVAL from pull) ends the stream
 *     with its message in strict mode; in lenient mode the row is skipped
 *     and counted under its reason ("field gpus", "field count", ...);
 *   - option skips (rows an option says to drop, e.g. CPU-only pods) are
 *     counted under their reason in both modes, never dropped silently;
 *   - submission order: rows out of order are re-sorted inside a bounded
 *     window (opts.sort_window rows, a ring kept sorted by (submit, file
 *     order): appending a row in order is O(1)); a row earlier than one
 *     already delivered is an error (strict) or skipped ("unsorted beyond
 *     the sort window", lenient).  With a window of 0 every out-of-order
 *     row is such an error.  When the stream ends, the skip counts per
 *     reason and the number of re-sorted rows are written once to opts.log
 *     (stderr when NULL);
 *   - fatal errors (fs_rdr_fatal: header problems, JSON syntax, truncated
 *     gzip, read errors, out of memory) end the stream in both modes;
 *   - time origin: unless opts.keep_origin, every time (submit, rec_start,
 *     rec_end) is shifted by the first delivered submission, which is thus 0;
 *   - names: tenants and GPU types interned by pull() in order of first
 *     appearance among accepted rows (a row rejected later for its order
 *     may have interned a name: harmless, names are only a table);
 *   - sticky errors: after a fatal error every call returns it again.
 *
 * Memory: the format's 1 MiB read buffer (fs_csv), the sort window (at most
 * sort_window jobs, grown on demand), the name tables and the reasons table
 * (a few entries): never the length of the trace.
 *
 * Ownership: fs_rdr_t is created by fs_rdr_open together with the source
 * that owns it; the format's state (fmt) is freed by its fmt_free hook when
 * the source is destroyed.
 */
#ifndef FS_RDR_H
#define FS_RDR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../sim/fs_error.h"
#include "fs_csv.h"
#include "fs_topts.h"
#include "fs_source.h"
#include "fs_strtab.h"

#define FS_RDR_MAX_REASONS 24
/* pull(): a row was skipped by an option (already counted with fs_rdr_skip). */
#define FS_RDR_SKIPPED 1

typedef struct fs_rdr fs_rdr_t;

typedef struct fs_rdr_reason {
    char what[48];          /* "field gpus", "cpu_only", ... */
    uint64_t count;
} fs_rdr_reason_t;

struct fs_rdr {
    const char *name;       /* format name ("tiresias") */
    fs_csv_t csv;           /* line reader (formats that read lines) */
    int has_csv;
    fs_trace_opts_t opts;
    FILE *log;              /* opts.log or stderr */
    fs_strtab_t tenants, gpu_types;
    /* pull(r, j): 0 = *j is the next job; FS_RDR_SKIPPED; FS_EINVAL = bad
     * row (message in r->error in strict mode; reason in r->bad_reason);
     * any other negative FS_E* code: fatal, with r->error set.
     * End of input: returns 0 with r->eof set (j untouched). */
    int (*pull)(fs_rdr_t *r, fs_job_t *j);
    void (*fmt_free)(void *fmt);
    void *fmt;              /* the format's own state */
    /* order and origin */
    fs_job_t *ring;         /* sort window: jobs sorted by (submit, file order) */
    size_t ring_head, ring_n, ring_cap;   /* ring_cap: 0 or a power of 2 */
    fs_time_t last_out;     /* raw submit of the last delivered job; INT64_MIN none */
    fs_time_t max_in;       /* largest raw submit pulled so far */
    fs_time_t origin;       /* raw time that becomes 0 */
    int origin_set;
    uint64_t resorted;      /* rows that came earlier than a previous row and were re-sorted */
    uint64_t delivered;
    /* counting */
    uint64_t skipped;
    fs_rdr_reason_t reasons[FS_RDR_MAX_REASONS];
    size_t n_reasons;
    char bad_reason[48];    /* reason of the last row error (lenient) */
    const char *submit_field; /* name of the submission column, for order errors */
    int eof, done, status;
    int fatal;              /* set by fs_rdr_fatal: an FS_EINVAL that lenient mode must not skip */
    fs_error_t error;
};

/* Creates the source.  If path is given the file is opened through fs_csv
 * (plain or gzip); header(r, err) then runs once (it may read lines and
 * sets r->fmt / r->pull).  Returns 0 or an error with nothing left open. */
int fs_rdr_open(const fs_source_ops_t *ops, const char *path, const fs_trace_opts_t *opts,
                int (*header)(fs_rdr_t *r, fs_error_t *err), fs_source_t **out,
                fs_error_t *err);

/* The source operations of every fs_rdr reader; a format declares its table
 * with FS_RDR_OPS("name") (the name is the format's and the source's). */
int fs_rdr_op_next(void *state, fs_job_t *buf, size_t cap, size_t *n, fs_error_t *err);
const char *fs_rdr_op_tenant_name(void *state, int32_t i);
int32_t fs_rdr_op_tenant_count(void *state);
const char *fs_rdr_op_gpu_type_name(void *state, int32_t i);
int32_t fs_rdr_op_gpu_type_count(void *state);
uint64_t fs_rdr_op_skipped(void *state);
const char *fs_rdr_op_skip_reason(void *state, size_t i, uint64_t *count);
void fs_rdr_op_destroy(void *state);
#define FS_RDR_OPS(nm)                                                                  \
    {                                                                                   \
        .name = (nm), .next = fs_rdr_op_next, .tenant_name = fs_rdr_op_tenant_name,     \
        .tenant_count = fs_rdr_op_tenant_count, .gpu_type_name = fs_rdr_op_gpu_type_name, \
        .gpu_type_count = fs_rdr_op_gpu_type_count, .skipped = fs_rdr_op_skipped,         \
        .skip_reason = fs_rdr_op_skip_reason, .destroy = fs_rdr_op_destroy               \
    }

/* Row error on field `field` of the current line: strict: sets r->error to
 * "FILE:LINE: field FIELD: expected EXPECTED (got 'TEXT')"; lenient: notes
 * the reason "field FIELD".  Returns FS_EINVAL. */
int fs_rdr_field_error(fs_rdr_t *r, const char *field, const char *expected, const char *text,
                       size_t len);
/* Row error not tied to one field: "FILE:LINE: MESSAGE", reason `reason`. */
int fs_rdr_row_error(fs_rdr_t *r, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Counts a row skipped by an option under `reason` (static string);
 * returns FS_RDR_SKIPPED. */
int fs_rdr_skip(fs_rdr_t *r, const char *reason);
/* Fatal error "FILE:LINE: MESSAGE" (sets r->error); returns code. */
int fs_rdr_fatal(fs_rdr_t *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Interns a name (tenant or GPU type); NULL/empty gives -1.  Returns 0 or a
 * fatal code with r->error set. */
int fs_rdr_intern(fs_rdr_t *r, fs_strtab_t *t, const char *s, size_t len, int32_t *idx);

/* Reads the next non-blank line that is not a comment (first byte in
 * `comment`, NULL = none).  1 = line, 0 = end, < 0 = error (r->error set). */
int fs_rdr_next_line(fs_rdr_t *r, const char *comment);

/* Reads the header line (the first non-blank line not starting with '#')
 * split at sep and finds each of the n names in it: col[k] = the field
 * index of names[k], or -1 if absent.  A name listed in `required` (bit k)
 * that is missing, or a name given twice, is an error on the header line;
 * other columns are ignored.  *width = fields in the header.  Returns 0 or
 * an error in err (an empty file: "FILE: empty file (expected ...)"). */
int fs_rdr_header(fs_rdr_t *r, char sep, const char *const *names, size_t n,
                  uint32_t required, int *col, size_t *width, fs_error_t *err);

/* Splits the current line at sep and checks the field count: 0, or
 * FS_EINVAL ("expected N fields as in the header, got M" / bad quoting;
 * reason "field count" or "quoting"), or FS_ENOMEM (fatal). */
int fs_rdr_split(fs_rdr_t *r, char sep, size_t width);

/* ---- field parsers: no sscanf, no locale -------------------------------- */
/* [+]digits -> uint64 (0 or -1 on syntax/overflow). */
int fs_rdr_u64(const char *s, size_t n, uint64_t *out);
/* [+-]digits -> int64 (0 or -1). */
int fs_rdr_i64(const char *s, size_t n, int64_t *out);
/* The fixed-point form [+-]D[.D] (at least one digit, nothing else), the
 * fast path of every seconds parser: integer part (saturating: big = 1
 * past 10^14), fraction in microseconds rounded half up at the 7th
 * decimal, sign, and whether any digit is non-zero.  Why integer
 * arithmetic: "12.345678" is exactly 12345678 us, so a writer's "%.6f"
 * output reads back bit for bit where a double product could land one
 * microsecond off.  Returns 1 when s[0..n) has that form, else 0 (the
 * caller tries strtod for exponent forms). */
typedef struct fs_rdr_fixed {
    uint64_t ip;    /* whole seconds (valid when !big) */
    uint64_t frac;  /* microseconds of the fraction, rounded */
    int neg, big, nonzero;
} fs_rdr_fixed_t;

static inline int fs_rdr_fixed(const char *s, size_t n, fs_rdr_fixed_t *f)
{
    size_t i = 0, ndig = 0;
    int fd = 0, round = 0;
    f->ip = f->frac = 0;
    f->neg = f->big = f->nonzero = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) {
        f->neg = s[i] == '-';
        i++;
    }
    for (; i < n && (unsigned)(s[i] - '0') < 10u; i++, ndig++) {
        unsigned d = (unsigned)(s[i] - '0');
        f->nonzero |= d != 0;
        if (f->ip < UINT64_C(100000000000000))
            f->ip = f->ip * 10 + d;
        else
            f->big = 1;
    }
    if (i < n && s[i] == '.') {
        for (i++; i < n && (unsigned)(s[i] - '0') < 10u; i++, ndig++) {
            unsigned d = (unsigned)(s[i] - '0');
            f->nonzero |= d != 0;
            if (fd < 6) {
                f->frac = f->frac * 10 + d;
                fd++;
            } else if (fd == 6) {
                round = d >= 5;
                fd++;
            }
        }
    }
    if (i != n || ndig == 0)
        return 0;
    for (; fd < 6; fd++)
        f->frac *= 10;
    f->frac += (unsigned)round;
    return 1;
}

/* [+-]D[.D] seconds -> microseconds rounded half up at the 7th decimal;
 * exponent forms through strtod; |value| <= FS_TIME_MAX_INPUT; NaN/inf and
 * hex refused.  s[n] must be NUL.  0 or -1. */
int fs_rdr_seconds(const char *s, size_t n, fs_time_t *out);
/* "YYYY-MM-DD HH:MM:SS[.frac]" or with 'T', optionally followed by "Z" or
 * a UTC offset "+HH:MM" / "-HHMM" / "+HH"; without an offset the time is
 * taken as UTC.  -> microseconds since 1970-01-01 UTC (may be negative).
 * 0 or -1. */
int fs_rdr_datetime(const char *s, size_t n, fs_time_t *out);
/* Field helpers: parse, check, and on failure return fs_rdr_field_error
 * with the standard expectation text.
 *   uint: an integer in lo..hi ("expected an integer in LO..HI")
 *   time: seconds >= 0 ("expected a time in seconds >= 0")
 *   run:  seconds > 0, scaled by opts.time_scale, >= 1 us ("expected a
 *         duration in seconds > 0")
 *   name: UTF-8 without control characters (may be empty) */
int fs_rdr_get_uint(fs_rdr_t *r, const char *field, const fs_csv_field_t *f, uint64_t lo,
                    uint64_t hi, uint64_t *out);
int fs_rdr_get_time(fs_rdr_t *r, const char *field, const fs_csv_field_t *f, fs_time_t *out);
int fs_rdr_get_run(fs_rdr_t *r, const char *field, const fs_csv_field_t *f, fs_time_t *out);
int fs_rdr_get_name(fs_rdr_t *r, const char *field, const fs_csv_field_t *f);
/* Applies opts.time_scale to a run time (us > 0); >= 1 us. */
fs_time_t fs_rdr_scale(const fs_rdr_t *r, fs_time_t us);

/* UTF-8 without control characters (the native reader's rule). */
int fs_rdr_valid_name(const char *s, size_t n);
/* A field for a message: printable ASCII as is, other bytes as \xNN. */
void fs_rdr_show(char *dst, size_t cap, const char *s, size_t n);

#endif
