#include "fs_json.h"

#include <inttypes.h>
#include <math.h>

void fs_json_init(fs_json_t *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->count[0] = 0;
    j->after_key = 0;
}

/* A comma before every item but the first of its level (not after a key). */
static void item(fs_json_t *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->count[j->depth]++)
        fputc(',', j->f);
}

static void open_level(fs_json_t *j, char c)
{
    item(j);
    fputc(c, j->f);
    if (j->depth < FS_JSON_MAX_DEPTH - 1)
        j->depth++;
    j->count[j->depth] = 0;
}

static void close_level(fs_json_t *j, char c)
{
    if (j->depth > 0)
        j->depth--;
    fputc(c, j->f);
}

void fs_json_begin_object(fs_json_t *j)
{
    open_level(j, '{');
}

void fs_json_end_object(fs_json_t *j)
{
    close_level(j, '}');
}

void fs_json_begin_array(fs_json_t *j)
{
    open_level(j, '[');
}

void fs_json_end_array(fs_json_t *j)
{
    close_level(j, ']');
}

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

void fs_json_key(fs_json_t *j, const char *key)
{
    item(j);
    put_string(j->f, key);
    fputc(':', j->f);
    j->after_key = 1;
}

void fs_json_str(fs_json_t *j, const char *s)
{
    item(j);
    if (s)
        put_string(j->f, s);
    else
        fputs("null", j->f);
}

void fs_json_num(fs_json_t *j, double v)
{
    item(j);
    if (isfinite(v))
        fprintf(j->f, "%.17g", v);
    else
        fputs("null", j->f);
}

void fs_json_num_array(fs_json_t *j, const char *key, const double *v, size_t n)
{
    fs_json_key(j, key);
    fs_json_begin_array(j);
    for (size_t i = 0; i < n; i++)
        fs_json_num(j, v[i]);
    fs_json_end_array(j);
}

void fs_json_uint(fs_json_t *j, uint64_t v)
{
    item(j);
    fprintf(j->f, "%" PRIu64, v);
}

void fs_json_bool(fs_json_t *j, int v)
{
    item(j);
    fputs(v ? "true" : "false", j->f);
}

void fs_json_null(fs_json_t *j)
{
    item(j);
    fputs("null", j->f);
}

void fs_json_finish(fs_json_t *j)
{
    fputc('\n', j->f);
    fflush(j->f);
}
