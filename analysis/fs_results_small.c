/*
 * fs_results_small: the tables written in one call: /pools (at open),
 * /tenants (at the commit) and the root attribute rows_skipped_by_reason.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fs_results_int.h"

#include <string.h>

#include "../sim/fs_alloc.h"

/* /tenants memory row: this struct, then the name (fixed length). */
typedef struct tenant_mem {
    int32_t tenant;
    uint64_t jobs;
    uint64_t jobs_completed;
    double gpu_hours;
    double wait_mean;
    double wait_p50, wait_p95, wait_p99;
    double jct_mean, jct_p95;
    double queued_mean;
    uint64_t preemptions;
    double preempt_lost_gpu_hours;
    double borrowed_gpu_hours, lent_gpu_hours;
    double held_gpu_hours, computing_gpu_hours, redo_gpu_hours, ckpt_gpu_hours,
        startup_gpu_hours, recovering_gpu_hours;
    double borrowed_cpu_core_hours, lent_cpu_core_hours, borrowed_memory_gib_hours,
        lent_memory_gib_hours, borrowed_pod_hours, lent_pod_hours;
} tenant_mem_t;

#define TENANT_NAME_OFF sizeof(tenant_mem_t)
static const col_t tenant_cols[] = {
    {"tenant", K_I32, offsetof(tenant_mem_t, tenant), "-"},
    {"name", K_STR, TENANT_NAME_OFF, "-"},
    {"jobs", K_U64, offsetof(tenant_mem_t, jobs), "count"},
    {"jobs_completed", K_U64, offsetof(tenant_mem_t, jobs_completed), "count"},
    {"gpu_hours", K_F64, offsetof(tenant_mem_t, gpu_hours), "GPU-h"},
    {"wait_mean", K_F64, offsetof(tenant_mem_t, wait_mean), "s"},
    {"wait_p50", K_F64, offsetof(tenant_mem_t, wait_p50), "s"},
    {"wait_p95", K_F64, offsetof(tenant_mem_t, wait_p95), "s"},
    {"wait_p99", K_F64, offsetof(tenant_mem_t, wait_p99), "s"},
    {"jct_mean", K_F64, offsetof(tenant_mem_t, jct_mean), "s"},
    {"jct_p95", K_F64, offsetof(tenant_mem_t, jct_p95), "s"},
    {"queued_mean", K_F64, offsetof(tenant_mem_t, queued_mean), "s"},
    {"preemptions", K_U64, offsetof(tenant_mem_t, preemptions), "count"},
    {"preempt_lost_gpu_hours", K_F64, offsetof(tenant_mem_t, preempt_lost_gpu_hours), "GPU-h"},
    {"borrowed_gpu_hours", K_F64, offsetof(tenant_mem_t, borrowed_gpu_hours), "GPU-h"},
    {"lent_gpu_hours", K_F64, offsetof(tenant_mem_t, lent_gpu_hours), "GPU-h"},
    {"held_gpu_hours", K_F64, offsetof(tenant_mem_t, held_gpu_hours), "GPU-h"},
    {"computing_gpu_hours", K_F64, offsetof(tenant_mem_t, computing_gpu_hours), "GPU-h"},
    {"redo_gpu_hours", K_F64, offsetof(tenant_mem_t, redo_gpu_hours), "GPU-h"},
    {"ckpt_gpu_hours", K_F64, offsetof(tenant_mem_t, ckpt_gpu_hours), "GPU-h"},
    {"startup_gpu_hours", K_F64, offsetof(tenant_mem_t, startup_gpu_hours), "GPU-h"},
    {"recovering_gpu_hours", K_F64, offsetof(tenant_mem_t, recovering_gpu_hours), "GPU-h"},
    {"borrowed_cpu_core_hours", K_F64, offsetof(tenant_mem_t, borrowed_cpu_core_hours), "core-h"},
    {"lent_cpu_core_hours", K_F64, offsetof(tenant_mem_t, lent_cpu_core_hours), "core-h"},
    {"borrowed_memory_gib_hours", K_F64, offsetof(tenant_mem_t, borrowed_memory_gib_hours), "GiB-h"},
    {"lent_memory_gib_hours", K_F64, offsetof(tenant_mem_t, lent_memory_gib_hours), "GiB-h"},
    {"borrowed_pod_hours", K_F64, offsetof(tenant_mem_t, borrowed_pod_hours), "pod-h"},
    {"lent_pod_hours", K_F64, offsetof(tenant_mem_t, lent_pod_hours), "pod-h"},
};

