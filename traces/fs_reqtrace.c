#include "fs_reqtrace.h"
#include "fs_csv.h"
#include "fs_rdr.h"
#include "../sim/fs_alloc.h"

#include <string.h>
#include <strings.h>
#include <sys/stat.h>

enum { F_AZURE = 0, F_BURSTGPT = 1 };

struct fs_reqtrace {
    fs_csv_t csv;
    int format;             /* F_AZURE, F_BURSTGPT (from the header) */
    size_t col[5];          /* time, prompt tokens, output tokens, prefix id, prefix tokens */
    int has_prefix;         /* the header has the two prefix columns */
    uint32_t max_prefix;    /* largest prefix id allowed (0: any; fs_reqtrace_limit_prefix) */
    size_t n_cols;          /* fields a row has */
    char *path;
    int repeat;
    int open;               /* csv is open */
    fs_time_t origin;       /* absolute time of the first row; -1 before it */
    fs_time_t last;         /* relative time of the last row read this pass */
    fs_time_t shift;        /* added to this pass's times (repeat) */
    uint64_t rows;          /* rows read this pass */
    int empty;              /* the file is empty (no header): no requests */
};

static const char *const cols[] = {"TIMESTAMP", "ContextTokens", "GeneratedTokens"};
/* BurstGPT (HPMLL/BurstGPT): Timestamp (s from 0:00 of its first day), Model,
 * Request tokens, Response tokens, Total tokens, Log Type; found by name. */
static const char *const bcols[] = {"Timestamp", "Request tokens", "Response tokens"};
/* Optional in either format, found by name, both or neither: a shared
 * prompt prefix's id (0: none) and its tokens (<= the prompt's). */
static const char *const pcols[] = {"PrefixId", "PrefixTokens"};

static const char *col_name(const fs_reqtrace_t *t, size_t k)
{
    if (k >= 3)
        return pcols[k - 3];
    return t->format == F_BURSTGPT ? bcols[k] : cols[k];
}

/* The 1-based character column where field i of the current (split) line
 * starts, for FILE:LINE:COL messages. */
static unsigned long long fcol(const fs_reqtrace_t *t, size_t i)
{
    const char *s = t->csv.fields[i].s;
    return (unsigned long long)(s - t->csv.line) + 1;
}

/* A message about field k (col[k]) of the current row: FILE:LINE:COL: field NAME: ... */
#define FIELD_ERR(t, err, k, fmt, ...)                                                         \
    fs_error_set(err, FS_EINVAL, "%s:%llu:%llu: field %s: " fmt, (t)->path,                   \
                 (unsigned long long)(t)->csv.line_no, fcol(t, (t)->col[k]), col_name(t, k),  \
                 __VA_ARGS__)

/* The prefix columns of the header (both, or neither: 0); FS_EINVAL when
 * only one is there or a name repeats. */
static int find_prefix(fs_reqtrace_t *t, fs_error_t *err)
{
    int found[2] = {0, 0};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < t->csv.n_fields; i++)
            if (strcasecmp(t->csv.fields[i].s, pcols[k]) == 0) {
                if (found[k])
                    return fs_error_set(err, FS_EINVAL, "%s:%llu:%llu: column %s appears twice",
                                        t->path, (unsigned long long)t->csv.line_no, fcol(t, i),
                                        pcols[k]);
                t->col[3 + k] = i;
                found[k] = 1;
            }
    if (found[0] != found[1])
        return fs_error_set(err, FS_EINVAL, "%s:%llu:%llu: column %s without %s (a prefix needs "
                            "its id and its tokens)", t->path, (unsigned long long)t->csv.line_no,
                            fcol(t, t->col[found[0] ? 3 : 4]), pcols[found[0] ? 0 : 1],
                            pcols[found[0] ? 1 : 0]);
    t->has_prefix = found[0];
    return 0;
}

