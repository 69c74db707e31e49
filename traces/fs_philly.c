#include "fs_philly.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "../sim/fs_alloc.h"
#include "../sim/fs_io.h"
#include "fs_rdr.h"

#define STR_MAX 255         /* longest string value the reader keeps */
#define MAX_DEPTH 64        /* nesting of skipped values */
#define MAX_GPUS (UINT64_C(1) << 31)
#define READ_CHUNK ((unsigned)(256 * 1024))

enum { C_EOF = -1, C_ERR = -2 };

typedef struct philly {
    char *buf;              /* r->csv's buffer, reused */
    size_t cap, len, pos;
    int eof;                /* zlib has nothing more */
    int pending;            /* a read error, reported when the buffer is drained */
    char pending_what[160];
    int started, array, ended;
    uint64_t jobs;
} philly_t;

/* One job object as read. */
typedef struct pjob {
    char status[STR_MAX + 1], vc[STR_MAX + 1];
    size_t vc_len;
    fs_time_t submit;       /* -1 absent */
    int n_attempts, started, unended;
    uint64_t first_gpus;
    int first_gpus_set;
    fs_time_t first_start, last_end, run;
    int bad;                /* first value error (FS_EINVAL), reported after the object */
} pjob_t;

/* ---- the byte stream -------------------------------------------------- */

/* The next byte without consuming it; C_EOF; or C_ERR (r->error set). */
static int peekc(fs_rdr_t *r, philly_t *p)
{
    if (p->pos < p->len)
        return (unsigned char)p->buf[p->pos];
    if (!p->eof) {
        long k = fs_csv_read(&r->csv, p->buf, p->cap < READ_CHUNK ? p->cap : READ_CHUNK);
        if (r->csv.pending && !p->pending) {
            p->pending = r->csv.pending;
            snprintf(p->pending_what, sizeof p->pending_what, "%s", r->csv.pending_what);
        }
        if (k > 0) {
            p->len = (size_t)k;
            p->pos = 0;
        } else {
            p->eof = 1;
        }
        if (p->pending)
            p->eof = 1;
        if (p->pos < p->len)
            return (unsigned char)p->buf[p->pos];
    }
    if (p->pending) {
        fs_rdr_fatal(r, p->pending, "%s", p->pending_what);
        return C_ERR;
    }
    return C_EOF;
}

static void advance(fs_rdr_t *r, philly_t *p)
{
    if (p->buf[p->pos] == '\n')
        r->csv.line_no++;
    p->pos++;
}

static int skip_ws(fs_rdr_t *r, philly_t *p)
{
    for (;;) {
        int c = peekc(r, p);
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return c;
        advance(r, p);
    }
}

static int syntax(fs_rdr_t *r, const char *expected, int c)
{
    if (c == C_ERR)
        return r->error.code;
    char got[16];
    if (c == C_EOF)
        snprintf(got, sizeof got, "end of file");
    else if (c >= 0x20 && c < 0x7f)
        snprintf(got, sizeof got, "'%c'", c);
    else
        snprintf(got, sizeof got, "byte 0x%02x", (unsigned)c);
    return fs_rdr_fatal(r, FS_EINVAL, "JSON: expected %s (got %s)", expected, got);
}

/* Consumes `ch` after blanks. */
static int expect(fs_rdr_t *r, philly_t *p, char ch, const char *what)
{
    int c = skip_ws(r, p);
    if (c != ch)
        return syntax(r, what, c);
    advance(r, p);
    return 0;
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static int read_hex4(fs_rdr_t *r, philly_t *p, uint32_t *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int c = peekc(r, p), h = c >= 0 ? hexval(c) : -1;
        if (h < 0)
            return syntax(r, "4 hex digits after \\u", c);
        advance(r, p);
        *v = *v << 4 | (uint32_t)h;
    }
    return 0;
}

/* A string (the opening quote next).  Kept in out (NUL-terminated) when out
 * is given; *too_long is set when it did not fit (the rest is dropped). */
