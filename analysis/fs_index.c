/*
 * The manifest and index files of a sweep (see fs_index.h, docs/sweeps.md).
 *
 * Tables are compound datasets (packed, little-endian file types; fixed-
 * length strings sized to the longest value) created with object times
 * off, so that the same runs give the same table bytes however the sweep
 * was split.  HDF5's error printing is switched off for the duration of
 * each public call (restored after); failures become FS_EIO naming the file
 * and the step.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "fs_index.h"
#include "fs_ci.h"
#include "fs_h5len.h"
#include "fs_h5util.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_out.h"
#include "../models/fs_result.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#ifndef FLEETSIM_VERSION
#define FLEETSIM_VERSION "unknown"
#endif

/* ---- HDF5 helpers ---------------------------------------------------------- */

/* Reads a string or string-array attribute: *n strings (owned). */
static int attr_read_strs(hid_t loc, const char *name, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return -1;
    hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
    int rc = -1;
    char *buf = NULL;
    char **v = NULL;
    size_t cnt = 0;
    if (ft < 0 || sp < 0 || H5Tget_class(ft) != H5T_STRING || H5Tis_variable_str(ft) > 0)
        goto out;
    H5S_class_t cls = H5Sget_simple_extent_type(sp);
    hssize_t np = cls == H5S_NULL ? 0 : H5Sget_simple_extent_npoints(sp);
    if (np < 0)
        goto out;
    cnt = (size_t)np;
    size_t w = H5Tget_size(ft);
    if (cnt) {
        hid_t mt = H5Tcopy(ft);
        buf = fs_calloc(cnt, w);
        if (mt < 0 || !buf || H5Aread(a, mt, buf) < 0) {
            if (mt >= 0)
                H5Tclose(mt);
            goto out;
        }
        H5Tclose(mt);
        if (!(v = fs_calloc(cnt, sizeof *v)))
            goto out;
        for (size_t i = 0; i < cnt; i++)
            if (!(v[i] = fs_strndup(buf + i * w, w)))
                goto out;
    }
    rc = 0;
out:
    if (rc && v) {
        for (size_t i = 0; i < cnt; i++)
            fs_free(v[i]);
        fs_free(v);
        v = NULL;
    }
    fs_free(buf);
    if (ft >= 0)
        H5Tclose(ft);
    if (sp >= 0)
        H5Sclose(sp);
    H5Aclose(a);
    if (!rc) {
        *out = v;
        *n = cnt;
    }
    return rc;
}

static int attr_read_u64(hid_t loc, const char *name, uint64_t *v)
{
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return -1;
    herr_t st = H5Aread(a, H5T_NATIVE_UINT64, v);
    H5Aclose(a);
    return st < 0 ? -1 : 0;
}

static hid_t create_file(const char *tmp)
{
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (fcpl < 0)
        return -1;
    H5Pset_obj_track_times(fcpl, 0);
    hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    H5Pclose(fcpl);
    return f;
}

/* ---- common attributes -------------------------------------------------------- */

static int write_attrs(hid_t f, const fs_index_sweep_t *s, const char *kind)
{
    const char *empty = "";
    int bad = 0;
    bad |= fs_h5_attr_u64(f, "format_version", FS_INDEX_FORMAT_VERSION);
    bad |= fs_h5_attr_str(f, "fleetsim_version", FLEETSIM_VERSION);
    bad |= fs_h5_attr_str(f, "kind", kind);
    bad |= fs_h5_attr_str(f, "name", s->name ? s->name : empty);
    bad |= fs_h5_attr_str(f, "scenario", s->scenario_text ? s->scenario_text : empty);
    bad |= fs_h5_attr_str(f, "scenario_path", s->scenario_path ? s->scenario_path : empty);
    bad |= fs_h5_attr_strs(f, "sets", s->sets, s->n_sets);
    bad |= fs_h5_attr_str(f, "combine", s->combine);
    bad |= fs_h5_attr_str(f, "warmup", s->warmup ? s->warmup : empty);
    bad |= fs_h5_attr_u64(f, "replications", s->replications);
    bad |= fs_h5_attr_strs(f, "parameters", s->keys, s->n_params);
    bad |= fs_h5_attr_u64(f, "n_points", s->n_points);
    bad |= fs_h5_attr_u64(f, "n_runs", s->n_points * s->replications);
    bad |= fs_h5_attr_strs(f, "point_values", s->values, s->n_points * s->n_params);
    bad |= fs_h5_attr_u64(f, "digest", s->digest);
    return bad ? -1 : 0;
}

