#include "fs_native.h"
#include "fs_migname.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../sim/fs_alloc.h"
#include "../sim/fs_io.h"
#include "../sim/fs_out.h"
#include "fs_csv.h"
#include "fs_rdr.h"
#include "fs_strtab.h"

/* ------------------------------------------------------------------ */
/* The columns                                                         */

enum native_col {
    COL_ID, COL_SUBMIT, COL_GPUS, COL_DURATION,     /* required */
    COL_ESTIMATE, COL_TENANT, COL_GPU_TYPE, COL_PRIORITY, COL_GPU_MILLI, COL_CLASS,
    COL_REC_START, COL_REC_END, COL_REC_STATE, COL_SINGLE_NODE, COL_MIG_PROFILE, COL_GPU_UTIL,
    COL_GPU_MEM, N_COLS
};
#define N_REQUIRED 4

static const char *const col_names[N_COLS] = {
    "id", "submit", "gpus", "duration", "estimate", "tenant", "gpu_type", "priority",
    "gpu_milli", "class", "rec_start", "rec_end", "rec_state", "single_node", "mig_profile",
    "gpu_util", "gpu_mem",
};

#define KNOWN_COLUMNS "id, submit, gpus, duration, estimate, tenant, gpu_type, priority, " \
                      "gpu_milli, class, rec_start, rec_end, rec_state, single_node, mig_profile, " \
                      "gpu_util, gpu_mem"
#define REC_STATES "completed, failed, killed, timeout, node_fail, running, unknown"

#define MAX_GPUS (UINT64_C(1) << 31)
#define MAX_INPUT_S (FS_TIME_MAX_INPUT / FS_US_PER_S)   /* 31,557,600,000 s */

/* ------------------------------------------------------------------ */
/* Field parsers: hand-rolled for the common forms (no sscanf, no      */
/* locale), strtod only for exponent forms.                            */

enum num_status { NUM_OK = 0, NUM_SYNTAX, NUM_NONFINITE, NUM_NEGATIVE, NUM_RANGE };

/*
 * Decimal seconds -> microseconds, rounded half up at the 7th decimal:
 * [+-]D[.D] by fs_rdr_fixed (exact integer arithmetic), other forms
 * (exponents) through strtod.  Unlike fs_rdr_seconds, a negative value is
 * its own status, and *nonzero tells a true zero from a positive value
 * below 0.5 us.  s[n] must be NUL.
 */
static int parse_seconds(const char *s, size_t n, fs_time_t *out, int *nonzero)
{
    fs_rdr_fixed_t f;
    if (fs_rdr_fixed(s, n, &f)) {
        *nonzero = f.nonzero;
        if (f.neg && f.nonzero)
            return NUM_NEGATIVE;
        if (f.big || f.ip > (uint64_t)MAX_INPUT_S)
            return NUM_RANGE;
        uint64_t us = f.ip * 1000000u + f.frac;
        if (us > (uint64_t)FS_TIME_MAX_INPUT)
            return NUM_RANGE;
        *out = (fs_time_t)us;
        return NUM_OK;
    }
    /* Slow path: exponent forms, and words (nan, inf) to name them. */
    if (n == 0 || memchr(s, 'x', n) || memchr(s, 'X', n) || s[0] == ' ')
        return NUM_SYNTAX;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (end != s + n)
        return NUM_SYNTAX;
    if (isnan(v) || (isinf(v) && errno != ERANGE))
        return NUM_NONFINITE;
    *nonzero = v != 0;
    if (v < 0)
        return NUM_NEGATIVE;
    if (!(v <= (double)MAX_INPUT_S))
        return NUM_RANGE;
    *out = fs_time_from_s(v);
    if (*out > FS_TIME_MAX_INPUT)
        return NUM_RANGE;
    return NUM_OK;
}

/* [+-]digits -> int32 (through the shared reader core's parser); -1 on
 * syntax or range. */
static int parse_i32(const char *s, size_t n, int32_t *out)
{
    int64_t v;
    if (fs_rdr_i64(s, n, &v) || v < INT32_MIN || v > INT32_MAX)
        return -1;
    *out = (int32_t)v;
    return 0;
}