/* /pools memory row: this struct, then name and gpu (fixed lengths); the
 * string offsets depend on the lengths and are set at write time. */
typedef struct pool_mem {
    uint32_t index;
    uint32_t nodes;
    uint32_t gpus_per_node;
    double power_cap_w;
    uint32_t time_slicing;
    uint32_t mps;
    double ambient_c;
    double throttle_w;
} pool_mem_t;

size_t fs_rs_max_len(size_t cur, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n > cur ? n : cur;
}

size_t fs_rs_round_up8(size_t n)
{
    return (n + 7) / 8 * 8;
}

int fs_rs_write_pools(hid_t fid, h5call_t *c, const fs_results_meta_t *meta, fs_error_t *err)
{
    static const col_t cols[] = {
        {"index", K_U32, offsetof(pool_mem_t, index), "-"},
        {"name", K_STR, 0, "-"},
        {"gpu", K_STR, 0, "-"},
        {"nodes", K_U32, offsetof(pool_mem_t, nodes), "node"},
        {"gpus_per_node", K_U32, offsetof(pool_mem_t, gpus_per_node), "GPU"},
        {"mig", K_STR, 0, "-"},
        {"power_cap_w", K_F64, offsetof(pool_mem_t, power_cap_w), "W"},
        {"time_slicing", K_U32, offsetof(pool_mem_t, time_slicing), "replica"},
        {"mps", K_U32, offsetof(pool_mem_t, mps), "client"},
        {"ambient_c", K_F64, offsetof(pool_mem_t, ambient_c), "C"},
        {"throttle_w", K_F64, offsetof(pool_mem_t, throttle_w), "W"},
    };
    size_t ln = 1, lg = 1, lm = 1;
    for (size_t i = 0; i < meta->n_pools; i++) {
        ln = fs_rs_max_len(ln, meta->pools[i].name);
        lg = fs_rs_max_len(lg, meta->pools[i].gpu);
        lm = fs_rs_max_len(lm, meta->pools[i].mig);
    }
    size_t strsz[] = {0, ln, lg, 0, 0, lm, 0, 0, 0, 0, 0};
    size_t stroff[] = {0, sizeof(pool_mem_t), sizeof(pool_mem_t) + ln, 0, 0,
                       sizeof(pool_mem_t) + ln + lg, 0, 0, 0, 0, 0};
    _Static_assert(N_OF(strsz) == N_OF(cols) && N_OF(stroff) == N_OF(cols), "one per column");
    table_spec_t t = {"pools", "fleetsim pools", cols, N_OF(cols), strsz, stroff,
                      SMALL_CHUNK_ROWS};
    int rc = fs_rs_make_table(fid, c, &t, err);
    if (rc != 0 || meta->n_pools == 0)
        return rc;

    size_t stride = fs_rs_round_up8(sizeof(pool_mem_t) + ln + lg + lm);
    unsigned char *buf = fs_calloc(meta->n_pools, stride);
    if (!buf)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory writing /pools", c->file);
    for (size_t i = 0; i < meta->n_pools; i++) {
        const fs_pool_info_t *p = &meta->pools[i];
        pool_mem_t m = {(uint32_t)i, p->nodes, p->gpus_per_node, p->power_cap_w,
                        p->time_slicing, p->mps, p->ambient_c, p->throttle_w};
        unsigned char *row = buf + i * stride;
        memcpy(row, &m, sizeof m);
        if (p->name)
            memcpy(row + stroff[1], p->name, strlen(p->name));
        if (p->gpu)
            memcpy(row + stroff[2], p->gpu, strlen(p->gpu));
        if (p->mig)
            memcpy(row + stroff[5], p->mig, strlen(p->mig));
    }
    rc = fs_rs_append_rows(fid, c, &t, stride, meta->n_pools, buf, err);
    fs_free(buf);
    return rc;
}

