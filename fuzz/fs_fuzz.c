/*
 * fs_fuzz: fuzzing entry points (see fs_fuzz.h).  Every check that fails
 * calls fuzz_bug, which prints what broke and aborts, so that libFuzzer
 * saves the input and the replay test fails on it.
 */
#define _GNU_SOURCE  /* memfd_create */

#include "fs_fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../models/fs_config.h"
#include "../scenarios/fs_scenario.h"
#include "../models/fs_mig.h"
#include "../scenarios/fs_units.h"
#include "../sim/fs_alloc.h"
#include "../traces/fs_trace.h"
#include "../traces/fs_reqtrace.h"
#include "../scenarios/fs_kueue_yaml.h"
#include "../analysis/fs_tsdb.h"

#define FUZZ_BATCH 7   /* small on purpose: many batch boundaries */

__attribute__((noreturn, format(printf, 1, 2)))
static void fuzz_bug(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fs_fuzz: invariant broken: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

static void check_no_leak(int64_t live0, const char *what)
{
    int64_t live = fs_alloc_live();
    if (live != live0)
        fuzz_bug("%s: %lld fs_alloc blocks leaked", what, (long long)(live - live0));
}

static void check_error(int rc, const fs_error_t *err, const char *what)
{
    if (rc != FS_EINVAL && rc != FS_ELIMIT && rc != FS_ENOMEM && rc != FS_EIO)
        fuzz_bug("%s: unexpected status %d (%s)", what, rc, fs_error_name(rc));
    if (!err->msg[0])
        fuzz_bug("%s: failed (%s) without a message", what, fs_error_name(rc));
    if (strchr(err->msg, '\n'))
        fuzz_bug("%s: multi-line error message: %s", what, err->msg);
}

/* ---- scenario ---------------------------------------------------------- */

#define MAX_OVERRIDES 16

int fs_fuzz_scenario(const uint8_t *data, size_t size)
{
    int64_t live0 = fs_alloc_live();
    /* One copy, NUL-terminated: YAML, then (after a NUL) the overrides,
     * one per line, cut in place. */
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    const char *sets[MAX_OVERRIDES];
    size_t n_sets = 0;
    size_t ylen = strlen(buf);
    if (ylen < size) {
        char *p = buf + ylen + 1, *end = buf + size;
        while (p < end && n_sets < MAX_OVERRIDES) {
            char *nl = memchr(p, '\n', (size_t)(end - p));
            char *e = nl ? nl : end;
            *e = '\0';
            if (strchr(p, '=') && !memchr(p, '\0', (size_t)(e - p)))
                sets[n_sets++] = p;
            p = e + 1;
        }
    }

    fs_config_t cfg;
    fs_error_t err;
    int rc = fs_scenario_load_string("<fuzz>", buf, sets, n_sets, &cfg, &err);
    if (rc) {
        check_error(rc, &err, "scenario load");
    } else {
        /* The contract: dump -> load gives back the same config, so the
         * dump of the reloaded config is the same text. */
        char *d1 = fs_scenario_dump(&cfg);
        if (d1) {
            fs_config_t cfg2;
            int rc2 = fs_scenario_load_string("<dump>", d1, NULL, 0, &cfg2, &err);
            if (rc2 == FS_ENOMEM) {
                /* nothing to compare */
            } else if (rc2) {
                fuzz_bug("the dump of a valid scenario does not load: %s\n--- dump:\n%s",
                         err.msg, d1);
            } else {
                char *d2 = fs_scenario_dump(&cfg2);
                if (d2 && strcmp(d1, d2) != 0)
                    fuzz_bug("dump -> load -> dump differs\n--- first:\n%s\n--- second:\n%s",
                             d1, d2);
                fs_free(d2);
                fs_config_release(&cfg2);
            }
            fs_free(d1);
        }
        fs_config_release(&cfg);
    }
    free(buf);
    check_no_leak(live0, "scenario");
    return 0;
}

/* ---- units -------------------------------------------------------------- */

int fs_fuzz_units(const uint8_t *data, size_t size)
{
    char s[256];
    size_t n = size < sizeof s - 1 ? size : sizeof s - 1;
    memcpy(s, data, n);
    s[n] = '\0';
    fs_error_t err;
    char buf[FS_UNITS_BUF];

    fs_time_t t = -1;
    int rc = fs_units_parse_duration(s, &t, &err);
    if (rc) {
        check_error(rc, &err, "duration");
    } else {
        if (t < 0 || t > FS_TIME_MAX_INPUT)
            fuzz_bug("duration '%s' parsed to %lld us, outside 0..FS_TIME_MAX_INPUT", s,
                     (long long)t);
        fs_time_t t2 = -1;
        fs_units_format_duration(t, buf, sizeof buf);
        if (fs_units_parse_duration(buf, &t2, &err) || t2 != t)
            fuzz_bug("duration %lld us formats as '%s' which parses to %lld", (long long)t, buf,
                     (long long)t2);
    }

    double r = -1;
    rc = fs_units_parse_rate(s, &r, &err);
    if (rc) {
        check_error(rc, &err, "rate");
    } else {
        if (!(r >= 0) || r > 1.7976931348623157e308)
            fuzz_bug("rate '%s' parsed to %g", s, r);
        double r2 = -1;
        fs_units_format_rate(r, buf, sizeof buf);
        if (fs_units_parse_rate(buf, &r2, &err) || r2 != r)
            fuzz_bug("rate %.17g formats as '%s' which parses to %.17g", r, buf, r2);
    }

    double x = 0;
    rc = fs_units_parse_number(s, &x, &err);
    if (rc) {
        check_error(rc, &err, "number");
    } else {
        if (x != x || x - x != 0)
            fuzz_bug("number '%s' parsed to %g", s, x);
        double x2 = 0;
        fs_units_format_number(x, buf, sizeof buf);
        if (fs_units_parse_number(buf, &x2, &err) || x2 != x)
            fuzz_bug("number %.17g formats as '%s' which parses to %.17g", x, buf, x2);
    }
    return 0;
}

/* ---- traces ------------------------------------------------------------- */

/* An anonymous in-memory file holding the input (a temporary file where
 * memfd_create is missing), reopened by path like any trace. */
static int input_file(const uint8_t *data, size_t size, char *path, size_t cap)
{
    int fd = memfd_create("fs_fuzz", MFD_CLOEXEC);
    if (fd < 0) {
        char tmpl[] = "/tmp/fs_fuzz_XXXXXX";
        fd = mkstemp(tmpl);
        if (fd < 0)
            return -1;
        unlink(tmpl);
    }
    size_t off = 0;
    while (off < size) {
        ssize_t k = write(fd, data + off, size - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)k;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

static void drain(const char *format, const char *path, int lenient)
{
    fs_trace_opts_t opts;
    fs_trace_opts_init(&opts);
    opts.mig_profile = fs_mig_code_find;
    opts.lenient = lenient;
    fs_source_t *src = NULL;
    fs_error_t err;
    fs_error_clear(&err);
    int rc = fs_trace_open(format, path, &opts, &src, &err);
    if (rc) {
        check_error(rc, &err, "trace open");
        if (src)
            fuzz_bug("%s: open failed but returned a source", format);
        return;
    }
    fs_job_t buf[FUZZ_BATCH];
    fs_time_t last = 0;
    uint64_t rows = 0;
    for (;;) {
        size_t n = 0;
        fs_error_clear(&err);
        rc = fs_source_next(src, buf, FUZZ_BATCH, &n, &err);
        if (rc) {
            check_error(rc, &err, "trace next");
            /* Errors are sticky: the next call fails the same way. */
            size_t n2 = 1;
            fs_error_t err2;
            fs_error_clear(&err2);
            if (fs_source_next(src, buf, FUZZ_BATCH, &n2, &err2) == 0 && n2 > 0)
                fuzz_bug("%s: the stream went on after an error (%s)", format, err.msg);
            break;
        }
        if (n > FUZZ_BATCH)
            fuzz_bug("%s: %zu jobs in a batch of %d", format, n, FUZZ_BATCH);
        if (n == 0)
            break;
        int32_t nt = fs_source_tenant_count(src), ng = fs_source_gpu_type_count(src);
        for (size_t i = 0; i < n; i++) {
            const fs_job_t *j = &buf[i];
            rows++;
            if (j->submit < last || j->submit > FS_TIME_MAX_INPUT)
                fuzz_bug("%s: job %llu (row %llu): submit %lld after %lld or beyond the limit",
                         format, (unsigned long long)j->id, (unsigned long long)rows,
                         (long long)j->submit, (long long)last);
            last = j->submit;
            if (j->duration < 1 || j->duration > FS_TIME_MAX_INPUT)
                fuzz_bug("%s: job %llu: duration %lld us", format, (unsigned long long)j->id,
                         (long long)j->duration);
            if (j->estimate != -1 && (j->estimate < 1 || j->estimate > FS_TIME_MAX_INPUT))
                fuzz_bug("%s: job %llu: estimate %lld us", format, (unsigned long long)j->id,
                         (long long)j->estimate);
            if (j->gpus < 1 || j->gpu_milli < 1 || j->gpu_milli > FS_GPU_MILLI_WHOLE ||
                (j->gpu_milli != FS_GPU_MILLI_WHOLE && j->gpus != 1))
                fuzz_bug("%s: job %llu: gpus %u gpu_milli %u", format,
                         (unsigned long long)j->id, j->gpus, j->gpu_milli);
            if (j->tenant < -1 || j->tenant >= nt ||
                (j->tenant >= 0 && !fs_source_tenant_name(src, j->tenant)))
                fuzz_bug("%s: job %llu: tenant %d of %d", format, (unsigned long long)j->id,
                         j->tenant, nt);
            if (j->gpu_type < -1 || j->gpu_type >= ng ||
                (j->gpu_type >= 0 && !fs_source_gpu_type_name(src, j->gpu_type)))
                fuzz_bug("%s: job %llu: gpu_type %d of %d", format, (unsigned long long)j->id,
                         j->gpu_type, ng);
            if (j->rec_state > FS_JOB_REC_RUNNING)
                fuzz_bug("%s: job %llu: rec_state %d", format, (unsigned long long)j->id,
                         j->rec_state);
        }
    }
    /* (no check on fs_source_skipped: options such as cpu_only = skip make
     * strict readers skip and count rows too, as fs_source.h says) */
    fs_source_destroy(src);
}

/* pai with NUL bytes in the input: a directory of the task, job and
 * instance tables (the parts before, between and after the first two NULs;
 * an empty part leaves its table out), read as fs_pai.h describes. */
static const char *const pai_tables[] = {"pai_task_table.csv", "pai_job_table.csv",
                                         "pai_instance_table.csv"};

static int pai_dir(const uint8_t *data, size_t size, char *dir)
{
    strcpy(dir, "/tmp/fs_fuzz_pai_XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    size_t at = 0;
    for (size_t t = 0; t < 3; t++) {
        const uint8_t *end = at < size ? memchr(data + at, 0, size - at) : NULL;
        size_t len = t == 2 || !end ? size - at : (size_t)(end - (data + at));
        if (at > size)
            len = 0;
        if (len) {
            char f[128];
            snprintf(f, sizeof f, "%s/%s", dir, pai_tables[t]);
            FILE *fp = fopen(f, "wb");
            if (fp) {
                fwrite(data + at, 1, len, fp);
                fclose(fp);
            }
        }
        at += len + 1;
    }
    return 0;
}

static void pai_dir_remove(const char *dir)
{
    for (size_t t = 0; t < 3; t++) {
        char f[128];
        snprintf(f, sizeof f, "%s/%s", dir, pai_tables[t]);
        unlink(f);
    }
    rmdir(dir);
}

int fs_fuzz_trace(const char *format, const uint8_t *data, size_t size)
{
    int64_t live0 = fs_alloc_live();
    if (strcmp(format, "pai") == 0 && size && memchr(data, 0, size)) {
        char dir[64];
        if (pai_dir(data, size, dir) != 0)
            return 0;
        drain(format, dir, 0);
        check_no_leak(live0, "trace (strict)");
        drain(format, dir, 1);
        check_no_leak(live0, "trace (lenient)");
        pai_dir_remove(dir);
        return 0;
    }
    char path[64];
    int fd = input_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    drain(format, path, 0);
    check_no_leak(live0, "trace (strict)");
    drain(format, path, 1);
    check_no_leak(live0, "trace (lenient)");
    close(fd);
    return 0;
}

/* ---- request traces ------------------------------------------------------ */

#define REQ_MAX 100000      /* requests read per pass (an input holds fewer rows) */

/* Reads a request trace to its end (repeat 0) or for 2 periods plus a row
 * (repeat 1); returns the rows of one pass, or -1 when it failed. */
static long req_drain(const char *path, int repeat, long rows_once)
{
    fs_reqtrace_t *t = NULL;
    fs_error_t err;
    fs_error_clear(&err);
    int rc = fs_reqtrace_open(path, repeat, &t, &err);
    if (rc) {
        check_error(rc, &err, "request trace open");
        if (t)
            fuzz_bug("request trace: open failed but returned a reader");
        return -1;
    }
    long n = 0, limit = repeat ? 2 * rows_once + 1 : REQ_MAX;
    fs_time_t last = 0;
    fs_request_t r;
    for (; n < limit; n++) {
        fs_error_clear(&err);
        rc = fs_reqtrace_next(t, &r, &err);
        if (rc == 0)
            break;
        if (rc != 1) {
            check_error(rc, &err, "request trace next");
            n = -1;
            break;
        }
        if (r.at < 0 || r.at < last)
            fuzz_bug("request trace: request %ld at %lld us, after %lld", n, (long long)r.at,
                     (long long)last);
        if (r.output < 1)
            fuzz_bug("request trace: request %ld generates %u tokens", n, r.output);
        last = r.at;
    }
    if (repeat && n >= 0 && n < limit)
        fuzz_bug("request trace: repeat ended after %ld requests (%ld per pass)", n, rows_once);
    fs_reqtrace_close(t);
    return n;
}

int fs_fuzz_reqtrace(const uint8_t *data, size_t size)
{
    int64_t live0 = fs_alloc_live();
    char path[64];
    int fd = input_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    long rows = req_drain(path, 0, 0);
    check_no_leak(live0, "request trace");
    if (rows > 0 && rows < REQ_MAX) {   /* a whole file read: repeated, it goes on */
        req_drain(path, 1, rows);
        check_no_leak(live0, "request trace (repeat)");
    }
    close(fd);
    return 0;
}

/* ---- Kueue manifests --------------------------------------------------------- */

int fs_fuzz_kueue(const uint8_t *data, size_t size)
{
    int64_t live0 = fs_alloc_live();
    fs_pool_cfg_t pools[2] = {{.name = "a", .gpu = "A100"}, {.name = "h", .gpu = "H100"}};
    fs_cluster_cfg_t cl = {.pools = pools, .n_pools = 2};
    for (int with_cluster = 0; with_cluster < 2; with_cluster++) {
        fs_config_t c;
        memset(&c, 0, sizeof c);
        fs_error_t err;
        fs_error_clear(&err);
        int rc = fs_kueue_manifest_parse_for("m.yaml", (const char *)data, size,
                                             with_cluster ? &cl : NULL, &c.scheduler.kueue, &err);
        if (rc) {
            check_error(rc, &err, "kueue manifest");
        } else if (with_cluster) {  /* and the checks of the whole block */
            char kpath[200];
            fs_error_clear(&err);
            rc = fs_kueue_cfg_resolve(&c.scheduler.kueue, &cl, kpath, sizeof kpath, &err);
            if (rc)
                check_error(rc, &err, "kueue resolve");
        }
        fs_config_release(&c);   /* the key table frees what the manifest added */
        check_no_leak(live0, "kueue manifest");
    }
    return 0;
}

/* ---- tsdb (the block writer of fleetsim metrics --tsdb) ------------------ */

/* rm -r of the writer's test directory */
static void fuzz_rmtree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                char c[4096];
                snprintf(c, sizeof c, "%s/%s", path, e->d_name);
                fuzz_rmtree(c);
            }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

int fs_fuzz_tsdb(const uint8_t *data, size_t size)
{
    int64_t live0 = fs_alloc_live();
    /* the XOR decoder on the raw bytes: never past them */
    int64_t t[512];
    double v[512], v2[512];
    int64_t t2[512];
    size_t n = 0;
    (void)fs_tsdb_xor_decode(data, size, t, v, 512, &n);
    /* series from the bytes: per series a label value up to '\n' (odd bytes
     * and all), a sample count (a byte: 0 is an empty run, 1 a one-sample
     * series), then per sample a 2-byte time step (ms) and 8 value bytes */
    char dir[] = "/tmp/fs-fuzz-tsdb-XXXXXX";
    if (!mkdtemp(dir))
        return 0;
    char target[64];
    snprintf(target, sizeof target, "%s/db", dir);
    fs_tsdb_t *w;
    fs_error_t err;
    if (fs_tsdb_open(&w, target, FS_TSDB_RANGE_2H, &err) != 0)
        fuzz_bug("tsdb: open: %s", err.msg);
    size_t at = 0, added = 0;
    int rc = 0;
    uint64_t want_samples = 0;
    for (int s = 0; s < 16 && at < size && !rc; s++) {
        char val[80];
        size_t k = 0;
        while (at < size && data[at] != '\n' && k + 1 < sizeof val)
            val[k++] = (char)data[at++];
        val[k] = '\0';
        at++;
        size_t m = at < size ? data[at++] : 0;
        int64_t now = 0;
        for (n = 0; n < m && n < 512 && at + 2 <= size; n++) {
            now += 1 + (data[at] << 8 | data[at + 1]);
            at += 2;
            uint64_t b = 0;
            for (int i = 0; i < 8 && at < size; i++)
                b = b << 8 | data[at++];
            t[n] = now;
            memcpy(&v[n], &b, sizeof b);
        }
        /* chunks round trip bit for bit */
        if (n) {
            uint8_t buf[16384];
            size_t len = fs_tsdb_xor_encode(t, v, n, buf, sizeof buf), got = 0;
            if (!len || len > fs_tsdb_xor_bound(n) ||
                fs_tsdb_xor_decode(buf, len, t2, v2, 512, &got) || got != n)
                fuzz_bug("tsdb: XOR round trip of %zu samples", n);
            for (size_t i = 0; i < n; i++)
                if (t2[i] != t[i] || memcmp(&v2[i], &v[i], sizeof v[i]) != 0)
                    fuzz_bug("tsdb: sample %zu changed in the XOR round trip", i);
        }
        char name[16];
        snprintf(name, sizeof name, "s%d", s);
        fs_tsdb_label_t lab[] = {{"__name__", "fuzz"}, {"v", val}, {"id", name}};
        rc = fs_tsdb_add(w, lab, 3, t, v, n, &err);
        if (rc) {
            if (rc != FS_EINVAL || val[0])   /* only an empty value is refused */
                fuzz_bug("tsdb: add: %s", err.msg);
            fs_tsdb_abort(w);
            w = NULL;
        } else {
            added += n > 0;
            want_samples += n;
        }
    }
    if (w) {
        fs_tsdb_stats_t st;
        if (fs_tsdb_close(w, &st, &err) != 0)
            fuzz_bug("tsdb: close: %s", err.msg);
        if (st.samples != want_samples || (added && !st.blocks))
            fuzz_bug("tsdb: %llu samples written of %llu", (unsigned long long)st.samples,
                     (unsigned long long)want_samples);
    } else {
        struct stat sb;
        if (stat(target, &sb) == 0)
            fuzz_bug("tsdb: an aborted writer left %s", target);
    }
    fuzz_rmtree(dir);
    check_no_leak(live0, "tsdb");
    return 0;
}

int fs_fuzz_run(const char *target, const uint8_t *data, size_t size)
{
    if (strcmp(target, "tsdb") == 0)
        return fs_fuzz_tsdb(data, size);
    if (strcmp(target, "reqtrace") == 0)
        return fs_fuzz_reqtrace(data, size);
    if (strcmp(target, "kueue") == 0)
        return fs_fuzz_kueue(data, size);
    if (strcmp(target, "scenario") == 0)
        return fs_fuzz_scenario(data, size);
    if (strcmp(target, "units") == 0)
        return fs_fuzz_units(data, size);
    if (strncmp(target, "trace-", 6) == 0 && fs_trace_format_find(target + 6))
        return fs_fuzz_trace(target + 6, data, size);
    return -1;
}