/* rec_state name -> enum value; -1 if unknown. */
static int parse_rec_state(const char *s, size_t n)
{
    for (int32_t k = FS_JOB_REC_UNKNOWN; k <= FS_JOB_REC_RUNNING; k++) {
        const char *name = fs_job_rec_state_name(k);
        if (strlen(name) == n && memcmp(name, s, n) == 0)
            return k;
    }
    return -1;
}

/* ------------------------------------------------------------------ */
/* The reader                                                          */

typedef struct native {
    fs_csv_t csv;
    fs_trace_opts_t opts;
    uint8_t field_col[N_COLS];  /* column of each header field */
    size_t n_fields;            /* fields per row (header width) */
    int has_col[N_COLS];
    fs_strtab_t tenants, gpu_types;
    fs_time_t last_submit;      /* submit of the last accepted row, us */
    uint64_t skipped;           /* rows skipped (lenient) */
    int done;
    int status;                 /* sticky fatal error, FS_E* */
    fs_error_t error;           /* its message; also scratch for row errors */
} native_t;

/* A row error: formatted only in strict mode (lenient rows are counted). */
/* A field as a real number (strtod's forms), or NaN if it is not one. */
static double field_real(const fs_csv_field_t *f)
{
    char buf[32], *e = NULL;
    if (f->len >= sizeof buf)
        return NAN;
    memcpy(buf, f->s, f->len);
    buf[f->len] = '\0';
    double v = strtod(buf, &e);
    return *e ? NAN : v;
}

static int field_error(native_t *s, size_t field, const char *expected)
{
    if (s->opts.lenient)
        return FS_EINVAL;
    const fs_csv_field_t *f = &s->csv.fields[field];
    char got[256];
    fs_rdr_show(got, sizeof got, f->s, f->len);
    return fs_error_set(&s->error, FS_EINVAL, "%s:%llu: field %s: expected %s (got '%s')",
                        s->csv.path, (unsigned long long)s->csv.line_no,
                        col_names[s->field_col[field]], expected, got);
}

/* Index of the header field holding column col (the column must exist). */
static size_t field_of(const native_t *s, int col)
{
    for (size_t i = 0; i < s->n_fields; i++)
        if (s->field_col[i] == col)
            return i;
    return 0;
}

static int time_error(native_t *s, size_t field, int st, int duration)
{
    char what[96];
    switch (st) {
    case NUM_NONFINITE:
        return field_error(s, field, "a finite number");
    case NUM_NEGATIVE:
        return field_error(s, field, duration ? "a duration in seconds > 0"
                                              : "a time in seconds >= 0");
    case NUM_RANGE:
        snprintf(what, sizeof what, "a %s in seconds <= %lld", duration ? "duration" : "time",
                 (long long)MAX_INPUT_S);
        return field_error(s, field, what);
    default:
        return field_error(s, field, duration ? "a duration in seconds" : "a time in seconds");
    }
}

/* An optional time (empty = -1) or a required one; >= 0. */
static int get_time(native_t *s, size_t field, fs_time_t *out)
{
    const fs_csv_field_t *f = &s->csv.fields[field];
    if (f->len == 0) {
        if (s->field_col[field] < N_REQUIRED)
            return field_error(s, field, "a time in seconds");
        *out = -1;
        return 0;
    }
    int nz = 0;
    int st = parse_seconds(f->s, f->len, out, &nz);
    return st ? time_error(s, field, st, 0) : 0;
}

/* A duration (duration, estimate): > 0, scaled by time_scale, >= 1 us. */
static int get_duration(native_t *s, size_t field, fs_time_t *out)
{
    const fs_csv_field_t *f = &s->csv.fields[field];
    if (f->len == 0) {
        if (s->field_col[field] < N_REQUIRED)
            return field_error(s, field, "a duration in seconds");
        *out = -1;
        return 0;
    }
    int nz = 0;
    fs_time_t us = 0;
    int st = parse_seconds(f->s, f->len, &us, &nz);
    if (st == NUM_OK && !nz)
        st = NUM_NEGATIVE;  /* zero: "expected a duration in seconds > 0" */
    if (st)
        return time_error(s, field, st, 1);
    if (s->opts.time_scale != 1.0) {
        double v = (double)us * s->opts.time_scale;
        if (!(v <= (double)FS_TIME_MAX_INPUT))
            return field_error(s, field, "a duration that stays <= 31557600000 s after time_scale");
        us = (fs_time_t)(v + 0.5);
    }
    *out = us < 1 ? 1 : us;
    return 0;
}