static int read_string(fs_rdr_t *r, philly_t *p, char *out, size_t *len, int *too_long)
{
    int c = skip_ws(r, p);
    if (c != '"')
        return syntax(r, "a string", c);
    advance(r, p);
    size_t n = 0;
    if (too_long)
        *too_long = 0;
    for (;;) {
        c = peekc(r, p);
        if (c < 0 || c == '\n')
            return syntax(r, "a closing '\"'", c);
        advance(r, p);
        if (c == '"')
            break;
        char tmp[4];
        size_t k = 1;
        tmp[0] = (char)c;
        if (c == '\\') {
            c = peekc(r, p);
            if (c < 0)
                return syntax(r, "an escape", c);
            advance(r, p);
            switch (c) {
            case '"': case '\\': case '/': tmp[0] = (char)c; break;
            case 'b': tmp[0] = '\b'; break;
            case 'f': tmp[0] = '\f'; break;
            case 'n': tmp[0] = '\n'; break;
            case 'r': tmp[0] = '\r'; break;
            case 't': tmp[0] = '\t'; break;
            case 'u': {
                uint32_t cp, lo;
                int rc = read_hex4(r, p, &cp);
                if (rc)
                    return rc;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    if ((rc = expect(r, p, '\\', "a low surrogate \\uDC00..\\uDFFF")) ||
                        (c = peekc(r, p)) != 'u')
                        return rc ? rc : syntax(r, "a low surrogate \\uDC00..\\uDFFF", c);
                    advance(r, p);
                    if ((rc = read_hex4(r, p, &lo)))
                        return rc;
                    if (lo < 0xDC00 || lo > 0xDFFF)
                        return fs_rdr_fatal(r, FS_EINVAL, "JSON: expected a low surrogate "
                                            "\\uDC00..\\uDFFF");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    return fs_rdr_fatal(r, FS_EINVAL, "JSON: unpaired low surrogate \\u%04X",
                                        (unsigned)cp);
                }
                k = put_utf8(tmp, cp);
                break;
            }
            default:
                return syntax(r, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)", c);
            }
        }
        if (out) {
            if (n + k <= STR_MAX) {
                memcpy(out + n, tmp, k);
                n += k;
            } else if (too_long) {
                *too_long = 1;
            }
        }
    }
    if (out) {
        out[n] = '\0';
        if (len)
            *len = n;
    }
    return 0;
}

static int read_word(fs_rdr_t *r, philly_t *p, const char *w)
{
    for (const char *q = w; *q; q++) {
        int c = peekc(r, p);
        if (c != *q)
            return syntax(r, "a JSON value", c);
        advance(r, p);
    }
    return 0;
}

/* Skips any value (bounded nesting). */
static int skip_value(fs_rdr_t *r, philly_t *p, int depth)
{
    if (depth > MAX_DEPTH)
        return fs_rdr_fatal(r, FS_EINVAL, "JSON: nesting deeper than %d", MAX_DEPTH);
    int c = skip_ws(r, p), rc;
    if (c == '"')
        return read_string(r, p, NULL, NULL, NULL);
    if (c == 't')
        return read_word(r, p, "true");
    if (c == 'f')
        return read_word(r, p, "false");
    if (c == 'n')
        return read_word(r, p, "null");
    if (c == '-' || (c >= '0' && c <= '9')) {
        while ((c = peekc(r, p)) >= 0 && (c == '-' || c == '+' || c == '.' || c == 'e' ||
                                          c == 'E' || (c >= '0' && c <= '9')))
            advance(r, p);
        return c == C_ERR ? r->error.code : 0;
    }
    if (c == '[' || c == '{') {
        int close = c == '[' ? ']' : '}';
        advance(r, p);
        if ((c = skip_ws(r, p)) == close) {
            advance(r, p);
            return 0;
        }
        for (;;) {
            if (close == '}') {
                if ((rc = read_string(r, p, NULL, NULL, NULL)) || (rc = expect(r, p, ':', "':'")))
                    return rc;
            }
            if ((rc = skip_value(r, p, depth + 1)))
                return rc;
            c = skip_ws(r, p);
            if (c == close) {
                advance(r, p);
                return 0;
            }
            if (c != ',')
                return syntax(r, close == ']' ? "',' or ']'" : "',' or '}'", c);
            advance(r, p);
        }
    }
    return syntax(r, "a JSON value", c);
}

