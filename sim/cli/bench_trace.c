/*
 * The trace-parsing benchmark of `fleetsim bench` (docs/performance.md):
 * writes a native trace of N rows (all 13 columns, synthetic jobs with
 * tenants, estimates and recorded times) into $TMPDIR, gzips a copy (zlib
 * level 1), reads
 * each back through fs_trace_open in batches of 4096, and reports rows/s and
 * the peak RSS of the reading.  Each read runs in a child process, so that
 * its peak RSS is its own (not the writer's, nor an earlier benchmark's).
 * The files are deleted afterwards.  Timing never fails anything.
 */
#include "fs_cli.h"
#include "../../traces/fs_synth.h"
#include "../../traces/fs_trace.h"
#include "../../models/fs_mig.h"
#include "../fs_alloc.h"
#include "../../traces/fs_native.h"
#include "../fs_clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define BT_BATCH 4096

/* gzip (level 1: the writer's level 6 would take minutes) of a plain file. */
static int gzip_copy(const char *from, const char *to, fs_error_t *err)
{
    FILE *in = fopen(from, "rb");
    gzFile out = gzopen(to, "wb1");
    char *buf = fs_malloc(1 << 20);
    int rc = 0;
    if (!in || !out || !buf) {
        rc = fs_error_set(err, FS_EIO, "cannot gzip %s into %s", from, to);
    } else {
        size_t k;
        while ((k = fread(buf, 1, 1 << 20, in)) > 0)
            if (gzwrite(out, buf, (unsigned)k) != (int)k) {
                rc = fs_error_set(err, FS_EIO, "%s: write failed", to);
                break;
            }
    }
    if (in)
        fclose(in);
    if (out && gzclose(out) != Z_OK && !rc)
        rc = fs_error_set(err, FS_EIO, "%s: write failed", to);
    fs_free(buf);
    return rc;
}

/* Writes n synthetic jobs to path (gzip when it ends in .gz). */
static int write_trace(const char *path, unsigned long long n, fs_error_t *err)
{
    static const uint32_t sizes[] = {1, 2, 4, 8, 64};
    static const double probs[] = {0.6, 0.1, 0.1, 0.15, 0.05};
    static const char *const tenants[] = {"research", "prod", "intern"};
    static const double shares[] = {0.5, 0.3, 0.2};
    fs_synth_cfg_t c;
    fs_synth_cfg_init(&c);
    c.rate = 50;
    c.horizon = FS_TIME_MAX_INPUT;
    c.max_jobs = n;
    c.n_sizes = 5;
    c.sizes = (uint32_t *)sizes;
    c.size_probs = (double *)probs;
    c.duration.kind = FS_DIST_LOGNORMAL;
    c.duration.median = 1800;
    c.duration.sigma = 1.5;
    c.n_tenants = 3;
    c.tenant_names = (char **)tenants;
    c.tenant_shares = (double *)shares;
    c.estimate_factor = 1.5;
    int rc = fs_dist_prepare(&c.duration, err);
    fs_source_t *src = NULL;
    if (!rc)
        rc = fs_synth_create(&c, 1, 0, &src, err); /* copies c: nothing of c is freed */
    if (rc)
        return rc;
    fs_native_writer_t *w = NULL;
    fs_job_t *buf = fs_malloc(BT_BATCH * sizeof *buf);
    if (!buf) {
        fs_source_destroy(src);
        return fs_error_set(err, FS_ENOMEM, "out of memory");
    }
    if ((rc = fs_native_writer_open(path, &w, err)) != 0)
        goto out;
    for (;;) {
        size_t k = 0;
        if ((rc = fs_source_next(src, buf, BT_BATCH, &k, err)) != 0 || k == 0)
            break;
        for (size_t i = 0; i < k && !rc; i++) {
            fs_job_t *j = &buf[i];
            j->rec_start = j->submit + (fs_time_t)(i % 7) * FS_US_PER_S;
            j->rec_end = j->rec_start + j->duration;
            j->rec_state = FS_JOB_REC_COMPLETED;
            rc = fs_native_writer_put(w, j, tenants[j->tenant], "H100", err);
        }
        if (rc)
            break;
    }
    if (rc)
        fs_native_writer_abort(w);
    else
        rc = fs_native_writer_close(w, err);
out:
    fs_free(buf);
    fs_source_destroy(src);
    return rc;
}

/* Reads path in a child; returns rows/s of wall-clock time (0 on failure),
 * rows per second of the child's CPU time and the child's peak RSS in KiB. */
