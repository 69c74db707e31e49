/*
 * fs_results_cost: the cost tables /cost (per day and pool), /cost_pools
 * and /cost_tenants (models/fs_cost.h; docs/cost.md).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fs_results_int.h"

#include <string.h>

#include "../sim/fs_alloc.h"

/* ---- cost (models/fs_cost.h; docs/cost.md) ------------------------------ */

/* /cost and /cost_pools memory row. */
typedef struct cost_mem {
    int32_t day;            /* -1 in /cost_pools */
    uint32_t pool;
    double capex, energy, colocation, ops, cloud, total, energy_kwh, idle;
    double gpu_hours_owned, gpu_hours_busy;
    double carbon_kg, carbon_embodied_kg;
    double unit_cost, lost_gpu_hours, failures;   /* /cost_pools only */
    double preempt_lost_gpu_hours, preemptions;   /* /cost_pools only */
} cost_mem_t;

#define COST_COL(name, kind, unit) {#name, kind, offsetof(cost_mem_t, name), unit}
#define COST_COMMON                                                                          \
    COST_COL(pool, K_U32, "-"), COST_COL(capex, K_F64, "USD"), COST_COL(energy, K_F64, "USD"), \
    COST_COL(colocation, K_F64, "USD"), COST_COL(ops, K_F64, "USD"),                          \
    COST_COL(cloud, K_F64, "USD"), COST_COL(total, K_F64, "USD"),                             \
    COST_COL(energy_kwh, K_F64, "kWh"), COST_COL(idle, K_F64, "USD"),                         \
    COST_COL(gpu_hours_owned, K_F64, "GPU-h"), COST_COL(gpu_hours_busy, K_F64, "GPU-h"),     \
    COST_COL(carbon_kg, K_F64, "kgCO2e"), COST_COL(carbon_embodied_kg, K_F64, "kgCO2e")
static const col_t cost_cols[] = {COST_COL(day, K_I32, "d"), COST_COMMON};
static const col_t cost_pool_cols[] = {
    COST_COMMON, COST_COL(unit_cost, K_F64, "USD/GPU-h"), COST_COL(lost_gpu_hours, K_F64, "GPU-h"),
    COST_COL(failures, K_F64, "USD"), COST_COL(preempt_lost_gpu_hours, K_F64, "GPU-h"),
    COST_COL(preemptions, K_F64, "USD")};

static cost_mem_t cost_row(int32_t day, uint32_t pool, const fs_cost_cell_t *c)
{
    return (cost_mem_t){.day = day, .pool = pool, .capex = c->capex, .energy = c->energy,
                        .colocation = c->colocation, .ops = c->ops, .cloud = c->cloud,
                        .total = c->total, .energy_kwh = c->energy_kwh, .idle = c->idle,
                        .gpu_hours_owned = c->gpu_s_owned / 3600.0,
                        .gpu_hours_busy = c->gpu_s_busy / 3600.0, .carbon_kg = c->carbon_kg,
                        .carbon_embodied_kg = c->carbon_embodied_kg};
}

static int write_cost_cells(hid_t fid, h5call_t *c, const fs_cost_report_t *k, fs_error_t *err)
{
    size_t n = k->n_days * k->n_pools;
    /* written once: chunks of its rows (rounded up), not CHUNK_ROWS padded rows */
    hsize_t chunk = n >= CHUNK_ROWS ? CHUNK_ROWS
                                    : (hsize_t)((n + SMALL_CHUNK_ROWS - 1) / SMALL_CHUNK_ROWS * SMALL_CHUNK_ROWS);
    table_spec_t t = {"cost", "fleetsim cost per day and pool", cost_cols, N_OF(cost_cols),
                      NULL, NULL, chunk ? chunk : SMALL_CHUNK_ROWS};
    table_spec_t tp = {"cost_pools", "fleetsim cost per pool", cost_pool_cols,
                       N_OF(cost_pool_cols), NULL, NULL, SMALL_CHUNK_ROWS};
    cost_mem_t *buf = fs_calloc(n > k->n_pools ? n : k->n_pools + 1, sizeof *buf);
    if (!buf)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory writing /cost", c->file);
    int rc = fs_rs_make_table(fid, c, &t, err);
    for (size_t i = 0; i < n; i++)
        buf[i] = cost_row((int32_t)(i / k->n_pools), (uint32_t)(i % k->n_pools), &k->cells[i]);
    if (!rc)
        rc = fs_rs_append_rows(fid, c, &t, sizeof *buf, n, buf, err);
    if (!rc)
        rc = fs_rs_make_table(fid, c, &tp, err);
    for (uint32_t p = 0; !rc && p < k->n_pools; p++) {
        buf[p] = cost_row(-1, p, &k->pools[p]);
        buf[p].unit_cost = k->unit[p];
        buf[p].lost_gpu_hours = k->lost_gpu_hours[p];
        double pre = k->preempt_lost_gpu_hours[p], fail = k->lost_gpu_hours[p] - pre;
        buf[p].failures = fail > 1e-9 * k->lost_gpu_hours[p] ? fail * k->unit[p] : 0.0;
        buf[p].preempt_lost_gpu_hours = pre;
        buf[p].preemptions = pre > 0 ? pre * k->unit[p] : 0.0;
    }
    if (!rc)
        rc = fs_rs_append_rows(fid, c, &tp, sizeof *buf, k->n_pools, buf, err);
    fs_free(buf);
    return rc;
}