/* PATH.tmp.HOST.PID: shards on several hosts may write the same manifest
 * at once into shared storage; each renames its own complete copy. */
static char *tmp_name(const char *path)
{
    char host[64] = "host";
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "host");
    host[sizeof host - 1] = '\0';
    size_t n = strlen(path) + strlen(host) + 40;
    char *t = fs_malloc(n);
    if (t)
        snprintf(t, n, "%s.tmp.%s.%ld", path, host, (long)getpid());
    return t;
}

/* The output rules of sim/fs_out.h for path (a regular file or nothing:
 * not a device, FIFO, directory or read-only file); 0 or FS_EUSAGE. */
static int check_target(const char *path, fs_error_t *err)
{
    fs_out_t o;
    int rc = fs_out_prepare(&o, path, err);
    if (rc == 0)
        fs_out_release(&o);
    return rc;
}

/* Closes f, renames tmp over path; on failure removes tmp. */
static int finish_file(hid_t f, int ok, const char *tmp, const char *path, const char *step,
                       fs_error_t *err)
{
    if (H5Fclose(f) < 0 && ok) {
        ok = 0;
        step = "closing";
    }
    if (ok && rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return fs_error_set(err, FS_EIO, "%s: renaming into place failed: %s", path, strerror(e));
    }
    if (!ok) {
        unlink(tmp);
        return fs_error_set(err, FS_EIO, "%s: %s failed (HDF5)", path, step);
    }
    return 0;
}

int fs_index_write_manifest(const char *path, const fs_index_sweep_t *s, fs_error_t *err)
{
    int crc = check_target(path, err);
    if (crc)
        return crc;
    char *tmp = tmp_name(path);
    if (!tmp)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    fs_h5_quiet_t q;
    fs_h5_quiet_begin(&q);
    hid_t f = create_file(tmp);
    int rc;
    if (f < 0) {
        rc = fs_error_set(err, FS_EIO, "%s: cannot create the file", tmp);
    } else {
        int ok = write_attrs(f, s, "fleetsim sweep manifest") == 0;
        rc = finish_file(f, ok, tmp, path, "writing the attributes", err);
    }
    fs_h5_quiet_end(&q);
    fs_free(tmp);
    return rc;
}

void fs_index_manifest_free(fs_index_manifest_t *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_strings; i++)
        fs_free(m->strings[i]);
    fs_free(m->strings);
    fs_free((void *)m->s.sets);
    fs_free((void *)m->s.keys);
    fs_free((void *)m->s.values);
    fs_free(m);
}

/* Reads attribute `name` as n strings, keeping them in m->strings. */
static int keep_strs(fs_index_manifest_t *m, hid_t f, const char *name, const char *const **out,
                     size_t *n, size_t *cap)
{
    char **v = NULL;
    size_t cnt = 0;
    if (attr_read_strs(f, name, &v, &cnt) < 0)
        return -1;
    const char **arr = fs_calloc(cnt ? cnt : 1, sizeof *arr);
    if (!arr || fs_grow((void **)&m->strings, cap, m->n_strings + cnt, sizeof *m->strings)) {
        for (size_t i = 0; i < cnt; i++)
            fs_free(v[i]);
        fs_free(v);
        fs_free(arr);
        return -1;
    }
    for (size_t i = 0; i < cnt; i++) {
        m->strings[m->n_strings++] = v[i];
        arr[i] = v[i];
    }
    fs_free(v);
    *out = arr;
    if (n)
        *n = cnt;
    return 0;
}

static int keep_str(fs_index_manifest_t *m, hid_t f, const char *name, const char **out, size_t *cap)
{
    const char *const *arr = NULL;
    size_t n = 0;
    if (keep_strs(m, f, name, &arr, &n, cap) < 0)
        return -1;
    *out = n ? arr[0] : NULL;
    fs_free((void *)arr);
    return n == 1 ? 0 : -1;
}