static double read_in_child(const char *path, unsigned long long want, double *cpu_rate,
                            long *rss_kb)
{
    int fd[2];
    *rss_kb = -1;
    if (pipe(fd) != 0)
        return 0;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return 0;
    }
    if (pid == 0) {
        close(fd[0]);
        double rate[2] = {0, 0};
        fs_trace_opts_t o;
        fs_trace_opts_init(&o);
        o.mig_profile = fs_mig_code_find;
        fs_source_t *src = NULL;
        fs_error_t err;
        fs_job_t *buf = fs_malloc(BT_BATCH * sizeof *buf);
        double t0 = fs_clock_wall(), c0 = fs_clock_cpu();
        unsigned long long rows = 0;
        fs_time_t check = 0;
        if (buf && fs_trace_open("native", path, &o, &src, &err) == 0) {
            size_t k;
            while (fs_source_next(src, buf, BT_BATCH, &k, &err) == 0 && k) {
                rows += k;
                for (size_t i = 0; i < k; i++)
                    check += buf[i].duration;   /* touch every job */
            }
            double dt = fs_clock_wall() - t0, dc = fs_clock_cpu() - c0;
            if (rows == want && check > 0 && dt > 0 && dc > 0) {
                rate[0] = (double)rows / dt;
                rate[1] = (double)rows / dc;
            }
            else
                fprintf(stderr, "fleetsim bench: read %llu of %llu rows: %s\n", rows, want, err.msg);
            fs_source_destroy(src);
        }
        fs_free(buf);
        if (write(fd[1], rate, sizeof rate) != (ssize_t)sizeof rate)
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    double rate[2] = {0, 0};
    if (read(fd[0], rate, sizeof rate) != (ssize_t)sizeof rate)
        rate[0] = rate[1] = 0;
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
        *rss_kb = ru.ru_maxrss; /* the largest child so far */
    *cpu_rate = rate[1];
    return rate[0];
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n = -1;
    if (f) {
        if (fseek(f, 0, SEEK_END) == 0)
            n = ftell(f);
        fclose(f);
    }
    return n;
}

int fs_bench_trace(unsigned long long rows)
{
    const char *tmp = getenv("TMPDIR");
    char plain[4096], gz[4200];
    snprintf(plain, sizeof plain, "%s/fleetsim-bench-trace-%ld.csv", tmp && *tmp ? tmp : "/tmp",
             (long)getpid());
    snprintf(gz, sizeof gz, "%s.gz", plain);
    fs_error_t err;
    printf("\ntrace parsing  %llu rows of native CSV (13 columns), batches of %d, in %s\n", rows,
           BT_BATCH, tmp && *tmp ? tmp : "/tmp");
    fflush(stdout);
    double t0 = fs_clock_wall();
    if (write_trace(plain, rows, &err) != 0) {
        fprintf(stderr, "fleetsim bench: %s\n", err.msg);
        return 1;
    }
    double tw = fs_clock_wall() - t0;
    t0 = fs_clock_wall();
    if (gzip_copy(plain, gz, &err) != 0) {
        fprintf(stderr, "fleetsim bench: %s\n", err.msg);
        remove(plain);
        return 1;
    }
    double twz = fs_clock_wall() - t0;
    long sp = file_size(plain), sz = file_size(gz), rss1, rss2;
    double c1, c2;
    double r1 = read_in_child(plain, rows, &c1, &rss1);
    double r2 = read_in_child(gz, rows, &c2, &rss2);
    remove(plain);
    remove(gz);
    printf("  write plain   %.2f M rows/s (%.0f MB)\n", (double)rows / tw / 1e6, (double)sp / 1e6);
    printf("  gzip -1 copy  %.1f s (%.0f MB)\n", twz, (double)sz / 1e6);
    printf("  read plain    %.2f M rows/s wall, %.2f M rows per CPU-second  (target >= 2 M rows/s)\n",
           r1 / 1e6, c1 / 1e6);
    printf("  read gzip     %.2f M rows/s wall, %.2f M rows per CPU-second  (target >= 1 M rows/s)\n",
           r2 / 1e6, c2 / 1e6);
    printf("  peak RSS      %.1f MB (largest reading process; the whole process, not only the reader)\n",
           (double)(rss2 > rss1 ? rss2 : rss1) / 1024.0);
    return r1 > 0 && r2 > 0 ? 0 : 1;
}