/* ---- one job ------------------------------------------------------------ */

/* A value error: the first is kept (strict: message; lenient: reason) and
 * parsing goes on to the end of the object. */
static void bad_value(fs_rdr_t *r, pjob_t *j, const char *field, const char *expected,
                      const char *text)
{
    if (j->bad)
        return;
    j->bad = fs_rdr_field_error(r, field, expected, text, strlen(text));
}

/* A time string, null, or "None" (unknown: -1). */
static int read_time(fs_rdr_t *r, philly_t *p, pjob_t *j, const char *field, fs_time_t *out)
{
    *out = -1;
    int c = skip_ws(r, p);
    if (c == 'n')
        return read_word(r, p, "null");
    char s[STR_MAX + 1];
    size_t n;
    int rc = read_string(r, p, s, &n, NULL);
    if (rc)
        return rc;
    if (strcmp(s, "None") == 0 || n == 0)
        return 0;
    if (fs_rdr_datetime(s, n, out) || *out < 0) {
        *out = -1;
        bad_value(r, j, field, "a date and time YYYY-MM-DD HH:MM:SS, null or \"None\"", s);
    }
    return 0;
}

/* "gpus": [..] -> count of elements. */
static int read_gpus(fs_rdr_t *r, philly_t *p, uint64_t *count)
{
    int rc = expect(r, p, '[', "'[' (the gpus list)"), c;
    if (rc)
        return rc;
    *count = 0;
    if ((c = skip_ws(r, p)) == ']') {
        advance(r, p);
        return 0;
    }
    for (;;) {
        if ((rc = skip_value(r, p, 2)))
            return rc;
        (*count)++;
        c = skip_ws(r, p);
        if (c == ']') {
            advance(r, p);
            return 0;
        }
        if (c != ',')
            return syntax(r, "',' or ']'", c);
        advance(r, p);
    }
}

/* Iterates the members of an object: calls member(key) for each.  keys:
 * the keys member reads (NULL-terminated, at most 32): one given twice in
 * the same object is an error at its line (JSON leaves duplicates
 * undefined; merging them would change the job silently).  Keys that are
 * skipped are not tracked. */
typedef int (*member_fn)(fs_rdr_t *r, philly_t *p, void *ctx, const char *key);

static int read_object(fs_rdr_t *r, philly_t *p, void *ctx, member_fn member,
                       const char *const *keys)
{
    uint32_t seen = 0;
    int rc = expect(r, p, '{', "'{'"), c;
    if (rc)
        return rc;
    if ((c = skip_ws(r, p)) == '}') {
        advance(r, p);
        return 0;
    }
    for (;;) {
        char key[STR_MAX + 1];
        if ((rc = read_string(r, p, key, NULL, NULL)))
            return rc;
        for (unsigned i = 0; keys && keys[i] && i < 32; i++)
            if (strcmp(key, keys[i]) == 0) {
                if (seen & (UINT32_C(1) << i))
                    return fs_rdr_fatal(r, FS_EINVAL, "JSON: key \"%s\" given twice in one "
                                        "object", key);
                seen |= UINT32_C(1) << i;
            }
        if ((rc = expect(r, p, ':', "':'")) || (rc = member(r, p, ctx, key)))
            return rc;
        c = skip_ws(r, p);
        if (c == '}') {
            advance(r, p);
            return 0;
        }
        if (c != ',')
            return syntax(r, "',' or '}'", c);
        advance(r, p);
    }
}

static int read_array(fs_rdr_t *r, philly_t *p, void *ctx, member_fn each)
{
    int rc = expect(r, p, '[', "'['"), c;
    if (rc)
        return rc;
    if ((c = skip_ws(r, p)) == ']') {
        advance(r, p);
        return 0;
    }
    for (;;) {
        if ((rc = each(r, p, ctx, NULL)))
            return rc;
        c = skip_ws(r, p);
        if (c == ']') {
            advance(r, p);
            return 0;
        }
        if (c != ',')
            return syntax(r, "',' or ']'", c);
        advance(r, p);
    }
}

typedef struct attempt {
    pjob_t *job;
    fs_time_t start, end;
    uint64_t gpus;
} attempt_t;

