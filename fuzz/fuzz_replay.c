/*
 * fuzz_replay: replays saved fuzzing inputs without libFuzzer (a normal
 * CTest test, any compiler, any build type).
 *
 *   fuzz_replay DIR...
 *
 * Each DIR holds one folder per target ("scenario", "units",
 * "trace-FORMAT"), each holding input files; every file goes through
 * fs_fuzz_run(target, bytes), the entry point the libFuzzer targets use,
 * which aborts on any broken invariant (and ASan/UBSan, in a sanitized
 * build, on any memory error or undefined behaviour).  A folder named after
 * no known target (a trace format that was removed or renamed) is an error.
 * Prints one line per target with the number of inputs replayed.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs_fuzz.h"
#include "../sim/fs_alloc.h"

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 0, n = 0;
    uint8_t *buf = NULL;
    for (;;) {
        if (fs_grow((void **)&buf, &cap, n + 4096, 1)) {
            fs_free(buf);
            buf = NULL;
            break;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (n < cap)
            break;
    }
    fclose(f);
    *len = n;
    return buf;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names in dir, sorted (a stable replay order); caller frees. */
static char **list_dir(const char *dir, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    size_t cap = 0;
    char **v = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (fs_grow((void **)&v, &cap, *n + 1, sizeof *v))
            break;
        if (!(v[*n] = fs_strdup(e->d_name)))
            break;
        (*n)++;
    }
    closedir(d);
    if (v)
        qsort(v, *n, sizeof *v, cmp_str);
    return v;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fs_free(v[i]);
    fs_free(v);
}

static int replay_target(const char *root, const char *target)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", root, target);
    size_t n = 0, done = 0;
    char **files = list_dir(dir, &n);
    for (size_t i = 0; i < n; i++) {
        char path[4096 + 256];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        if (is_dir(path) || strcmp(files[i], "README.md") == 0)
            continue;
        size_t len = 0;
        uint8_t *data = slurp(path, &len);
        if (!data) {
            fprintf(stderr, "fuzz_replay: cannot read %s\n", path);
            free_list(files, n);
            return 1;
        }
        fprintf(stderr, "%s\n", path);   /* the last line names the culprit on a crash */
        if (fs_fuzz_run(target, data, len) < 0) {
            fprintf(stderr, "fuzz_replay: %s: no fuzz target '%s' (known: scenario, units, "
                    "reqtrace, kueue, trace-FORMAT for a format of traces/fs_trace.c)\n", dir, target);
            fs_free(data);
            free_list(files, n);
            return 1;
        }
        fs_free(data);
        done++;
    }
    free_list(files, n);
    printf("%-24s %5zu inputs replayed from %s\n", target, done, root);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fuzz_replay DIR...\n");
        return 2;
    }
    int bad = 0;
    for (int a = 1; a < argc; a++) {
        size_t n = 0;
        char **targets = list_dir(argv[a], &n);
        if (!targets) {
            fprintf(stderr, "fuzz_replay: cannot read %s\n", argv[a]);
            return 1;
        }
        for (size_t i = 0; i < n; i++) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[a], targets[i]);
            if (is_dir(p))
                bad |= replay_target(argv[a], targets[i]);
        }
        free_list(targets, n);
    }
    return bad;
}