int fs_index_read_manifest(const char *path, fs_index_manifest_t **out, fs_error_t *err)
{
    *out = NULL;
    fs_h5_quiet_t q;
    fs_h5_quiet_begin(&q);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        fs_h5_quiet_end(&q);
        if (fs_h5_check_whole(path, err))
            return FS_EINVAL;
        return fs_error_set(err, FS_EIO, "%s: cannot open the sweep manifest (is this a sweep "
                            "directory?)", path);
    }
    fs_index_manifest_t *m = fs_calloc(1, sizeof *m);
    size_t cap = 0, n_values = 0;
    int bad = !m;
    fs_index_sweep_t *s = m ? &m->s : NULL;
    bad = bad || keep_str(m, f, "name", &s->name, &cap) || keep_str(m, f, "scenario", &s->scenario_text, &cap) ||
          keep_str(m, f, "scenario_path", &s->scenario_path, &cap) ||
          keep_strs(m, f, "sets", &s->sets, &s->n_sets, &cap) ||
          keep_str(m, f, "combine", &s->combine, &cap) || keep_str(m, f, "warmup", &s->warmup, &cap) ||
          keep_strs(m, f, "parameters", &s->keys, &s->n_params, &cap) ||
          keep_strs(m, f, "point_values", &s->values, &n_values, &cap);
    uint64_t np = 0;
    bad = bad || attr_read_u64(f, "replications", &s->replications) || attr_read_u64(f, "n_points", &np) ||
          attr_read_u64(f, "digest", &s->digest);
    H5Fclose(f);
    fs_h5_quiet_end(&q);
    if (!bad) {
        s->n_points = (size_t)np;
        if (s->warmup && !*s->warmup)
            s->warmup = NULL;
        if (n_values != s->n_points * s->n_params)
            bad = 1;
    }
    if (bad) {
        fs_index_manifest_free(m);
        return fs_error_set(err, FS_EIO, "%s: not a readable sweep manifest", path);
    }
    *out = m;
    return 0;
}

/* ---- run files ------------------------------------------------------------------- */

static const char *fs_index_run_state_name(int state)
{
    switch (state) {
    case FS_RUN_MISSING: return "missing";
    case FS_RUN_INCOMPLETE: return "incomplete";
    case FS_RUN_COMPLETE: return "complete";
    case FS_RUN_FOREIGN: return "another run's file";
    default: return "?";
    }
}

char *fs_index_run_file(size_t point, uint64_t rep, char *buf, size_t n)
{
    snprintf(buf, n, "runs/p%04zu-r%04" PRIu64 ".h5", point, rep);
    return buf;
}

int fs_index_run_state(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return FS_RUN_MISSING;
    fs_h5_quiet_t q;
    fs_h5_quiet_begin(&q);
    int state = FS_RUN_INCOMPLETE;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f >= 0) {
        hid_t a = H5Aopen(f, "complete", H5P_DEFAULT);
        long long v = 0;
        if (a >= 0 && H5Aread(a, H5T_NATIVE_LLONG, &v) >= 0 && v == 1)
            state = FS_RUN_COMPLETE;
        if (a >= 0)
            H5Aclose(a);
        H5Fclose(f);
    }
    fs_h5_quiet_end(&q);
    return state;
}

int fs_index_run_state_of(const char *path, uint64_t digest, size_t point, uint64_t rep,
                          char *why, size_t n)
{
    int state = fs_index_run_state(path);
    if (state != FS_RUN_COMPLETE)
        return state;
    fs_h5_quiet_t q;
    fs_h5_quiet_begin(&q);
    uint64_t d = 0, p = 0, r = 0;
    int have = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f >= 0) {
        have = attr_read_u64(f, "sweep_digest", &d) == 0 && attr_read_u64(f, "sweep_point", &p) == 0 &&
               attr_read_u64(f, "replication", &r) == 0;
        H5Fclose(f);
    }
    fs_h5_quiet_end(&q);
    if (have && d == digest && p == (uint64_t)point && r == rep)
        return FS_RUN_COMPLETE;
    if (why && n) {
        if (!have)
            snprintf(why, n, "a results file that names no sweep run");
        else if (d != digest)
            snprintf(why, n, "a run of another sweep (digest %016" PRIx64 ", this one %016" PRIx64 ")",
                     d, digest);
        else
            snprintf(why, n, "point %" PRIu64 ", replication %" PRIu64 " of this sweep", p, r);
    }
    return FS_RUN_FOREIGN;
}