static int detail_member(fs_rdr_t *r, philly_t *p, void *ctx, const char *key)
{
    attempt_t *a = ctx;
    if (strcmp(key, "gpus") == 0) {
        uint64_t n;
        int rc = read_gpus(r, p, &n);
        if (!rc)
            a->gpus += n;
        return rc;
    }
    return skip_value(r, p, 3);
}

static int detail_each(fs_rdr_t *r, philly_t *p, void *ctx, const char *key)
{
    (void)key;
    static const char *const keys[] = {"gpus", NULL};
    return read_object(r, p, ctx, detail_member, keys);
}

static int attempt_member(fs_rdr_t *r, philly_t *p, void *ctx, const char *key)
{
    attempt_t *a = ctx;
    if (strcmp(key, "start_time") == 0)
        return read_time(r, p, a->job, "start_time", &a->start);
    if (strcmp(key, "end_time") == 0)
        return read_time(r, p, a->job, "end_time", &a->end);
    if (strcmp(key, "detail") == 0)
        return read_array(r, p, a, detail_each);
    return skip_value(r, p, 2);
}

static int attempt_each(fs_rdr_t *r, philly_t *p, void *ctx, const char *key)
{
    (void)key;
    pjob_t *j = ctx;
    attempt_t a = {.job = j, .start = -1, .end = -1, .gpus = 0};
    static const char *const keys[] = {"start_time", "end_time", "detail", NULL};
    int rc = read_object(r, p, &a, attempt_member, keys);
    if (rc)
        return rc;
    j->n_attempts++;
    if (a.start < 0)
        return 0;   /* never started: no run time, no GPUs */
    if (a.end < 0) {
        j->unended = 1;
        return 0;
    }
    if (a.end < a.start) {
        bad_value(r, j, "end_time", "a time >= the attempt's start_time", "");
        return 0;
    }
    if (!j->started || a.start < j->first_start)
        j->first_start = a.start;
    if (a.end > j->last_end)
        j->last_end = a.end;
    j->started = 1;
    j->run += a.end - a.start;
    if (!j->first_gpus_set) {
        j->first_gpus = a.gpus;
        j->first_gpus_set = 1;
    }
    return 0;
}

static int job_member(fs_rdr_t *r, philly_t *p, void *ctx, const char *key)
{
    pjob_t *j = ctx;
    int too_long = 0, rc;
    if (strcmp(key, "status") == 0) {
        if ((rc = read_string(r, p, j->status, NULL, &too_long)))
            return rc;
    } else if (strcmp(key, "vc") == 0) {
        if ((rc = read_string(r, p, j->vc, &j->vc_len, &too_long)))
            return rc;
        if (too_long)
            bad_value(r, j, "vc", "a name of at most 255 bytes", j->vc);
        else if (!fs_rdr_valid_name(j->vc, j->vc_len))
            bad_value(r, j, "vc", "a UTF-8 name without control characters", j->vc);
    } else if (strcmp(key, "submitted_time") == 0) {
        return read_time(r, p, j, "submitted_time", &j->submit);
    } else if (strcmp(key, "attempts") == 0) {
        return read_array(r, p, j, attempt_each);
    } else {
        return skip_value(r, p, 1);
    }
    return 0;
}

