/*
 * fs_json: a small streaming JSON writer for the --json output of `fleetsim
 * run`, `versus`, `compare` and `plan` (docs/cli.md describes the
 * documents).  One document per command on stdout.  Numbers are written
 * with 17 significant digits (they read back as the same double), NaN and
 * infinities as null (JSON has no such numbers); strings are escaped per
 * RFC 8259.  Commas and nesting are tracked here; the caller says only
 * what comes next.
 */
#ifndef FS_JSON_H
#define FS_JSON_H

#include <stdint.h>
#include <stdio.h>

#define FS_JSON_MAX_DEPTH 32

typedef struct fs_json {
    FILE *f;
    int depth;
    int count[FS_JSON_MAX_DEPTH];   /* items written at each level */
    int after_key;                  /* a key was written: its value comes next */
} fs_json_t;

void fs_json_init(fs_json_t *j, FILE *f);
void fs_json_begin_object(fs_json_t *j);
void fs_json_end_object(fs_json_t *j);
void fs_json_begin_array(fs_json_t *j);
void fs_json_end_array(fs_json_t *j);
void fs_json_key(fs_json_t *j, const char *key);
void fs_json_str(fs_json_t *j, const char *s);    /* NULL: null */
void fs_json_num(fs_json_t *j, double v);         /* non-finite: null */
/* "key": [v[0], ..., v[n-1]] (non-finite values: null). */
void fs_json_num_array(fs_json_t *j, const char *key, const double *v, size_t n);
void fs_json_uint(fs_json_t *j, uint64_t v);
void fs_json_bool(fs_json_t *j, int v);
void fs_json_null(fs_json_t *j);
/* Ends the document (a newline). */
void fs_json_finish(fs_json_t *j);

#endif