int fs_rs_write_tenants(hid_t fid, h5call_t *c, const fs_tenant_row_t *rows, size_t n,
                         const char *const *names, size_t n_names, fs_error_t *err)
{
    size_t ln = 1;
    for (size_t i = 0; i < n; i++) {
        int32_t t = rows[i].tenant;
        if (names && t >= 0 && (size_t)t < n_names)
            ln = fs_rs_max_len(ln, names[t]);
    }
    size_t strsz[N_OF(tenant_cols)] = {0, ln};
    table_spec_t t = {"tenants", "fleetsim tenants", tenant_cols, N_OF(tenant_cols), strsz,
                      NULL, SMALL_CHUNK_ROWS};
    int rc = fs_rs_make_table(fid, c, &t, err);
    if (rc != 0 || n == 0)
        return rc;

    size_t stride = fs_rs_round_up8(TENANT_NAME_OFF + ln);
    unsigned char *buf = fs_calloc(n, stride);
    if (!buf)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory writing /tenants", c->file);
    for (size_t i = 0; i < n; i++) {
        const fs_tenant_row_t *r = &rows[i];
        tenant_mem_t m = {r->tenant, r->jobs, r->jobs_completed, r->gpu_hours, r->wait_mean,
                          r->wait_p50, r->wait_p95, r->wait_p99, r->jct_mean, r->jct_p95,
                          r->queued_mean, r->preemptions, r->preempt_lost_gpu_hours,
                          r->borrowed_gpu_hours, r->lent_gpu_hours, r->held_gpu_hours,
                          r->computing_gpu_hours, r->redo_gpu_hours, r->ckpt_gpu_hours,
                          r->startup_gpu_hours, r->recovering_gpu_hours,
                          r->borrowed_cpu_core_hours, r->lent_cpu_core_hours,
                          r->borrowed_memory_gib_hours, r->lent_memory_gib_hours,
                          r->borrowed_pod_hours, r->lent_pod_hours};
        unsigned char *row = buf + i * stride;
        memcpy(row, &m, sizeof m);
        const char *name = names && r->tenant >= 0 && (size_t)r->tenant < n_names
                               ? names[r->tenant] : NULL;
        if (name)
            memcpy(row + TENANT_NAME_OFF, name, strlen(name));
    }
    rc = fs_rs_append_rows(fid, c, &t, stride, n, buf, err);
    fs_free(buf);
    return rc;
}

/* ---- skipped trace rows -------------------------------------------------- */

/* The memory (= file) row of rows_skipped_by_reason: the reason padded to
 * SKIP_REASON_LEN bytes, then the count (8-byte aligned). */
#define SKIP_REASON_LEN 64
typedef struct skip_mem {
    char reason[SKIP_REASON_LEN];
    uint64_t count;
} skip_mem_t;

static int write_skipped(fs_results_t *r, h5call_t *c, const skip_mem_t *rows, size_t n,
                         fs_error_t *err)
{
    int rc = 0;
    const char *step = "writing attribute rows_skipped_by_reason";
    hid_t st = H5I_INVALID_HID, ct = H5I_INVALID_HID, sid = H5I_INVALID_HID;
    hid_t aid = H5I_INVALID_HID;
    hsize_t dims[1] = {n};
    H5TRY(st = fs_rs_kind_file_type(K_STR, SKIP_REASON_LEN), step);
    H5TRY(ct = H5Tcreate(H5T_COMPOUND, sizeof(skip_mem_t)), step);
    H5TRY(H5Tinsert(ct, "reason", offsetof(skip_mem_t, reason), st), step);
    H5TRY(H5Tinsert(ct, "count", offsetof(skip_mem_t, count), H5T_STD_U64LE), step);
    H5TRY(sid = H5Screate_simple(1, dims, NULL), step);
    H5TRY(aid = H5Acreate2(r->fid, "rows_skipped_by_reason", ct, sid, H5P_DEFAULT, H5P_DEFAULT),
          step);
    H5TRY(H5Awrite(aid, ct, rows), step);
out:
    CLOSE(H5Aclose, aid);
    CLOSE(H5Sclose, sid);
    CLOSE(H5Tclose, ct);
    CLOSE(H5Tclose, st);
    return rc;
}

int fs_results_set_skipped(fs_results_t *r, const char *const *reasons, const uint64_t *counts,
                           size_t n, fs_error_t *err)
{
    if (!r || (n && (!reasons || !counts)))
        return fs_error_set(err, FS_EINVAL, "results file: skipped rows without a file or reasons");
    if (n == 0)
        return 0;
    int rc = fs_rs_writer_drain(r, err);
    if (rc)
        return rc;
    skip_mem_t *rows = fs_calloc(n, sizeof *rows);
    if (!rows)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory writing skip reasons", r->path);
    for (size_t i = 0; i < n; i++) {
        const char *s = reasons[i] ? reasons[i] : "";
        size_t len = strlen(s);
        memcpy(rows[i].reason, s, len < SKIP_REASON_LEN ? len : SKIP_REASON_LEN);
        rows[i].count = counts[i];
    }
    h5call_t c;
    h5lock_t l = lock_of(r);
    h5_enter(l, &c, r->tmp);
    rc = write_skipped(r, &c, rows, n, err);
    h5_leave(l, &c);
    fs_free(rows);
    return rc;
}