static int get_name(native_t *s, size_t field, const char **name, size_t *len)
{
    const fs_csv_field_t *f = &s->csv.fields[field];
    if (!fs_rdr_valid_name(f->s, f->len))
        return field_error(s, field, "a UTF-8 name without control characters");
    *name = f->len ? f->s : NULL;
    *len = f->len;
    return 0;
}

/* Parses the current line into *j.  Row errors return FS_EINVAL (message in
 * s->error unless lenient); failures that end the stream (out of memory,
 * too many names) return their code with the message in s->error. */
/* The names a row gives (interned once the row is accepted). */
typedef struct row_names {
    const char *tenant, *gpu_type;
    size_t tenant_len, gpu_type_len;
} row_names_t;

/* The optional fields: the recorded run, single_node, mig_profile and the
 * recorded GPU utilization and memory. */
static int parse_extra(native_t *s, size_t i, fs_job_t *j)
{
    const fs_csv_field_t *f = &s->csv.fields[i];
    int rc;
    switch (s->field_col[i]) {
    case COL_REC_START:
        if ((rc = get_time(s, i, &j->rec_start)))
            return rc;
        break;
    case COL_REC_END:
        if ((rc = get_time(s, i, &j->rec_end)))
            return rc;
        break;
    case COL_REC_STATE:
        if (f->len) {
            int st = parse_rec_state(f->s, f->len);
            if (st < 0)
                return field_error(s, i, "one of " REC_STATES);
            j->rec_state = st;
        }
        break;
    case COL_SINGLE_NODE:
        /* 1: the job is one pod and must fit on one node (openb, one-instance PAI
         * jobs converted to native keep it); empty or 0: may span nodes. */
        if (f->len) {
            if (f->len != 1 || (f->s[0] != '0' && f->s[0] != '1'))
                return field_error(s, i, "0 or 1");
            if (f->s[0] == '1')
                j->flags |= FS_JOB_SINGLE_NODE;
        }
        break;
    case COL_MIG_PROFILE:
        /* a MIG profile name: the job is a pod taking `gpus` instances of it
         * (docs/mig.md); gpu_milli becomes the profile's compute share */
        if (f->len) {
            j->mig = s->opts.mig_profile ? s->opts.mig_profile(f->s, f->len)
                                         : fs_migname_parse(f->s, f->len);
            if (!j->mig)
                return field_error(s, i, "a MIG profile name such as 1g.10gb or 3g.40gb "
                                         "(docs/mig.md) or empty");
        }
        break;
    case COL_GPU_UTIL:
        /* the recorded GPU utilization, 0..1 (whole percents kept): the job's duty
         * (docs/observability.md "Recorded utilization"); empty: not recorded */
        if (f->len) {
            double v = field_real(f);
            if (!(v >= 0 && v <= 1))
                return field_error(s, i, "a utilization from 0 to 1, or empty");
            j->rec_util = fs_job_util_code(v);
        }
        break;
    case COL_GPU_MEM:
        /* the recorded GPU memory use, GB per GPU (0.25 GB steps to 32 GB, 1.5 GB
         * above): the job's framebuffer (docs/observability.md "Recorded
         * utilization"); empty: not recorded */
        if (f->len) {
            double v = field_real(f);
            if (!(v >= 0 && v <= FS_JOB_FB_MAX_GB))
                return field_error(s, i, "a GPU memory use in GB from 0 to 221, or empty");
            j->rec_fb = fs_job_fb_code(v);
        }
        break;
    default:
        break;
    }
    return 0;
}