static int open_pass(fs_reqtrace_t *t, fs_error_t *err)
{
    int rc = fs_csv_open(&t->csv, t->path, FS_CSV_BUF_DEFAULT, err);
    if (rc)
        return rc;
    t->open = 1;
    rc = fs_csv_next_line(&t->csv, err);
    if (rc == 0) {      /* no header, no request (fs_reqtrace_probe warns) */
        t->empty = 1;
        t->rows = 0;
        return 0;
    }
    if (rc < 0 || (rc != 1))
        return rc;
    if ((rc = fs_csv_split(&t->csv, ',', err)))
        return rc;
    t->n_cols = t->csv.n_fields;
    if ((rc = find_prefix(t, err)))
        return rc;
    int azure = t->csv.n_fields == (t->has_prefix ? 5u : 3u);
    for (size_t i = 0; i < 3 && azure; i++) {
        azure = strcasecmp(t->csv.fields[i].s, cols[i]) == 0;
        t->col[i] = i;
    }
    if (azure) {
        t->format = F_AZURE;
    } else {
        int found = 0;
        for (size_t k = 0; k < 3; k++)
            for (size_t i = 0; i < t->csv.n_fields; i++)
                if (strcasecmp(t->csv.fields[i].s, bcols[k]) == 0) {
                    t->col[k] = i;
                    found++;
                    break;
                }
        if (found != 3)
            return fs_error_set(err, FS_EINVAL, "%s:%llu:1: expected the header %s,%s,%s (an Azure "
                                "LLM inference trace; optionally with %s,%s) or a BurstGPT "
                                "header with %s, %s and %s",
                                t->path, (unsigned long long)t->csv.line_no, cols[0], cols[1],
                                cols[2], pcols[0], pcols[1], bcols[0], bcols[1], bcols[2]);
        t->format = F_BURSTGPT;
    }
    t->rows = 0;
    return 0;
}

int fs_reqtrace_open(const char *path, int repeat, fs_reqtrace_t **out, fs_error_t *err)
{
    *out = NULL;
    struct stat st;     /* bad input (exit 2) rather than a read error at "line 1" */
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return fs_error_set(err, FS_EINVAL, "%s: is a directory (expected a request trace: a CSV "
                            "file, plain or gzip, with the header %s,%s,%s or BurstGPT's)", path,
                            cols[0], cols[1], cols[2]);
    fs_reqtrace_t *t = fs_calloc(1, sizeof *t);
    if (!t || !(t->path = fs_strdup(path))) {
        fs_free(t);
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    }
    t->repeat = repeat;
    t->origin = -1;
    int rc = open_pass(t, err);
    if (rc) {
        fs_reqtrace_close(t);
        return rc;
    }
    *out = t;
    return 0;
}

static int field_u32(fs_reqtrace_t *t, size_t i, uint32_t *v, fs_error_t *err)
{
    uint64_t x;
    const fs_csv_field_t *f = &t->csv.fields[t->col[i]];
    if (fs_rdr_u64(f->s, f->len, &x) || x > UINT32_MAX)
        return FIELD_ERR(t, err, i, "expected %s (a whole number from 0 to 4294967295), got '%s'",
                         i == 3 ? "a prefix id" : "a token count", f->s);
    *v = (uint32_t)x;
    return 0;
}

int fs_reqtrace_next(fs_reqtrace_t *t, fs_request_t *r, fs_error_t *err)
{
    if (t->empty)
        return 0;
    for (;;) {
        int rc = fs_csv_next_line(&t->csv, err);
        if (rc < 0 || rc > 1)
            return rc;
        if (rc == 0) {
            if (!t->repeat || t->rows == 0)
                return 0;
            /* again, one period later: span plus the mean gap */
            fs_time_t span = t->last;
            fs_time_t gap = t->rows > 1 ? span / (fs_time_t)(t->rows - 1) : FS_US_PER_S;
            t->shift += span + (gap > 0 ? gap : 1);
            fs_csv_close(&t->csv);
            t->open = 0;
            if ((rc = open_pass(t, err)))
                return rc;
            continue;
        }
        if (t->csv.line[0] == '\0')
            continue;
        if ((rc = fs_csv_split(&t->csv, ',', err)))
            return rc;
        if (t->csv.n_fields != t->n_cols)
            return fs_error_set(err, FS_EINVAL, "%s:%llu:1: expected %zu fields (as the header), "
                                "got %zu", t->path, (unsigned long long)t->csv.line_no,
                                t->n_cols, t->csv.n_fields);
        fs_time_t at;
        const fs_csv_field_t *f = &t->csv.fields[t->col[0]];
        if (t->format == F_BURSTGPT) {  /* seconds from 0:00 of the first day: kept */
            if (fs_rdr_seconds(f->s, f->len, &at) || at < 0)
                return FIELD_ERR(t, err, 0, "expected seconds >= 0, got '%s'", f->s);
            t->origin = 0;
        } else {
            if (fs_rdr_datetime(f->s, f->len, &at))
                return FIELD_ERR(t, err, 0, "expected a date and time such as 2023-11-16 "
                                 "18:15:46.6805900, got '%s'", f->s);
            if (t->origin < 0)
                t->origin = at;
        }
        at -= t->origin;
        if (at < 0 || (t->rows > 0 && at < t->last))
            return FIELD_ERR(t, err, 0, "%s is earlier than the row before (requests must be in "
                             "time order)", f->s);
        if ((rc = field_u32(t, 1, &r->input, err)) || (rc = field_u32(t, 2, &r->output, err)))
            return rc;
        if (r->output == 0)
            r->output = 1;      /* the first token is always generated */
        r->prefix = r->prefix_len = 0;
        if (t->has_prefix) {
            if ((rc = field_u32(t, 3, &r->prefix, err)) || (rc = field_u32(t, 4, &r->prefix_len, err)))
                return rc;
            if (r->prefix_len > r->input)
                return FIELD_ERR(t, err, 4, "a prefix of %u tokens is longer than the prompt's "
                                 "%u (%s)", r->prefix_len, r->input, col_name(t, 1));
            if (r->prefix == 0 && r->prefix_len > 0)
                return FIELD_ERR(t, err, 4, "%u prefix tokens with prefix id 0 (0: no shared "
                                 "prefix; give it an id from 1)", r->prefix_len);
            if (t->max_prefix && r->prefix > t->max_prefix)
                return FIELD_ERR(t, err, 3, "prefix id %u is above %u, the number of ids "
                                 "(requests.prefix.ids: ids run from 1 to it)", r->prefix,
                                 t->max_prefix);
        }
        t->last = at;
        t->rows++;
        r->at = at + t->shift;
        return 1;
    }
}

