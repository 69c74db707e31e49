#include "fs_detect.h"

#include <stdio.h>
#include <string.h>

#include "fs_csv.h"
#include "fs_native.h"
#include "../sim/fs_alloc.h"
#include "fs_rdr.h"

static int has(const fs_csv_t *c, const char *name)
{
    for (size_t i = 0; i < c->n_fields; i++)
        if (strcmp(c->fields[i].s, name) == 0)
            return 1;
    return 0;
}

static int all_numbers(const fs_csv_t *c)
{
    for (size_t i = 0; i < c->n_fields; i++) {
        fs_time_t t;
        if (fs_rdr_seconds(c->fields[i].s, c->fields[i].len, &t))
            return 0;
    }
    return 1;
}

static int decide(fs_csv_t *c, const char **format, char *why, size_t n, fs_error_t *err)
{
    const char *l = c->line;
    size_t i = 0;
    while (i < c->line_len && (l[i] == ' ' || l[i] == '\t'))
        i++;
    char shown[128];
    fs_rdr_show(shown, sizeof shown, l, c->line_len);
    if (l[i] == ';') {
        *format = "swf";
        snprintf(why, n, "line %llu is a ';' header comment", (unsigned long long)c->line_no);
        return 0;
    }
    if (l[i] == '[' || l[i] == '{') {
        *format = "philly";
        snprintf(why, n, "line %llu starts JSON ('%c')", (unsigned long long)c->line_no, l[i]);
        return 0;
    }
    /* sacct -P: a '|'-separated header naming JobID, Submit and AllocTRES */
    if (c->line_len > 6 && memchr(l, '|', c->line_len) && strncmp(l + i, "JobID", 5) == 0) {
        char hdr[4096];
        size_t hl = c->line_len < sizeof hdr - 1 ? c->line_len : sizeof hdr - 1;
        memcpy(hdr, l, hl);
        hdr[hl] = '\0';
        if (strstr(hdr, "|Submit") && strstr(hdr, "AllocTRES")) {
            *format = "sacct";
            snprintf(why, n, "header '%.60s%s' (sacct -P)", hdr, hl > 60 ? "..." : "");
            return 0;
        }
    }
    /* A comma-separated header.  Split a copy: the line is needed again. */
    char copy[4096];
    size_t len = c->line_len < sizeof copy - 1 ? c->line_len : sizeof copy - 1;
    memcpy(copy, l, len);
    copy[len] = '\0';
    int rc = fs_csv_split(c, ',', NULL);
    if (rc == FS_ENOMEM)
        return fs_error_set(err, rc, "%s: out of memory", c->path);
    if (rc == 0 && c->n_fields > 1) {
        if (has(c, "id") && has(c, "submit") && has(c, "gpus") && has(c, "duration"))
            *format = "native";
        else if (has(c, "job_id") && has(c, "num_gpu") && has(c, "submit_time") &&
                 has(c, "duration"))
            *format = "tiresias";
        else if (has(c, "name") && has(c, "num_gpu") && has(c, "gpu_milli"))
            *format = "openb";
        else if (has(c, "job_id") && has(c, "gpu_num") && has(c, "state") &&
                 has(c, "submit_time"))
            *format = has(c, "vc") ? "helios" : "acme";
        if (*format) {
            snprintf(why, n, "header '%.60s%s'", copy, len > 60 ? "..." : "");
            return 0;
        }
        static const char *const pai_states[] = {"Terminated", "Failed", "Running", "Waiting",
                                                 "Interrupted"};
        uint64_t u;
        if (c->n_fields == 10 && fs_rdr_u64(c->fields[2].s, c->fields[2].len, &u) == 0)
            for (size_t k = 0; k < 5; k++)
                if (strcmp(c->fields[3].s, pai_states[k]) == 0) {
                    *format = "pai";
                    snprintf(why, n, "line %llu: 10 fields with a task status '%s'",
                             (unsigned long long)c->line_no, pai_states[k]);
                    return 0;
                }
    }
    memcpy(c->line, copy, len + 1);
    c->line_len = len;
    if (fs_csv_split_blank(c, NULL) == 0 && c->n_fields == 18 && all_numbers(c)) {
        *format = "swf";
        snprintf(why, n, "line %llu has 18 blank-separated numbers",
                 (unsigned long long)c->line_no);
        return 0;
    }
    return fs_error_set(err, FS_EINVAL, "%s:%llu: format auto: cannot tell the format from "
                        "'%s' (known headers: native, tiresias, openb, helios, acme, sacct -P; or SWF, PAI "
                        "task rows); "
                        "set workload.trace.format", c->path, (unsigned long long)c->line_no,
                        shown);
}

/* The lines are read from a copy of the chunk fs_csv_prefetch read (a view
 * that never reads), so that c is not consumed.  A first non-comment line
 * that does not end inside the chunk is judged on what it holds (a JSON log
 * written on one line starts with '[' or '{'). */
int fs_detect_csv(fs_csv_t *c, const char **format, char *why, size_t why_len,
                  fs_error_t *err)
{
    int rc = fs_csv_prefetch(c, err);
    if (rc)
        return rc;
    fs_csv_t v;
    memset(&v, 0, sizeof v);
    v.path = c->path;
    v.cap = c->len + 1;
    v.len = c->len;
    v.eof = 1;
    v.pending = c->pending;
    memcpy(v.pending_what, c->pending_what, sizeof v.pending_what);
    if (!(v.buf = fs_malloc(v.cap)))
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", c->path);
    memcpy(v.buf, c->buf, c->len);
    for (;;) {
        rc = fs_csv_next_line(&v, err);
        if (rc <= 0)
            break;
        if (v.line_len && v.line[0] == '#')
            continue;
        size_t i = 0;
        while (i < v.line_len && (v.line[i] == ' ' || v.line[i] == '\t'))
            i++;
        if (i < v.line_len)
            break;
    }
    if (rc == 0 && c->pending)   /* an empty start, then damage: the reader's error */
        rc = fs_error_set(err, c->pending, "%s:%llu: %s", c->path,
                          (unsigned long long)v.line_no + 1, c->pending_what);
    else if (rc == 0)
        rc = fs_error_set(err, FS_EINVAL, "%s: format auto: %s", c->path,
                          c->eof ? "empty file" : "no data line in the first 256 KiB");
    else if (rc > 0)
        rc = decide(&v, format, why, why_len, err);
    v.path = NULL;          /* c's */
    fs_csv_close(&v);
    return rc;
}

int fs_detect_format(const char *path, const char **format, char *why, size_t why_len,
                     fs_error_t *err)
{
    char whybuf[160];
    if (!why) {
        why = whybuf;
        why_len = sizeof whybuf;
    }
    *format = NULL;
    fs_csv_t c;
    int rc = fs_csv_open(&c, path, 0, err);
    if (rc)
        return rc;
    rc = fs_detect_csv(&c, format, why, why_len, err);
    fs_csv_close(&c);
    return rc;
}