/* Field i of the row into j (names into nm). */
static int parse_field(native_t *s, size_t i, fs_job_t *j, row_names_t *nm)
{
    const fs_csv_field_t *f = &s->csv.fields[i];
    uint64_t u;
    int rc;
    switch (s->field_col[i]) {
    case COL_ID:
        if (fs_rdr_u64(f->s, f->len, &j->id))
            return field_error(s, i, "an unsigned integer id");
        break;
    case COL_SUBMIT:
        if ((rc = get_time(s, i, &j->submit)))
            return rc;
        break;
    case COL_GPUS:
        if (fs_rdr_u64(f->s, f->len, &u) || u < 1 || u > MAX_GPUS)
            return field_error(s, i, "an integer in 1..2147483648");
        j->gpus = (uint32_t)u;
        break;
    case COL_DURATION:
        if ((rc = get_duration(s, i, &j->duration)))
            return rc;
        break;
    case COL_ESTIMATE:
        if ((rc = get_duration(s, i, &j->estimate)))
            return rc;
        break;
    case COL_TENANT:
        if ((rc = get_name(s, i, &nm->tenant, &nm->tenant_len)))
            return rc;
        break;
    case COL_GPU_TYPE:
        if ((rc = get_name(s, i, &nm->gpu_type, &nm->gpu_type_len)))
            return rc;
        break;
    case COL_PRIORITY:
        if (f->len && parse_i32(f->s, f->len, &j->priority))
            return field_error(s, i, "an integer in -2147483648..2147483647");
        break;
    case COL_GPU_MILLI:
        if (f->len) {
            if (fs_rdr_u64(f->s, f->len, &u) || u < 1 || u > FS_GPU_MILLI_WHOLE)
                return field_error(s, i, "an integer in 1..1000");
            j->gpu_milli = (uint32_t)u;
        }
        break;
    case COL_CLASS:
        if (f->len && (parse_i32(f->s, f->len, &j->job_class) || j->job_class < 0))
            return field_error(s, i, "an integer in 0..2147483647");
        break;
    default:
        return parse_extra(s, i, j);
    }
    return 0;
}

/* Checks across fields, then the order of rows. */
static int check_row(native_t *s, fs_job_t *j)
{
    if (j->mig) {
        if (j->gpu_milli != FS_GPU_MILLI_WHOLE)
            return field_error(s, field_of(s, COL_GPU_MILLI), "empty when mig_profile is given");
        j->gpu_milli = fs_migname_milli(j->mig);
    } else if (j->gpu_milli != FS_GPU_MILLI_WHOLE && j->gpus > 1)
        return field_error(s, field_of(s, COL_GPU_MILLI), "1000 when gpus > 1");
    if (j->rec_start >= 0 && j->rec_end >= 0 && j->rec_end < j->rec_start)
        return field_error(s, field_of(s, COL_REC_END), "a time >= rec_start");
    if (j->submit < s->last_submit) {
        char what[128];
        snprintf(what, sizeof what, "a time >= %lld.%06lld, the previous row's submit "
                 "(rows must be sorted by submit)",
                 (long long)(s->last_submit / FS_US_PER_S),
                 (long long)(s->last_submit % FS_US_PER_S));
        return field_error(s, field_of(s, COL_SUBMIT), what);
    }
    return 0;
}

static int parse_row(native_t *s, fs_job_t *j)
{
    fs_csv_t *c = &s->csv;
    int rc = fs_csv_split(c, ',', s->opts.lenient ? NULL : &s->error);
    if (rc)
        return rc;
    if (c->n_fields != s->n_fields) {
        if (s->opts.lenient)
            return FS_EINVAL;
        return fs_error_set(&s->error, FS_EINVAL, "%s:%llu: expected %zu fields as in the header, "
                            "got %zu", c->path, (unsigned long long)c->line_no, s->n_fields,
                            c->n_fields);
    }
    fs_job_init(j);
    row_names_t nm = {0};
    for (size_t i = 0; i < s->n_fields; i++)
        if ((rc = parse_field(s, i, j, &nm)))
            return rc;
    if ((rc = check_row(s, j)))
        return rc;
    /* The row is good: intern its names (order of first appearance among
     * accepted rows). */
    if (nm.tenant && (rc = fs_strtab_intern(&s->tenants, nm.tenant, nm.tenant_len, &j->tenant)))
        goto names;
    if (nm.gpu_type &&
        (rc = fs_strtab_intern(&s->gpu_types, nm.gpu_type, nm.gpu_type_len, &j->gpu_type)))
        goto names;
    s->last_submit = j->submit;
    return 0;
names:
    if (rc == FS_ENOMEM)
        fs_error_set(&s->error, rc, "%s:%llu: out of memory", c->path,
                     (unsigned long long)c->line_no);
    else
        fs_error_set(&s->error, rc, "%s:%llu: too many distinct names", c->path,
                     (unsigned long long)c->line_no);
    return rc;
}