void fs_index_free_summary(char **names, double *values, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        fs_free(names[i]);
    fs_free(names);
    fs_free(values);
}

int fs_index_read_summary(const char *path, char ***names_out, double **values_out, size_t *n_out,
                          fs_error_t *err)
{
    *names_out = NULL;
    *values_out = NULL;
    *n_out = 0;
    fs_h5_quiet_t q;
    fs_h5_quiet_begin(&q);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = -1, t = -1, sp = -1;
    char **names = NULL;
    double *vals = NULL;
    int n = 0, rc = 0;
    if (f < 0 || (d = H5Dopen2(f, "summary", H5P_DEFAULT)) < 0 || (t = H5Dget_type(d)) < 0 ||
        H5Tget_class(t) != H5T_COMPOUND || (sp = H5Dget_space(d)) < 0 ||
        H5Sget_simple_extent_npoints(sp) != 1 || (n = H5Tget_nmembers(t)) <= 0) {
        if (f >= 0 || !(rc = fs_h5_check_whole(path, err)))
            rc = fs_error_set(err, FS_EIO, "%s: no readable one-row /summary table", path);
        goto out;
    }
    names = fs_calloc((size_t)n, sizeof *names);
    vals = fs_calloc((size_t)n, sizeof *vals);
    if (!names || !vals) {
        rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    /* Why one read: a read per column (43 of them) made HDF5 allocate its
     * 1 MB conversion buffer 43 times, 55 ms per run of a sweep's serial
     * index step.  All columns go into one compound of doubles; a file with
     * a column that does not convert to a double (none fleetsim writes)
     * falls back to a read per column, that column NaN. */
    hid_t all = H5Tcreate(H5T_COMPOUND, (size_t)n * sizeof(double));
    int inserted = all >= 0;
    for (int i = 0; i < n; i++) {
        char *nm = H5Tget_member_name(t, (unsigned)i);
        if (!nm) {
            rc = fs_error_set(err, FS_EIO, "%s: /summary column %d has no name", path, i);
            if (all >= 0)
                H5Tclose(all);
            goto out;
        }
        names[i] = fs_strdup(nm);
        if (inserted && H5Tinsert(all, nm, (size_t)i * sizeof(double), H5T_NATIVE_DOUBLE) < 0)
            inserted = 0;
        H5free_memory(nm);
        if (!names[i]) {
            rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
            if (all >= 0)
                H5Tclose(all);
            goto out;
        }
    }
    /* and a conversion buffer of one row (fs_h5_xfer_rows): the default
     * 1 MB, zeroed for each run, was 98% of the index's page faults */
    size_t fsz = H5Tget_size(t), msz = (size_t)n * sizeof(double);
    hid_t dxpl = inserted ? fs_h5_xfer_rows(1, fsz > msz ? fsz : msz) : -1;
    herr_t whole = dxpl >= 0 ? H5Dread(d, all, H5S_ALL, H5S_ALL, dxpl, vals) : -1;
    if (dxpl >= 0)
        H5Pclose(dxpl);
    if (all >= 0)
        H5Tclose(all);
    for (int i = 0; whole < 0 && i < n; i++) {
        hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(double));
        double v = NAN;
        herr_t st = mt < 0 ? -1 : H5Tinsert(mt, names[i], 0, H5T_NATIVE_DOUBLE);
        if (st >= 0)
            st = H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v);
        if (mt >= 0)
            H5Tclose(mt);
        vals[i] = st < 0 ? NAN : v;
    }
out:
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    if (d >= 0)
        H5Dclose(d);
    if (f >= 0)
        H5Fclose(f);
    fs_h5_quiet_end(&q);
    if (rc) {
        fs_index_free_summary(names, vals, (size_t)(n > 0 ? n : 0));
        return rc;
    }
    *names_out = names;
    *values_out = vals;
    *n_out = (size_t)n;
    return 0;
}