/* /cost_tenants memory row: this struct, then the name (fixed length). */
typedef struct cost_tenant_mem {
    int32_t tenant;
    double gpu_hours, lost_gpu_hours, showback, chargeback;
    double preempt_lost_gpu_hours;
    double carbon_kg;
} cost_tenant_mem_t;

static int write_cost_tenants(hid_t fid, h5call_t *c, const fs_cost_report_t *k,
                              const char *const *names, size_t n_names, fs_error_t *err)
{
    static const col_t cols[] = {
        {"tenant", K_I32, offsetof(cost_tenant_mem_t, tenant), "-"},
        {"name", K_STR, sizeof(cost_tenant_mem_t), "-"},
        {"gpu_hours", K_F64, offsetof(cost_tenant_mem_t, gpu_hours), "GPU-h"},
        {"lost_gpu_hours", K_F64, offsetof(cost_tenant_mem_t, lost_gpu_hours), "GPU-h"},
        {"showback", K_F64, offsetof(cost_tenant_mem_t, showback), "USD"},
        {"chargeback", K_F64, offsetof(cost_tenant_mem_t, chargeback), "USD"},
        {"preempt_lost_gpu_hours", K_F64, offsetof(cost_tenant_mem_t, preempt_lost_gpu_hours),
         "GPU-h"},
        {"carbon_kg", K_F64, offsetof(cost_tenant_mem_t, carbon_kg), "kgCO2e"},
    };
    size_t ln = 1;
    for (size_t i = 0; i < k->n_tenants; i++) {
        int32_t t = k->tenants[i].tenant;
        if (names && t >= 0 && (size_t)t < n_names)
            ln = fs_rs_max_len(ln, names[t]);
    }
    size_t strsz[N_OF(cols)] = {0, ln};
    table_spec_t t = {"cost_tenants", "fleetsim cost per tenant", cols, N_OF(cols), strsz, NULL,
                      SMALL_CHUNK_ROWS};
    int rc = fs_rs_make_table(fid, c, &t, err);
    if (rc || k->n_tenants == 0)
        return rc;
    size_t stride = fs_rs_round_up8(sizeof(cost_tenant_mem_t) + ln);
    unsigned char *buf = fs_calloc(k->n_tenants, stride);
    if (!buf)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory writing /cost_tenants", c->file);
    for (size_t i = 0; i < k->n_tenants; i++) {
        const fs_cost_tenant_t *r = &k->tenants[i];
        cost_tenant_mem_t m = {r->tenant, r->gpu_hours, r->lost_gpu_hours, r->showback,
                               r->chargeback, r->preempt_lost_gpu_hours, r->carbon_kg};
        memcpy(buf + i * stride, &m, sizeof m);
        const char *name = names && r->tenant >= 0 && (size_t)r->tenant < n_names
                               ? names[r->tenant] : NULL;
        if (name)
            memcpy(buf + i * stride + sizeof m, name, strlen(name));
    }
    rc = fs_rs_append_rows(fid, c, &t, stride, k->n_tenants, buf, err);
    fs_free(buf);
    return rc;
}

int fs_results_add_cost(fs_results_t *r, const fs_cost_report_t *cost,
                        const char *const *tenant_names, size_t n_tenants, fs_error_t *err)
{
    if (!r || !cost)
        return fs_error_set(err, FS_EINVAL, "results file: cost without an open file");
    int rc = fs_rs_writer_drain(r, err);
    if (rc)
        return rc;
    /* under the caller's HDF5 lock like every other call (a sweep's threads) */
    h5call_t c;
    h5lock_t l = lock_of(r);
    h5_enter(l, &c, r->tmp);
    rc = write_cost_cells(r->fid, &c, cost, err);
    if (!rc)
        rc = write_cost_tenants(r->fid, &c, cost, tenant_names, n_tenants, err);
    h5_leave(l, &c);
    return rc;
}