static int pull(fs_rdr_t *r, fs_job_t *out)
{
    philly_t *p = r->fmt;
    int c, rc;
    if (!p->started) {
        c = skip_ws(r, p);
        if (c == C_ERR)
            return r->error.code;
        if (c == C_EOF)
            return fs_rdr_fatal(r, FS_EINVAL, "empty file (expected a JSON array of Philly jobs)");
        if (c == '[') {
            advance(r, p);
            p->array = 1;
            if ((c = skip_ws(r, p)) == ']') {
                advance(r, p);
                p->ended = 1;
            }
        } else if (c != '{') {
            return syntax(r, "'[' or '{' (Philly cluster_job_log JSON)", c);
        }
        p->started = 1;
    } else if (!p->ended) {
        c = skip_ws(r, p);
        if (p->array) {
            if (c == ']') {
                advance(r, p);
                p->ended = 1;
            } else if (c == ',') {
                advance(r, p);
            } else {
                return syntax(r, "',' or ']'", c);
            }
        } else if (c == ',') {
            advance(r, p);
        }
    }
    if (!p->ended && !p->array) {
        c = skip_ws(r, p);
        if (c == C_EOF)
            p->ended = 1;
        else if (c == C_ERR)
            return r->error.code;
    }
    if (p->ended) {
        c = skip_ws(r, p);
        if (c == C_ERR)
            return r->error.code;
        if (c != C_EOF)
            return syntax(r, "the end of the file after the job list", c);
        r->eof = 1;
        return 0;
    }
    pjob_t j;
    memset(&j, 0, sizeof j);
    j.submit = -1;
    j.first_start = j.last_end = -1;
    uint64_t line = r->csv.line_no;
    static const char *const keys[] = {"status", "vc", "submitted_time", "attempts", NULL};
    if ((rc = read_object(r, p, &j, job_member, keys)))
        return rc;
    p->jobs++;
    if (j.bad)
        return j.bad;
    /* Checks after the whole object, reported at its first line. */
    uint64_t end_line = r->csv.line_no;
    r->csv.line_no = line;
    int st = -1;
    if (strcmp(j.status, "Pass") == 0)
        st = FS_JOB_REC_COMPLETED;
    else if (strcmp(j.status, "Killed") == 0)
        st = FS_JOB_REC_KILLED;
    else if (strcmp(j.status, "Failed") == 0)
        st = FS_JOB_REC_FAILED;
    if (st < 0)
        rc = fs_rdr_field_error(r, "status", "one of Pass, Killed, Failed", j.status,
                                strlen(j.status));
    else if (j.submit < 0)
        rc = fs_rdr_field_error(r, "submitted_time", "a date and time YYYY-MM-DD HH:MM:SS", "", 0);
    else if (j.started && j.first_start < j.submit)
        rc = fs_rdr_row_error(r, "field attempts", "field attempts: expected start times >= "
                              "submitted_time");
    else if (j.unended)
        rc = fs_rdr_skip(r, "an attempt has no end_time");
    else if (!j.started)
        rc = fs_rdr_skip(r, "never started (no attempt with a start_time)");
    else if (j.first_gpus == 0 || j.first_gpus > MAX_GPUS)
        rc = j.first_gpus == 0 ? fs_rdr_skip(r, "no GPUs in the first attempt")
                               : fs_rdr_row_error(r, "field attempts", "field attempts: expected "
                                                  "at most 2^31 GPUs");
    else if (j.run == 0)
        rc = fs_rdr_skip(r, "run time 0");
    if (!rc) {
        fs_job_init(out);
        out->id = p->jobs;
        out->submit = j.submit;
        out->gpus = (uint32_t)j.first_gpus;
        out->duration = fs_rdr_scale(r, j.run);
        out->rec_start = j.first_start;
        out->rec_end = j.last_end;
        out->rec_state = st;
        rc = fs_rdr_intern(r, &r->tenants, j.vc, j.vc_len, &out->tenant);
    }
    r->csv.line_no = end_line;
    return rc;
}

static int header(fs_rdr_t *r, fs_error_t *err)
{
    philly_t *p = fs_calloc(1, sizeof *p);
    if (!p)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", r->csv.path);
    p->buf = r->csv.buf;
    p->cap = r->csv.cap;
    /* bytes the stream already holds (format auto's look at the start,
     * fs_csv_prefetch) are read first, then the stream goes on */
    p->pos = r->csv.pos;
    p->len = r->csv.len;
    if (r->csv.eof) {
        p->eof = 1;
        p->pending = r->csv.pending;
        snprintf(p->pending_what, sizeof p->pending_what, "%s", r->csv.pending_what);
    }
    r->csv.line_no = 1;
    r->fmt = p;
    r->fmt_free = fs_free;
    r->pull = pull;
    r->submit_field = "submitted_time";
    return 0;
}

static const fs_source_ops_t ops = FS_RDR_OPS("philly");

int fs_philly_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                   fs_error_t *err)
{
    return fs_rdr_open(&ops, path, opts, header, out, err);
}