static const char *const svc_metrics[] = {
    "requests", "completed", "ttft_p50", "ttft_p95", "ttft_p99", "ttft_mean", "tpot_p50",
    "tpot_p95", "tpot_p99", "slo_attainment", "buckets_met", "replica_hours", "gpu_hours",
    "cold_starts", "tokens_out", "cost_per_mtok"};
#define N_SVC_METRICS (sizeof svc_metrics / sizeof svc_metrics[0])

int fs_index_service_metric(const char *metric, const char *const *services, size_t n,
                            char *list, size_t len)
{
    if (list && len) {
        size_t w = 0;
        list[0] = '\0';
        for (size_t k = 0; k < N_SVC_METRICS && w < len; k++)
            w += (size_t)snprintf(list + w, len - w, "%s%s", k ? ", " : "", svc_metrics[k]);
    }
    const char *dot = strrchr(metric, '.');
    if (!dot)
        return 0;
    size_t sl = (size_t)(dot - metric);
    for (size_t i = 0; i < n; i++)
        if (strlen(services[i]) == sl && strncmp(services[i], metric, sl) == 0)
            for (size_t k = 0; k < N_SVC_METRICS; k++)
                if (strcmp(dot + 1, svc_metrics[k]) == 0)
                    return 1;
    return 0;
}