static int blank_or_comment(const fs_csv_t *c)
{
    if (c->line_len && c->line[0] == '#')
        return 1;
    for (size_t i = 0; i < c->line_len; i++)
        if (c->line[i] != ' ' && c->line[i] != '\t')
            return 0;
    return 1;
}

static int parse_header(native_t *s, fs_error_t *err)
{
    fs_csv_t *c = &s->csv;
    int rc;
    for (;;) {
        rc = fs_csv_next_line(c, err);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return fs_error_set(err, FS_EINVAL, "%s: empty file (expected a header line "
                                "naming the columns)", c->path);
        if (!blank_or_comment(c))
            break;
    }
    unsigned long long line = (unsigned long long)c->line_no;
    if ((rc = fs_csv_split(c, ',', err)))
        return rc;
    size_t where[N_COLS] = {0};     /* 1-based field of each column; 0 absent */
    for (size_t i = 0; i < c->n_fields; i++) {
        const fs_csv_field_t *f = &c->fields[i];
        int col = -1;
        for (int k = 0; k < N_COLS; k++)
            if (strlen(col_names[k]) == f->len && memcmp(col_names[k], f->s, f->len) == 0)
                col = k;
        if (col < 0) {
            char got[256];
            fs_rdr_show(got, sizeof got, f->s, f->len);
            return fs_error_set(err, FS_EINVAL, "%s:%llu: unknown column '%s' (known columns: "
                                KNOWN_COLUMNS ")", c->path, line, got);
        }
        if (where[col])
            return fs_error_set(err, FS_EINVAL, "%s:%llu: duplicate column '%s' (fields %zu "
                                "and %zu)", c->path, line, col_names[col], where[col], i + 1);
        where[col] = i + 1;
        s->field_col[i] = (uint8_t)col;
        s->has_col[col] = 1;
    }
    s->n_fields = c->n_fields;
    for (int k = 0; k < N_REQUIRED; k++)
        if (!where[k])
            return fs_error_set(err, FS_EINVAL, "%s:%llu: missing required column '%s'",
                                c->path, line, col_names[k]);
    return 0;
}

static int native_fail(native_t *s, int rc, fs_error_t *err)
{
    s->status = rc;
    s->error.code = rc;
    if (err)
        *err = s->error;
    return rc;
}

static int native_next(void *state, fs_job_t *buf, size_t cap, size_t *n, fs_error_t *err)
{
    native_t *s = state;
    *n = 0;
    if (s->status)
        return native_fail(s, s->status, err);
    if (cap == 0)
        return fs_error_set(err, FS_EINVAL, "%s: batch capacity must be >= 1", s->csv.path);
    size_t k = 0;
    while (k < cap && !s->done) {
        int rc = fs_csv_next_line(&s->csv, &s->error);
        if (rc < 0)
            return native_fail(s, rc, err);
        if (rc == 0) {
            s->done = 1;
            break;
        }
        if (blank_or_comment(&s->csv))
            continue;
        rc = parse_row(s, &buf[k]);
        if (rc == 0) {
            k++;
        } else if (rc == FS_EINVAL && s->opts.lenient) {
            s->skipped++;
        } else {
            if (rc == FS_ENOMEM && s->opts.lenient)  /* split's message was not kept */
                fs_error_set(&s->error, rc, "%s:%llu: out of memory", s->csv.path,
                             (unsigned long long)s->csv.line_no);
            return native_fail(s, rc, err);
        }
    }
    *n = k;
    return 0;
}

static const char *native_tenant_name(void *state, int32_t i)
{
    return fs_strtab_name(&((native_t *)state)->tenants, i);
}

static int32_t native_tenant_count(void *state)
{
    return fs_strtab_count(&((native_t *)state)->tenants);
}

static const char *native_gpu_type_name(void *state, int32_t i)
{
    return fs_strtab_name(&((native_t *)state)->gpu_types, i);
}

static int32_t native_gpu_type_count(void *state)
{
    return fs_strtab_count(&((native_t *)state)->gpu_types);
}

static uint64_t native_skipped(void *state) { return ((native_t *)state)->skipped; }

static void native_destroy(void *state)
{
    native_t *s = state;
    if (!s)
        return;
    fs_csv_close(&s->csv);
    fs_strtab_release(&s->tenants);
    fs_strtab_release(&s->gpu_types);
    fs_free(s);
}