void fs_reqtrace_close(fs_reqtrace_t *t)
{
    if (!t)
        return;
    if (t->open)
        fs_csv_close(&t->csv);
    fs_free(t->path);
    fs_free(t);
}

int fs_reqtrace_probe(const char *path, fs_error_t *err)
{
    fs_reqtrace_t *t;
    fs_request_t r;
    int rc = fs_reqtrace_open(path, 0, &t, err);
    if (rc)
        return rc;
    int empty = t->empty;
    rc = fs_reqtrace_next(t, &r, err);
    fs_reqtrace_close(t);
    if (rc == 0)
        fs_error_set(err, FS_EINVAL, "%s holds no requests (%s): the service gets no traffic "
                     "from it", path, empty ? "an empty file" : "only its header");
    return rc == 1 ? 0 : rc == 0 ? 1 : rc;
}

int fs_reqtrace_check_len(const char *path, uint64_t max_prompt, const char *what_prompt,
                          uint64_t max_kv, const char *what_kv, fs_error_t *err)
{
    fs_reqtrace_t *t;
    fs_request_t r;
    int rc = fs_reqtrace_open(path, 0, &t, err);
    if (rc)
        return rc;
    uint64_t kv_blocks = max_kv / 16;
    while ((rc = fs_reqtrace_next(t, &r, err)) == 1) {
        uint64_t need = ((uint64_t)r.input + r.output + 15) / 16;
        if (max_prompt && r.input > max_prompt) {
            FIELD_ERR(t, err, 1, "a prompt of %u tokens is longer than %s (%llu tokens)", r.input,
                      what_prompt, (unsigned long long)max_prompt);
            rc = 1;
            break;
        }
        if (max_kv && need > kv_blocks) {
            fs_error_set(err, FS_EINVAL, "%s:%llu:1: a request of %u prompt and %u output tokens "
                         "needs %llu KV blocks of 16 tokens, more than %s holds (%llu blocks)",
                         path, (unsigned long long)t->csv.line_no, r.input, r.output,
                         (unsigned long long)need, what_kv, (unsigned long long)kv_blocks);
            rc = 1;
            break;
        }
    }
    fs_reqtrace_close(t);
    return rc;
}

void fs_reqtrace_limit_prefix(fs_reqtrace_t *t, uint32_t max_id)
{
    t->max_prefix = max_id;
}

int fs_reqtrace_check_prefix(const char *path, uint32_t max_id, fs_error_t *err)
{
    fs_reqtrace_t *t;
    fs_request_t r;
    int rc = fs_reqtrace_open(path, 0, &t, err);
    if (rc)
        return rc;
    if (!t->empty && !t->has_prefix) {
        fs_error_set(err, FS_EINVAL, "%s:1:1: no columns %s and %s (requests.prefix.ids takes "
                     "each request's prefix id and tokens from them)", path, pcols[0], pcols[1]);
        fs_reqtrace_close(t);
        return FS_EINVAL;
    }
    t->max_prefix = max_id;
    while ((rc = fs_reqtrace_next(t, &r, err)) == 1)
        ;
    fs_reqtrace_close(t);
    return rc;
}