int fs_index_read_services(const char *path, char ***names, double **values, size_t *n,
                           fs_error_t *err)
{
    fs_h5_quiet_t q;
    fs_h5_quiet_begin(&q);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = -1, sp = -1, mt = -1, st = -1;
    struct row { char name[FS_SERVICE_NAME_MAX + 1]; double v[N_SVC_METRICS]; } *rows = NULL;
    int rc = 0;
    if (f < 0) {
        if (!(rc = fs_h5_check_whole(path, err)))
            rc = fs_error_set(err, FS_EIO, "%s: cannot open", path);
        goto out;
    }
    if (H5Lexists(f, "services", H5P_DEFAULT) <= 0)
        goto out;
    hssize_t nr;
    if ((d = H5Dopen2(f, "services", H5P_DEFAULT)) < 0 || (sp = H5Dget_space(d)) < 0 ||
        (nr = H5Sget_simple_extent_npoints(sp)) < 0 || (st = H5Tcopy(H5T_C_S1)) < 0 ||
        H5Tset_size(st, FS_SERVICE_NAME_MAX + 1) < 0 || H5Tset_cset(st, H5T_CSET_UTF8) < 0 ||
        (mt = H5Tcreate(H5T_COMPOUND, sizeof *rows)) < 0 ||
        H5Tinsert(mt, "name", offsetof(struct row, name), st) < 0) {
        rc = fs_error_set(err, FS_EIO, "%s: /services is not readable", path);
        goto out;
    }
    for (size_t k = 0; k < N_SVC_METRICS; k++)
        if (H5Tinsert(mt, svc_metrics[k], offsetof(struct row, v) + k * sizeof(double),
                      H5T_NATIVE_DOUBLE) < 0) {
            rc = fs_error_set(err, FS_EIO, "%s: /services is not readable", path);
            goto out;
        }
    if (nr == 0)
        goto out;
    if (!(rows = fs_calloc((size_t)nr, sizeof *rows))) {
        rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    if (H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0) {
        rc = fs_error_set(err, FS_EIO, "%s: /services: the columns %s ... %s are not readable",
                          path, svc_metrics[0], svc_metrics[N_SVC_METRICS - 1]);
        goto out;
    }
    /* the arrays hold exactly *n entries so far (their capacity) */
    size_t add = (size_t)nr * N_SVC_METRICS, cap_names = *n, cap_values = *n;
    if (fs_grow((void **)names, &cap_names, *n + add, sizeof **names) != 0 ||
        fs_grow((void **)values, &cap_values, *n + add, sizeof **values) != 0) {
        rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    for (hssize_t i = 0; i < nr; i++)
        for (size_t k = 0; k < N_SVC_METRICS; k++) {
            size_t len = strlen(rows[i].name) + strlen(svc_metrics[k]) + 2;
            char *s = fs_malloc(len);
            if (!s) {
                rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
                goto out;
            }
            snprintf(s, len, "%s.%s", rows[i].name, svc_metrics[k]);
            (*names)[*n] = s;
            (*values)[*n] = rows[i].v[k];
            (*n)++;
        }
out:
    fs_free(rows);
    if (mt >= 0)
        H5Tclose(mt);
    if (st >= 0)
        H5Tclose(st);
    if (sp >= 0)
        H5Sclose(sp);
    if (d >= 0)
        H5Dclose(d);
    if (f >= 0)
        H5Fclose(f);
    fs_h5_quiet_end(&q);
    return rc;
}

/* ---- the index --------------------------------------------------------------------- */

/* The runs' summaries, in run order: *metrics (the first run's /summary
 * column names, *n_metrics of them) and *vals (n_runs x n_metrics, NaN
 * where a run lacks a metric).  FS_EINVAL naming up to four runs that are
 * missing, unfinished or another sweep's. */
static int collect_summaries(const char *dir, const fs_index_sweep_t *s, char ***metrics,
                             size_t *n_metrics, double **vals, fs_error_t *err)
{
    size_t n_runs = s->n_points * s->replications, missing = 0;
    char *path = NULL, msg[600] = "", rel[64];
    int rc = 0;
    for (size_t k = 0; k < n_runs; k++) {
        size_t point = k / s->replications;
        uint64_t rep = k % s->replications;
        fs_index_run_file(point, rep, rel, sizeof rel);
        fs_free(path);
        if (!(path = fs_out_join(dir, rel))) {
            rc = fs_error_set(err, FS_ENOMEM, "index: out of memory");
            goto out;
        }
        char why[160];
        int st = fs_index_run_state_of(path, s->digest, point, rep, why, sizeof why);
        if (st != FS_RUN_COMPLETE) {
            if (missing < 4) {
                size_t len = strlen(msg);
                snprintf(msg + len, sizeof msg - len, "%s%s (%s)", missing ? ", " : "", rel,
                         st == FS_RUN_FOREIGN ? why : fs_index_run_state_name(st));
            }
            missing++;
            continue;
        }
        if (missing)
            continue;
        char **names = NULL;
        double *v = NULL;
        size_t n = 0;
        if ((rc = fs_index_read_summary(path, &names, &v, &n, err)) != 0)
            goto out;
        if (!*metrics) {
            *metrics = names;
            *n_metrics = n;
            names = NULL;
            if (!(*vals = fs_calloc(n_runs * (n ? n : 1), sizeof **vals))) {
                fs_index_free_summary(NULL, v, 0);
                rc = fs_error_set(err, FS_ENOMEM, "index: out of memory");
                goto out;
            }
        }
        for (size_t m = 0; m < *n_metrics; m++) {
            double x = NAN;
            const char *want = (*metrics)[m];
            for (size_t i = 0; i < n; i++)
                if (strcmp(names ? names[i] : (*metrics)[i], want) == 0) {
                    x = v[i];
                    break;
                }
            (*vals)[k * *n_metrics + m] = x;
        }
        fs_index_free_summary(names, v, names ? n : 0);
    }
    if (missing)
        rc = fs_error_set(err, FS_EINVAL, "%s: %zu of %zu runs are not finished: %s%s", dir, missing,
                          n_runs, msg, missing > 4 ? ", ..." : "");
out:
    fs_free(path);
    return rc;
}

/* /points: the point and its parameter values.  1 when written. */
static int write_points(hid_t f, const fs_index_sweep_t *s)
{
    size_t ncols = 1 + s->n_params;
    fs_h5_col_t *cols = fs_calloc(ncols, sizeof *cols);
    if (!cols)
        return 0;
    cols[0] = (fs_h5_col_t){"point", FS_H5_U32, 0, 0};
    for (size_t j = 0; j < s->n_params; j++) {
        size_t w = 1;
        for (size_t p = 0; p < s->n_points; p++)
            if (strlen(s->values[p * s->n_params + j]) > w)
                w = strlen(s->values[p * s->n_params + j]);
        cols[1 + j] = (fs_h5_col_t){s->keys[j], FS_H5_STR, w, 0};
    }
    size_t row = fs_h5_layout(cols, ncols);
    char *rows = fs_calloc(s->n_points ? s->n_points : 1, row);
    int ok = rows != NULL;
    for (size_t p = 0; ok && p < s->n_points; p++) {
        char *r = rows + p * row;
        uint32_t pv = (uint32_t)p;
        memcpy(r + cols[0].off, &pv, 4);
        for (size_t j = 0; j < s->n_params; j++) {
            const char *v = s->values[p * s->n_params + j];
            memcpy(r + cols[1 + j].off, v, strlen(v));
        }
    }
    ok = ok && fs_h5_write_table(f, "points", cols, ncols, row, rows, s->n_points) == 0;
    fs_free(rows);
    fs_free(cols);
    return ok;
}

/* /runs: point, replication, file, status and every metric per run.  1
 * when written. */
static int write_runs(hid_t f, const fs_index_sweep_t *s, char *const *metrics,
                      size_t n_metrics, const double *vals)
{
    size_t n_runs = s->n_points * s->replications, ncols = 4 + n_metrics;
    char rel[64];
    fs_h5_col_t *cols = fs_calloc(ncols, sizeof *cols);
    if (!cols)
        return 0;
    fs_index_run_file(s->n_points ? s->n_points - 1 : 0, s->replications - 1, rel, sizeof rel);
    cols[0] = (fs_h5_col_t){"point", FS_H5_U32, 0, 0};
    cols[1] = (fs_h5_col_t){"replication", FS_H5_U32, 0, 0};
    cols[2] = (fs_h5_col_t){"file", FS_H5_STR, strlen(rel) + 8, 0};
    cols[3] = (fs_h5_col_t){"status", FS_H5_STR, 16, 0};
    for (size_t m = 0; m < n_metrics; m++)
        cols[4 + m] = (fs_h5_col_t){metrics[m], FS_H5_F64, 0, 0};
    size_t row = fs_h5_layout(cols, ncols);
    char *rows = fs_calloc(n_runs ? n_runs : 1, row);
    int ok = rows != NULL;
    for (size_t k = 0; ok && k < n_runs; k++) {
        char *r = rows + k * row;
        uint32_t p = (uint32_t)(k / s->replications), rp = (uint32_t)(k % s->replications);
        memcpy(r + cols[0].off, &p, 4);
        memcpy(r + cols[1].off, &rp, 4);
        fs_index_run_file(p, rp, rel, sizeof rel);
        memcpy(r + cols[2].off, rel, strlen(rel));
        memcpy(r + cols[3].off, "complete", 8);
        for (size_t m = 0; m < n_metrics; m++)
            memcpy(r + cols[4 + m].off, &vals[k * n_metrics + m], 8);
    }
    ok = ok && fs_h5_write_table(f, "runs", cols, ncols, row, rows, n_runs) == 0;
    fs_free(rows);
    fs_free(cols);
    return ok;
}

/* /stats: per point and metric, the mean over the replications with its
 * Student-t interval.  1 when written. */
static int write_stats(hid_t f, const fs_index_sweep_t *s, char *const *metrics,
                       size_t n_metrics, const double *vals)
{
    size_t mw = 1;
    for (size_t m = 0; m < n_metrics; m++)
        if (strlen(metrics[m]) > mw)
            mw = strlen(metrics[m]);
    fs_h5_col_t sc[] = {{"point", FS_H5_U32, 0, 0}, {"metric", FS_H5_STR, mw, 0}, {"n", FS_H5_U32, 0, 0},
                  {"mean", FS_H5_F64, 0, 0},  {"sd", FS_H5_F64, 0, 0},       {"ci_lo", FS_H5_F64, 0, 0},
                  {"ci_hi", FS_H5_F64, 0, 0}};
    size_t nsc = sizeof sc / sizeof sc[0];
    size_t row = fs_h5_layout(sc, nsc);
    size_t nrows = s->n_points * n_metrics;
    char *rows = fs_calloc(nrows ? nrows : 1, row);
    double *x = fs_calloc(s->replications, sizeof *x);
    int ok = rows && x;
    for (size_t p = 0; ok && p < s->n_points; p++)
        for (size_t m = 0; ok && m < n_metrics; m++) {
            for (uint64_t r = 0; r < s->replications; r++)
                x[r] = vals[(p * s->replications + r) * n_metrics + m];
            fs_ci_t ci;
            if (fs_ci_t_interval(x, (size_t)s->replications, FS_INDEX_CI_LEVEL, &ci) != 0) {
                ok = 0;
                break;
            }
            char *rr = rows + (p * n_metrics + m) * row;
            uint32_t pv = (uint32_t)p;
            uint32_t nv = (uint32_t)ci.n;
            memcpy(rr + sc[0].off, &pv, 4);
            memcpy(rr + sc[1].off, metrics[m], strlen(metrics[m]));
            memcpy(rr + sc[2].off, &nv, 4);
            memcpy(rr + sc[3].off, &ci.mean, 8);
            memcpy(rr + sc[4].off, &ci.sd, 8);
            memcpy(rr + sc[5].off, &ci.lo, 8);
            memcpy(rr + sc[6].off, &ci.hi, 8);
        }
    fs_free(x);
    ok = ok && fs_h5_write_table(f, "stats", sc, nsc, row, rows, nrows) == 0;
    fs_free(rows);
    return ok;
}

/* /runs_data: an external link to every run's file.  1 when written. */
static int write_links(hid_t f, const fs_index_sweep_t *s)
{
    size_t n_runs = s->n_points * s->replications;
    char rel[64];
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    hid_t g = -1;
    int ok = gcpl >= 0 && H5Pset_obj_track_times(gcpl, 0) >= 0 &&
             H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED) >= 0 &&
             (g = H5Gcreate2(f, "runs_data", H5P_DEFAULT, gcpl, H5P_DEFAULT)) >= 0;
    for (size_t k = 0; ok && k < n_runs; k++) {
        size_t p = k / s->replications;
        uint64_t r = k % s->replications;
        char link[64];
        fs_index_run_file(p, r, rel, sizeof rel);
        snprintf(link, sizeof link, "p%04zu-r%04" PRIu64, p, r);
        ok = H5Lcreate_external(rel, "/", g, link, H5P_DEFAULT, H5P_DEFAULT) >= 0;
    }
    if (g >= 0)
        H5Gclose(g);
    if (gcpl >= 0)
        H5Pclose(gcpl);
    return ok;
}

int fs_index_write(const char *dir, const fs_index_sweep_t *s, fs_error_t *err)
{
    size_t n_metrics = 0;
    char **metrics = NULL, *path = NULL, *tmp = NULL;
    double *vals = NULL;       /* n_runs * n_metrics */
    int rc = collect_summaries(dir, s, &metrics, &n_metrics, &vals, err);
    if (rc)
        goto out;
    path = fs_out_join(dir, "index.h5");
    if (path && (rc = check_target(path, err)) != 0)
        goto out;
    tmp = path ? tmp_name(path) : NULL;
    if (!tmp) {
        rc = fs_error_set(err, FS_ENOMEM, "index: out of memory");
        goto out;
    }

    fs_h5_quiet_t q;
    fs_h5_quiet_begin(&q);
    hid_t f = create_file(tmp);
    const char *step = "creating the file";
    int ok = f >= 0;
    if (ok) {
        step = "writing the attributes";
        ok = write_attrs(f, s, "fleetsim sweep index") == 0 && fs_h5_attr_f64(f, "ci_level", FS_INDEX_CI_LEVEL) == 0;
    }
    if (ok) {
        step = "writing /points";
        ok = write_points(f, s);
    }
    if (ok) {
        step = "writing /runs";
        ok = write_runs(f, s, metrics, n_metrics, vals);
    }
    if (ok) {
        step = "writing /stats";
        ok = write_stats(f, s, metrics, n_metrics, vals);
    }
    if (ok) {
        step = "writing the links in /runs_data";
        ok = write_links(f, s);
    }
    if (f >= 0) {
        ok = ok && fs_h5_attr_u64(f, "complete", 1) == 0;
        rc = finish_file(f, ok, tmp, path, step, err);
    } else {
        rc = fs_error_set(err, FS_EIO, "%s: cannot create the file", tmp);
    }
    fs_h5_quiet_end(&q);
out:
    fs_index_free_summary(metrics, vals, n_metrics);
    fs_free(path);
    fs_free(tmp);
    return rc;
}