static const fs_source_ops_t native_ops = {
    .name = "native",
    .next = native_next,
    .tenant_name = native_tenant_name,
    .tenant_count = native_tenant_count,
    .gpu_type_name = native_gpu_type_name,
    .gpu_type_count = native_gpu_type_count,
    .skipped = native_skipped,
    .destroy = native_destroy,
};

int fs_native_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
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
    fs_source_t *src = fs_malloc(sizeof *src);
    native_t *s = fs_calloc(1, sizeof *s);
    if (!src || !s) {
        fs_free(src);
        fs_free(s);
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    }
    s->opts = o;
    fs_strtab_init(&s->tenants);
    fs_strtab_init(&s->gpu_types);
    int rc = fs_csv_take(&s->csv, o.take_csv, path, err);
    s->opts.take_csv = NULL;   /* taken (or not ours): never kept */
    if (rc) {
        fs_free(s);
        fs_free(src);
        return rc;
    }
    rc = parse_header(s, err);
    if (rc) {
        native_destroy(s);
        fs_free(src);
        return rc;
    }
    src->ops = &native_ops;
    src->state = s;
    *out = src;
    return 0;
}

/* ------------------------------------------------------------------ */
/* The writer                                                          */

#define WRITER_HEADER "id,submit,gpus,duration,estimate,tenant,gpu_type,priority,gpu_milli," \
                      "class,rec_start,rec_end,rec_state,single_node,mig_profile,gpu_util,gpu_mem\n"
#define WRITER_BUF ((size_t)256 * 1024)
/* Bytes a row needs besides its names: 16 fields of at most 24 bytes and
 * a MIG profile name (MIG_NAME_MAX). */
#define WRITER_ROW_MAX 440

struct fs_native_writer {
    gzFile gz;              /* gzip ("wb6") or transparent ("wbT") */
    char *path;             /* final name */
    char *tmp;              /* the temporary (fs_out), renamed at close */
    fs_out_t out;           /* the target, links followed */
    char *buf;              /* pending output */
    size_t len, cap;
    fs_time_t last_submit;
    uint64_t rows;
    int status;             /* sticky I/O error */
};

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static void writer_free(fs_native_writer_t *w)
{
    fs_free(w->path);
    fs_free(w->tmp);
    fs_free(w->buf);
    fs_out_release(&w->out);
    fs_free(w);
}

static int writer_flush(fs_native_writer_t *w, fs_error_t *err)
{
    if (w->len == 0)
        return 0;
    if (fs_io_gzwrite(w->gz, w->buf, (unsigned)w->len) != (int)w->len) {
        int zerr = Z_OK;
        const char *zmsg = gzerror(w->gz, &zerr);
        w->status = FS_EIO;
        return fs_error_set(err, FS_EIO, "cannot write %s: %s", w->tmp,
                            zerr == Z_ERRNO || zerr == Z_OK ? strerror(errno) : zmsg);
    }
    w->len = 0;
    return 0;
}

int fs_native_writer_open(const char *path, fs_native_writer_t **out, fs_error_t *err)
{
    *out = NULL;
    fs_native_writer_t *w = fs_calloc(1, sizeof *w);
    if (!w)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    /* the target's rules and the temporary's name: sim/fs_out.h */
    int prc = fs_out_prepare(&w->out, path, err);
    if (prc) {
        writer_free(w);
        return prc;
    }
    w->path = fs_strdup(path);
    w->tmp = fs_strdup(w->out.tmp);
    w->buf = fs_malloc(WRITER_BUF);
    if (!w->path || !w->tmp || !w->buf) {
        writer_free(w);
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    }
    w->cap = WRITER_BUF;
    errno = 0;
    w->gz = fs_io_gzopen(w->tmp, ends_with(path, ".gz") ? "wb6" : "wbT");
    if (!w->gz) {
        int e = errno;
        fs_error_set(err, e ? FS_EIO : FS_ENOMEM, "cannot create %s: %s", w->tmp,
                     e ? strerror(e) : "out of memory");
        writer_free(w);
        return e ? FS_EIO : FS_ENOMEM;
    }
    gzbuffer(w->gz, 64 * 1024);
    memcpy(w->buf, WRITER_HEADER, sizeof WRITER_HEADER - 1);
    w->len = sizeof WRITER_HEADER - 1;
    *out = w;
    return 0;
}

static char *put_u64(char *p, uint64_t v)
{
    char tmp[24];
    int k = 0;
    do {
        tmp[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (k)
        *p++ = tmp[--k];
    return p;
}

static char *put_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

/* us -> "S.FFFFFF": exact, no floating point. */
static char *put_time(char *p, fs_time_t us)
{
    p = put_u64(p, (uint64_t)(us / FS_US_PER_S));
    *p++ = '.';
    uint64_t f = (uint64_t)(us % FS_US_PER_S);
    for (uint64_t d = 100000; d; d /= 10) {
        *p++ = (char)('0' + f / d);
        f %= d;
    }
    return p;
}

/* A name, quoted when it holds a separator or a quote or would be trimmed. */
static char *put_name(char *p, const char *s, size_t n)
{
    int quote = memchr(s, ',', n) || memchr(s, '"', n) || s[0] == ' ' || s[n - 1] == ' ';
    if (!quote) {
        memcpy(p, s, n);
        return p + n;
    }
    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            *p++ = '"';
        *p++ = s[i];
    }
    *p++ = '"';
    return p;
}

#define MIG_NAME_MAX FS_MIGNAME_MAX

/* The profile name of a MIG code into buf (MIG_NAME_MAX bytes), or NULL
 * when it is not a code a name parses to (the reader could not read it
 * back). */
static const char *mig_name_of(int32_t code, char *buf)
{
    const char *s = fs_migname_of(code, buf, MIG_NAME_MAX);
    return s && *s && fs_migname_parse(s, strlen(s)) == code ? s : NULL;
}

static int writer_check(const fs_native_writer_t *w, const fs_job_t *j, const char *tenant,
                        const char *gpu_type, fs_error_t *err)
{
    const char *what = NULL;
    if (j->submit < 0 || j->submit > FS_TIME_MAX_INPUT)
        what = "submit outside 0..FS_TIME_MAX_INPUT";
    else if (j->submit < w->last_submit)
        what = "submit earlier than the previous job's (jobs must come sorted by submit)";
    else if (j->duration < 1 || j->duration > FS_TIME_MAX_INPUT)
        what = "duration outside 1 us..FS_TIME_MAX_INPUT";
    else if (j->estimate == 0 || j->estimate > FS_TIME_MAX_INPUT)
        what = "estimate neither unknown (< 0) nor in 1 us..FS_TIME_MAX_INPUT";
    else if (j->gpus < 1 || (uint64_t)j->gpus > MAX_GPUS)
        what = "gpus outside 1..2147483648";
    else if (!j->mig && (j->gpu_milli < 1 || j->gpu_milli > FS_GPU_MILLI_WHOLE ||
                         (j->gpu_milli != FS_GPU_MILLI_WHOLE && j->gpus > 1)))
        what = "gpu_milli outside 1..1000, or fractional with gpus > 1";
    else if (j->mig && !mig_name_of(j->mig, (char[MIG_NAME_MAX]){0}))
        what = "mig_profile not a known MIG profile code";
    else if (j->job_class < 0)
        what = "class < 0";
    else if (j->rec_start > FS_TIME_MAX_INPUT || j->rec_end > FS_TIME_MAX_INPUT)
        what = "recorded time beyond FS_TIME_MAX_INPUT";
    else if (j->rec_start >= 0 && j->rec_end >= 0 && j->rec_end < j->rec_start)
        what = "rec_end before rec_start";
    else if (j->rec_state > FS_JOB_REC_RUNNING)
        what = "rec_state not a known state";
    else if (j->rec_util > 101)
        what = "rec_util beyond 101 (100%)";
    else if (tenant && !fs_rdr_valid_name(tenant, strlen(tenant)))
        what = "tenant name not UTF-8 without control characters";
    else if (gpu_type && !fs_rdr_valid_name(gpu_type, strlen(gpu_type)))
        what = "gpu_type name not UTF-8 without control characters";
    else if (j->flags & FS_JOB_WITHDRAW)
        what = "cancelled before it started, read with workload.trace.cancelled: withdraw: the "
               "native format has no column for a withdrawal (it would replay as a job that "
               "runs): convert with cancelled skip or default";
    if (what)
        return fs_error_set(err, FS_EINVAL, "%s: job %llu: %s", w->path,
                            (unsigned long long)j->id, what);
    return 0;
}

int fs_native_writer_put(fs_native_writer_t *w, const fs_job_t *j, const char *tenant,
                         const char *gpu_type, fs_error_t *err)
{
    if (w->status)
        return fs_error_set(err, w->status, "%s: an earlier write failed", w->tmp);
    if (tenant && !*tenant)
        tenant = NULL;
    if (gpu_type && !*gpu_type)
        gpu_type = NULL;
    int rc = writer_check(w, j, tenant, gpu_type, err);
    if (rc)
        return rc;
    size_t tl = tenant ? strlen(tenant) : 0, gl = gpu_type ? strlen(gpu_type) : 0;
    size_t need = WRITER_ROW_MAX + 2 * (tl + gl);
    if (w->cap - w->len < need) {
        if ((rc = writer_flush(w, err)))
            return rc;
        if (fs_grow((void **)&w->buf, &w->cap, need, 1))
            return fs_error_set(err, FS_ENOMEM, "%s: out of memory", w->path);
    }
    char *p = w->buf + w->len;
    p = put_u64(p, j->id);
    *p++ = ',';
    p = put_time(p, j->submit);
    *p++ = ',';
    p = put_u64(p, j->gpus);
    *p++ = ',';
    p = put_time(p, j->duration);
    *p++ = ',';
    if (j->estimate > 0)
        p = put_time(p, j->estimate);
    *p++ = ',';
    if (tenant)
        p = put_name(p, tenant, tl);
    *p++ = ',';
    if (gpu_type)
        p = put_name(p, gpu_type, gl);
    *p++ = ',';
    p = put_i64(p, j->priority);
    *p++ = ',';
    if (!j->mig)   /* a MIG pod's share is its profile's (the reader's rule) */
        p = put_u64(p, j->gpu_milli);
    *p++ = ',';
    p = put_i64(p, j->job_class);
    *p++ = ',';
    if (j->rec_start >= 0)
        p = put_time(p, j->rec_start);
    *p++ = ',';
    if (j->rec_end >= 0)
        p = put_time(p, j->rec_end);
    *p++ = ',';
    const char *st = fs_job_rec_state_name(j->rec_state);
    size_t sl = strlen(st);
    memcpy(p, st, sl);
    p += sl;
    *p++ = ',';
    *p++ = (j->flags & FS_JOB_SINGLE_NODE) ? '1' : '0';
    *p++ = ',';
    if (j->mig) {
        char nb[MIG_NAME_MAX];
        const char *mn = mig_name_of(j->mig, nb);   /* writer_check: known */
        size_t ml = strlen(mn);
        memcpy(p, mn, ml);
        p += ml;
    }
    *p++ = ',';
    if (j->rec_util)    /* whole percents: read back to the same code */
        p += snprintf(p, 8, "%.2f", fs_job_util(j->rec_util));
    *p++ = ',';
    if (j->rec_fb)      /* steps of 0.25 or 1.5 GB: read back to the same code */
        p += snprintf(p, 8, "%.2f", fs_job_fb_gb(j->rec_fb));
    *p++ = '\n';
    w->len = (size_t)(p - w->buf);
    w->last_submit = j->submit;
    w->rows++;
    return 0;
}

int fs_native_writer_close(fs_native_writer_t *w, fs_error_t *err)
{
    int rc = w->status ? fs_error_set(err, w->status, "%s: an earlier write failed", w->tmp)
                       : writer_flush(w, err);
    int zrc = fs_io_gzclose_w(w->gz);
    w->gz = NULL;
    if (!rc && zrc != Z_OK)
        rc = fs_error_set(err, FS_EIO, "cannot write %s: %s", w->tmp,
                          zrc == Z_ERRNO ? strerror(errno) : "zlib error at close");
    if (!rc)
        rc = fs_out_commit(&w->out, fs_io_rename, err);
    if (rc)
        unlink(w->tmp);
    writer_free(w);
    return rc;
}

void fs_native_writer_abort(fs_native_writer_t *w)
{
    if (!w)
        return;
    if (w->gz)
        gzclose_w(w->gz);
    unlink(w->tmp);
    writer_free(w);
}
