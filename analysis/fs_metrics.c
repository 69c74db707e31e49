#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* O_DIRECT (the text writer) */
#endif

#include "fs_metrics.h"
#include "fs_h5read.h"
#include "fs_metrics_links.h"
#include "fs_metrics_queues.h"
#include "fs_metrics_sink.h"
#include "fs_tsdb.h"
#include "../models/fs_catalog.h"
#include "../models/fs_mig.h"
#include "../models/fs_power.h"
#include "../models/fs_xid.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_out.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* The thermal model (fs_metrics.h; sources in docs/observability.md); the
 * power model is models/fs_power.h, shared with the model's power caps. */
#define C_PER_W FS_THERMAL_C_PER_W     /* models/fs_power.h */
#define TAU_S FS_THERMAL_TAU_S
/* DCGM_FI_DRIVER_VERSION: a current data-centre driver (R550) */
#define FS_METRICS_DRIVER "550.127.08"

/* One job attempt on one GPU. */
typedef struct seg {
    double start, ready, end;
    double share;           /* gpu_milli / 1000 */
    double duty, sm, tensor, dram, fb;
    uint64_t job;
    int32_t tenant;
} seg_t;

/* A GPU, or one MIG instance of a GPU (docs/observability.md "MIG"). */
typedef struct gpu {
    uint32_t node, index;   /* global node, index in the node */
    int32_t inst;           /* a MIG instance: its index in the GPU's layout; -1 a GPU */
    uint32_t first_inst;    /* a MIG GPU: its instances are insts[first_inst ..] */
    uint32_t n_inst;        /* ... n_inst of them (every layout it had, in time order); 0:
                               not under MIG */
    const fs_mig_profile_t *prof;   /* a MIG instance: its profile */
    double from, to;        /* a MIG instance: its layout is in force in [from, to) (s;
                               /mig_layouts; -inf and +inf for a static layout) */
    seg_t *s;
    size_t n, cap;
    double busy_until;      /* whole-GPU jobs: the GPU is taken until then (assignment) */
    double *xid;            /* (from, to, code) triples of Xid errors, a burst's codes in
                               the order the driver logs them (fs_xid_burst) */
    size_t n_xid, cap_xid;
    double *reset;          /* times the GPU was reset (the end of a soft or hard repair) */
    size_t n_reset, cap_reset;
} gpu_t;

/* A growing line buffer for one series' label prefix. */
typedef struct sbuf { char *p; size_t n, cap; int oom; } sbuf_t;

/* The text output (tw_*): one write(2) per TW_CHUNK bytes from a buffer
 * aligned for direct I/O, with O_DIRECT where the file system takes it. */
typedef struct twriter {
    int fd;
    char *mem, *p;      /* mem: as allocated; p: aligned to TW_ALIGN (NULL: not open) */
    size_t n;           /* bytes waiting in p */
    int direct;         /* fd is open with O_DIRECT */
    int err;            /* the first write error (errno) */
} twriter_t;

typedef struct node_info {
    uint32_t pool, local, first_gpu, gpn;
} node_info_t;

/* the export in progress (fs_msink_t for the family modules: fs_metrics_sink.h) */
typedef struct fs_msink {
    const char *results, *out;
    fs_error_t *err;
    fs_h5file_t *f;
    size_t n_pools;
    char **pool_name, **pool_gpu;
    double *pool_nodes, *pool_gpn;
    double *pool_cap;       /* /pools.power_cap_w (0: none, or a file without it) */
    double *pool_ambient;   /* /pools.ambient_c (NULL: a file without it, 30 C) */
    double *pool_throttle;  /* /pools.throttle_w, the thermal power limit (0: none) */
    node_info_t *nodes;
    uint32_t n_nodes;
    gpu_t *gpus;
    uint32_t n_gpus;
    gpu_t *insts;           /* MIG instances of every MIG GPU */
    uint32_t n_insts;
    char **pool_mig;        /* /pools.mig ("" none; NULL: a file without the column) */
    uint8_t *pool_on;       /* the pools --pools selects (all without it) */
    char **tenant_name;
    double *tenant_idx;
    size_t n_tenants;
    double end_time;
    twriter_t tw;           /* the text output (not --tsdb) */
    const fs_metrics_opts_t *o;
    fs_metrics_stats_t st;
    /* scratch for one GPU and family: (label key, time, value) */
    struct sample { uint64_t key; int32_t who; uint32_t k; double v; } *smp;
    size_t cap_smp;
    sbuf_t line;            /* the current series' label prefix */
    /* the current series' labels: names, and values NUL-separated in lv */
    sbuf_t lv;
    const char *lname[32];
    size_t loff[32], nl;
    int64_t *tt, *st_t;     /* sample times (ms): with staleness markers, as built */
    double *tv, *st_v;
    size_t cap_tt, cap_tv, cap_st_t, cap_st_v;
    uint32_t k_lo, k_hi;    /* the sample instants written (--from, --to) */
    fs_tsdb_t *tsdb;        /* --tsdb: the block writer */
    int64_t block_ms;
    uint8_t fam_on[FS_METRICS_MAX_FAMILIES];  /* --families (families[], the scheduler's,
                                                 then fs_metrics_queues.c's) */
    int sched_on;
    double sched_note;      /* the scheduler's series were left out: /timeline's interval */
    double *tl_t;           /* /timeline times */
    size_t n_tl;
    char **service_name;    /* /services names */
    size_t n_services;
    /* counting (estimate): put_series counts what it would write, writes nothing */
    int counting;
    uint64_t cnt_series, cnt_samples, cnt_bytes;
    uint8_t *xbuf;          /* counting --tsdb: one chunk encoded */
} ctx_t;

typedef enum fam_kind {
    F_UTIL, F_GR, F_SM, F_TENSOR, F_DRAM, F_FB_USED, F_FB_FREE, F_POWER, F_ENERGY, F_TEMP, F_XID,
    F_XID_COUNT, F_DBE
} fam_kind_t;

typedef struct family {
    const char *name, *type, *help;
    fam_kind_t kind;
} family_t;

/* dcgm-exporter's names and help texts (etc/default-counters.csv).  Its
 * energy "counter" keeps its name (dashboards query it) and is typed gauge:
 * OpenMetrics would otherwise require samples named ..._total, which the
 * Prometheus text format (promtool check metrics) reads as another metric. */
static const family_t families[] = {
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", F_UTIL},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active (0 to 1).",
     F_GR},
    {"DCGM_FI_PROF_SM_ACTIVE", "gauge",
     "The ratio of cycles an SM has at least 1 warp assigned (0 to 1).", F_SM},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge",
     "Ratio of cycles the tensor (HMMA) pipe is active (0 to 1).", F_TENSOR},
    {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge",
     "Ratio of cycles the device memory interface is active sending or receiving data (0 to 1).",
     F_DRAM},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", F_FB_USED},
    {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", F_FB_FREE},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", F_POWER},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "gauge",
     "Total energy consumption since boot (in mJ).", F_ENERGY},
    {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", F_TEMP},
    {"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", F_XID},
    /* dcgm-exporter's own Xid count over a window (--xid-count-window-size
     * there, --xid-window here), one series per GPU and Xid code (label xid) */
    {"DCGM_EXP_XID_ERRORS_COUNT", "gauge", "Xid errors within the last --xid-window seconds.",
     F_XID_COUNT},
    /* a counter in dcgm-exporter's CSV, typed gauge as the energy above */
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "gauge",
     "Double-bit ECC errors since the GPU was last reset (volatile).", F_DBE},
};

static int fail(ctx_t *c, int code, const char *what)
{
    return fs_error_set(c->err, code, "%s: %s", c->results, what);
}

/* ---- reading ------------------------------------------------------------------- */

static int read_col(ctx_t *c, const char *table, const char *col, size_t n, double **out)
{
    *out = fs_malloc((n ? n : 1) * sizeof **out);
    if (!*out)
        return fail(c, FS_ENOMEM, "out of memory");
    return n ? fs_h5read_f64(c->f, table, col, *out, c->err) : 0;
}

/* Does table have the column?  (Files written before it was added do not.) */
static int has_column(ctx_t *c, const char *table, const char *col, int *out)
{
    char **names = NULL;
    int *kinds = NULL;
    size_t n = 0;
    int rc = fs_h5read_columns(c->f, table, &names, &kinds, &n, c->err);
    *out = 0;
    for (size_t i = 0; !rc && i < n; i++)
        if (strcmp(names[i], col) == 0)
            *out = 1;
    fs_h5read_free_strings(names, n);
    fs_free(kinds);
    return rc;
}

/* A re-cut GPU's layouts (/mig_layouts; docs/mig.md): row order is time order. */
typedef struct recut {
    uint32_t gpu;           /* global GPU */
    uint32_t row;
    double time;
    fs_mig_layout_t lay;
} recut_t;

static int cmp_recut(const void *a, const void *b)
{
    const recut_t *x = a, *y = b;
    if (x->gpu != y->gpu)
        return x->gpu < y->gpu ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* The layout text of a /pools.mig or /mig_layouts value, built as the run
 * built it (the same instances in the same order). */
static int build_layout(ctx_t *c, const fs_mig_model_t *m, const char *text, const char *where,
                        fs_mig_layout_t *out)
{
    fs_error_t e;
    fs_mig_spec_t spec;
    if (fs_mig_layout_parse(m, text, &spec, NULL, &e) || fs_mig_layout_build(m, &spec, out, &e))
        return fs_error_set(c->err, FS_EINVAL, "%s: %s: %s", c->results, where, e.msg);
    return 0;
}

/* /mig_layouts (a run that re-partitions): every row, its GPU and layout,
 * sorted by GPU then time.  *out NULL and *n 0 without the table. */
static int read_recuts(ctx_t *c, const fs_mig_model_t **mm, recut_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!fs_h5read_has(c->f, "mig_layouts"))
        return 0;
    size_t rows = 0;
    int rc = fs_h5read_rows(c->f, "mig_layouts", &rows, c->err);
    if (rc || rows == 0)
        return rc;
    double *t = NULL, *node = NULL, *gpu = NULL;
    char **text = fs_calloc(rows + 1, sizeof *text);
    recut_t *r = fs_calloc(rows, sizeof *r);
    if (!text || !r)
        rc = fail(c, FS_ENOMEM, "out of memory");
    if (!rc && !(rc = read_col(c, "mig_layouts", "time", rows, &t)) &&
        !(rc = read_col(c, "mig_layouts", "node", rows, &node)) &&
        !(rc = read_col(c, "mig_layouts", "gpu", rows, &gpu)))
        rc = fs_h5read_str(c->f, "mig_layouts", "layout", text, c->err);
    for (size_t i = 0; !rc && i < rows; i++) {
        if (!(node[i] >= 0 && node[i] < c->n_nodes) ||
            !(gpu[i] >= 0 && gpu[i] < c->nodes[(uint32_t)node[i]].gpn) ||
            !mm[c->nodes[(uint32_t)node[i]].pool]) {
            rc = fail(c, FS_EINVAL, "/mig_layouts: a row outside the MIG GPUs of /pools");
            break;
        }
        const node_info_t *ni = &c->nodes[(uint32_t)node[i]];
        r[i] = (recut_t){.gpu = ni->first_gpu + (uint32_t)gpu[i], .row = (uint32_t)i, .time = t[i]};
        rc = build_layout(c, mm[ni->pool], text[i], "/mig_layouts: layout", &r[i].lay);
    }
    if (!rc)
        qsort(r, rows, sizeof *r, cmp_recut);
    if (text)
        fs_h5read_free_strings(text, rows);
    fs_free(t);
    fs_free(node);
    fs_free(gpu);
    if (rc) {
        fs_free(r);
        return rc;
    }
    *out = r;
    *n = rows;
    return 0;
}

/* MIG pools (/pools.mig): every GPU of the pool holds the layout, built as the
 * run built it (fs_mig_layout_build: the same instances in the same order).
 * A GPU that /mig_layouts re-cuts has the instances of each of its layouts,
 * each in force from its row's time to the next one's. */
static int read_mig(ctx_t *c)
{
    int has = 0;
    int rc = has_column(c, "pools", "mig", &has);
    if (rc || !has)
        return rc;
    if (!(c->pool_mig = fs_calloc(c->n_pools + 1, sizeof *c->pool_mig)))
        return fail(c, FS_ENOMEM, "out of memory");
    if ((rc = fs_h5read_str(c->f, "pools", "mig", c->pool_mig, c->err)))
        return rc;
    fs_mig_layout_t *lay = fs_calloc(c->n_pools + 1, sizeof *lay);
    const fs_mig_model_t **mm = fs_calloc(c->n_pools + 1, sizeof *mm);
    recut_t *rc_rows = NULL;
    size_t n_rc = 0;
    uint64_t n = 0;
    for (size_t p = 0; !rc && lay && mm && p < c->n_pools; p++) {
        if (!c->pool_mig[p][0])
            continue;
        fs_error_t e;
        if (!(mm[p] = fs_mig_model_lookup(c->pool_gpu[p], &e))) {
            rc = fs_error_set(c->err, FS_EINVAL, "%s: /pools: pool '%s': mig: %s", c->results,
                              c->pool_name[p], e.msg);
            break;
        }
        char where[160];
        snprintf(where, sizeof where, "/pools: pool '%s': mig", c->pool_name[p]);
        if ((rc = build_layout(c, mm[p], c->pool_mig[p], where, &lay[p])))
            break;
        n += (uint64_t)c->pool_nodes[p] * (uint64_t)c->pool_gpn[p] * lay[p].ninst;
    }
    if (!rc && (!lay || !mm))
        rc = fail(c, FS_ENOMEM, "out of memory");
    if (!rc)
        rc = read_recuts(c, mm, &rc_rows, &n_rc);
    for (size_t i = 0; !rc && i < n_rc; i++)
        n += rc_rows[i].lay.ninst;
    if (!rc && n > UINT32_MAX)
        rc = fail(c, FS_EINVAL, "/pools: more MIG instances than fleetsim models");
    if (!rc && n && !(c->insts = fs_calloc(n, sizeof *c->insts)))
        rc = fail(c, FS_ENOMEM, "out of memory");
    size_t r = 0;
    for (uint32_t g = 0; !rc && g < c->n_gpus; g++) {
        gpu_t *gp = &c->gpus[g];
        uint32_t p = c->nodes[gp->node].pool;
        if (!c->pool_mig[p][0])
            continue;
        gp->first_inst = c->n_insts;
        /* its layouts: the static one, then its /mig_layouts rows */
        double from = -INFINITY;
        const fs_mig_layout_t *l = &lay[p];
        for (;;) {
            double to = r < n_rc && rc_rows[r].gpu == g ? rc_rows[r].time : INFINITY;
            for (unsigned i = 0; i < l->ninst; i++)
                c->insts[c->n_insts++] = (gpu_t){.node = gp->node, .index = gp->index,
                                                 .inst = (int32_t)i,
                                                 .prof = &mm[p]->profile[l->inst[i].profile],
                                                 .busy_until = -INFINITY, .from = from,
                                                 .to = to};
            if (!(r < n_rc && rc_rows[r].gpu == g))
                break;
            from = to;
            l = &rc_rows[r++].lay;
        }
        gp->n_inst = c->n_insts - gp->first_inst;
    }
    fs_free(rc_rows);
    fs_free(lay);
    fs_free(mm);
    return rc;
}

/* The instance of GPU gp with index `in` in the layout in force at t, or
 * NULL. */
static gpu_t *inst_at(ctx_t *c, const gpu_t *gp, uint32_t in, double t)
{
    for (uint32_t i = 0; i < gp->n_inst; i++) {
        gpu_t *x = &c->insts[gp->first_inst + i];
        if (x->inst == (int32_t)in && x->from <= t && t < x->to)
            return x;
    }
    return NULL;
}

/* --pools: every name must be a pool of /pools. */
static int select_pools(ctx_t *c)
{
    if (!(c->pool_on = fs_calloc(c->n_pools + 1, 1)))
        return fail(c, FS_ENOMEM, "out of memory");
    if (!c->o->pools) {
        memset(c->pool_on, 1, c->n_pools);
        return 0;
    }
    for (const char *s = c->o->pools; *s;) {
        size_t n = strcspn(s, ",");
        size_t p = 0;
        while (p < c->n_pools && !(strlen(c->pool_name[p]) == n && memcmp(c->pool_name[p], s, n) == 0))
            p++;
        if (p == c->n_pools) {
            char names[256] = "";
            for (size_t q = 0; q < c->n_pools && strlen(names) + strlen(c->pool_name[q]) + 3 < sizeof names; q++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", q ? ", " : "",
                         c->pool_name[q]);
            return fs_error_set(c->err, FS_EINVAL, "--pools: '%.*s' is not a pool of %s (its pools: %s)",
                                (int)n, s, c->results, names);
        }
        c->pool_on[p] = 1;
        s += n;
        if (*s == ',')
            s++;
    }
    return 0;
}

/* Is GPU g exported (--pools, --nodes)? */
static int gpu_selected(const ctx_t *c, const gpu_t *g)
{
    const node_info_t *ni = &c->nodes[g->node];
    return c->pool_on[ni->pool] && ni->local >= c->o->node_lo && ni->local <= c->o->node_hi;
}

static int read_fleet(ctx_t *c)
{
    int rc = fs_h5read_rows(c->f, "pools", &c->n_pools, c->err);
    if (rc)
        return rc;
    if (!(c->pool_name = fs_calloc(c->n_pools + 1, sizeof *c->pool_name)) ||
        !(c->pool_gpu = fs_calloc(c->n_pools + 1, sizeof *c->pool_gpu)))
        return fail(c, FS_ENOMEM, "out of memory");
    if ((rc = fs_h5read_str(c->f, "pools", "name", c->pool_name, c->err)) ||
        (rc = fs_h5read_str(c->f, "pools", "gpu", c->pool_gpu, c->err)) ||
        (rc = read_col(c, "pools", "nodes", c->n_pools, &c->pool_nodes)) ||
        (rc = read_col(c, "pools", "gpus_per_node", c->n_pools, &c->pool_gpn)))
        return rc;
    uint64_t nodes = 0, gpus = 0;
    for (size_t p = 0; p < c->n_pools; p++) {
        nodes += (uint64_t)c->pool_nodes[p];
        gpus += (uint64_t)c->pool_nodes[p] * (uint64_t)c->pool_gpn[p];
    }
    if (nodes > UINT32_MAX || gpus > UINT32_MAX)
        return fail(c, FS_EINVAL, "/pools: more nodes or GPUs than fleetsim models");
    c->n_nodes = (uint32_t)nodes;
    c->n_gpus = (uint32_t)gpus;
    if (!(c->nodes = fs_calloc(nodes ? nodes : 1, sizeof *c->nodes)) ||
        !(c->gpus = fs_calloc(gpus ? gpus : 1, sizeof *c->gpus)))
        return fail(c, FS_ENOMEM, "out of memory");
    uint32_t node = 0, g = 0;
    for (size_t p = 0; p < c->n_pools; p++)
        for (uint32_t k = 0; k < (uint32_t)c->pool_nodes[p]; k++, node++) {
            uint32_t gpn = (uint32_t)c->pool_gpn[p];
            c->nodes[node] = (node_info_t){(uint32_t)p, k, g, gpn};
            for (uint32_t i = 0; i < gpn; i++, g++)
                c->gpus[g] = (gpu_t){.node = node, .index = i, .inst = -1, .busy_until = -INFINITY};
        }
    if ((rc = read_mig(c)) || (rc = select_pools(c)))
        return rc;
    int has_cap = 0;
    if ((rc = has_column(c, "pools", "power_cap_w", &has_cap)) ||
        (has_cap && (rc = read_col(c, "pools", "power_cap_w", c->n_pools, &c->pool_cap))))
        return rc;
    int has_thermal = 0;    /* files from before thermal throttling: 30 C, no limit */
    if ((rc = has_column(c, "pools", "throttle_w", &has_thermal)) ||
        (has_thermal && ((rc = read_col(c, "pools", "ambient_c", c->n_pools, &c->pool_ambient)) ||
                         (rc = read_col(c, "pools", "throttle_w", c->n_pools, &c->pool_throttle)))))
        return rc;
    /* tenants (may be absent or empty) */
    if (fs_h5read_has(c->f, "tenants")) {
        if ((rc = fs_h5read_rows(c->f, "tenants", &c->n_tenants, c->err)))
            return rc;
        if (!(c->tenant_name = fs_calloc(c->n_tenants + 1, sizeof *c->tenant_name)))
            return fail(c, FS_ENOMEM, "out of memory");
        if (c->n_tenants && ((rc = fs_h5read_str(c->f, "tenants", "name", c->tenant_name, c->err)) ||
                             (rc = read_col(c, "tenants", "tenant", c->n_tenants, &c->tenant_idx))))
            return rc;
    }
    double *end = NULL;
    if ((rc = read_col(c, "summary", "end_time", 1, &end)))
        return rc;
    c->end_time = end[0];
    fs_free(end);
    return 0;
}

static const char *tenant_of(const ctx_t *c, int32_t t)
{
    for (size_t i = 0; i < c->n_tenants; i++)
        if (c->tenant_idx && (int32_t)c->tenant_idx[i] == t)
            return c->tenant_name[i];
    return "default";
}

static int seg_add(ctx_t *c, gpu_t *g, const seg_t *s)
{
    if (fs_grow((void **)&g->s, &g->cap, g->n + 1, sizeof *g->s))
        return fail(c, FS_ENOMEM, "out of memory");
    g->s[g->n++] = *s;
    return 0;
}

/* /gpu_intervals.job exactly (n rows): a service replica's id, 2^63 |
 * service << 32 | replica, does not fit a double (fs_h5read_f64). */
static int read_job_ids(ctx_t *c, size_t n, uint64_t *out)
{
    H5E_auto2_t fn;
    void *data;
    H5Eget_auto2(H5E_DEFAULT, &fn, &data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(c->results, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, "gpu_intervals", H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(uint64_t));
    int ok = sp >= 0 && mt >= 0 && H5Sget_simple_extent_npoints(sp) == (hssize_t)n &&
             H5Tinsert(mt, "job", 0, H5T_NATIVE_UINT64) >= 0 &&
             H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0;
    if (mt >= 0)
        H5Tclose(mt);
    if (sp >= 0)
        H5Sclose(sp);
    if (d >= 0)
        H5Dclose(d);
    if (f >= 0)
        H5Fclose(f);
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, fn, data);
    return ok ? 0 : fail(c, FS_EIO, "/gpu_intervals: reading the job ids");
}

typedef struct ival_order { double start; uint64_t job; size_t row; } ival_order_t;

static int cmp_ival(const void *a, const void *b)
{
    const ival_order_t *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->job != y->job)
        return x->job < y->job ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* Reads /gpu_intervals and gives each whole-GPU hold the lowest GPUs of its
 * node free at its start; a share runs on its slot. */
static int read_intervals(ctx_t *c)
{
    size_t n = 0;
    int rc = fs_h5read_has(c->f, "gpu_intervals") ? fs_h5read_rows(c->f, "gpu_intervals", &n, c->err)
                                                   : 0;
    if (rc)
        return rc;
    if (n == 0)
        return fail(c, FS_EINVAL, "no /gpu_intervals rows (run the scenario with "
                    "output.gpu_intervals: true)");
    static const char *const cols[] = {"job", "tenant", "node", "gpus", "gpu_milli", "gpu",
                                       "start", "ready", "end", "duty", "sm", "tensor", "dram", "fb",
                                       "gpu_instance"};
    enum { NC = sizeof cols / sizeof cols[0] };
    double *v[NC] = {0};
    int has_inst = 0;
    ival_order_t *ord = fs_malloc(n * sizeof *ord);
    if (!ord)
        rc = fail(c, FS_ENOMEM, "out of memory");
    if (!rc)
        rc = has_column(c, "gpu_intervals", "gpu_instance", &has_inst);
    for (size_t k = 0; k < NC && !rc; k++) {
        if (k == NC - 1 && !has_inst) {     /* a file from before MIG rows: none */
            if (!(v[k] = fs_malloc(n * sizeof *v[k])))
                rc = fail(c, FS_ENOMEM, "out of memory");
            for (size_t i = 0; !rc && i < n; i++)
                v[k][i] = -1;
            continue;
        }
        rc = read_col(c, "gpu_intervals", cols[k], n, &v[k]);
    }
    uint64_t *ids = NULL;   /* exact ids when a service replica's is there */
    for (size_t i = 0; i < n && !rc && !ids; i++)
        if (v[0][i] >= 9223372036854775808.0) {
            if (!(ids = fs_malloc(n * sizeof *ids)))
                rc = fail(c, FS_ENOMEM, "out of memory");
            else
                rc = read_job_ids(c, n, ids);
        }
    for (size_t i = 0; i < n && !rc; i++)
        ord[i] = (ival_order_t){v[6][i], ids ? ids[i] : (uint64_t)v[0][i], i};
    if (!rc)
        qsort(ord, n, sizeof *ord, cmp_ival);
    for (size_t q = 0; q < n && !rc; q++) {
        size_t i = ord[q].row;
        double node = v[2][i], gpus = v[3][i], milli = v[4][i];
        if (!(node >= 0 && node < c->n_nodes) || !(gpus >= 1) || !(milli >= 1 && milli <= 1000)) {
            rc = fail(c, FS_EINVAL, "/gpu_intervals: a row outside the fleet of /pools");
            break;
        }
        const node_info_t *ni = &c->nodes[(uint32_t)node];
        seg_t s = {.start = v[6][i], .ready = v[7][i], .end = v[8][i], .share = milli / 1000.0,
                   .duty = v[9][i], .sm = v[10][i], .tensor = v[11][i], .dram = v[12][i],
                   .fb = v[13][i], .job = ord[q].job, .tenant = (int32_t)v[1][i]};
        if (v[14][i] >= 0) {    /* a MIG instance: its own series, and its share of the GPU */
            uint32_t gpu = (uint32_t)v[5][i], in = (uint32_t)v[14][i];
            gpu_t *gp = gpu < ni->gpn ? &c->gpus[ni->first_gpu + gpu] : NULL;
            gpu_t *ip = gp && gp->n_inst ? inst_at(c, gp, in, s.start) : NULL;
            if (!ip) {
                rc = fail(c, FS_EINVAL, "/gpu_intervals: a MIG instance that the GPU's layout "
                          "(/pools.mig) does not have");
                break;
            }
            seg_t whole = s;
            whole.share = 1;    /* the instance's activity is relative to the instance */
            if (!(rc = seg_add(c, ip, &whole)))
                rc = seg_add(c, gp, &s);
            continue;
        }
        if (milli < 1000) {
            uint32_t slot = (uint32_t)v[5][i] < ni->gpn ? (uint32_t)v[5][i] : 0;
            rc = seg_add(c, &c->gpus[ni->first_gpu + slot], &s);
            continue;
        }
        uint32_t need = (uint32_t)gpus;
        for (uint32_t k = 0; k < ni->gpn && need > 0; k++) {
            gpu_t *g = &c->gpus[ni->first_gpu + k];
            if (g->busy_until > s.start)
                continue;
            g->busy_until = s.end;
            need--;
            if ((rc = seg_add(c, g, &s)))
                break;
        }
        if (!rc && need > 0)
            rc = fail(c, FS_EINVAL, "/gpu_intervals: a node holds more GPUs than it has");
    }
    for (size_t k = 0; k < NC; k++)
        fs_free(v[k]);
    fs_free(ord);
    fs_free(ids);
    return rc;
}

/* Did a job hold GPU g just before t (a fault at t ends it)? */
static int held_before(const gpu_t *g, double t)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->s[i].start < t && t <= g->s[i].end)
            return 1;
    return 0;
}

static int push3(ctx_t *c, double **a, size_t *n, size_t *cap, double x, double y, double z)
{
    if (fs_grow((void **)a, cap, *n + 3, sizeof **a))
        return fail(c, FS_ENOMEM, "out of memory");
    (*a)[(*n)++] = x;
    (*a)[(*n)++] = y;
    (*a)[(*n)++] = z;
    return 0;
}

/* Xid errors of /failures: a GPU's own, or every GPU of a failed node, from
 * the failure to the end of its repair, each with the Xids that follow it
 * from the same fault on that GPU (fs_xid_burst: 63 after an uncorrectable
 * memory error, 45 where a job was running); and the GPU resets (the end of
 * every soft or hard repair of the GPU or its node, Xid or not), which clear
 * DCGM's volatile ECC counts. */
static int read_xids(ctx_t *c)
{
    size_t n = 0;
    if (!fs_h5read_has(c->f, "failures"))
        return 0;
    int rc = fs_h5read_rows(c->f, "failures", &n, c->err);
    if (rc || n == 0)
        return rc;
    double *t = NULL, *unit = NULL, *rep = NULL, *xid = NULL;
    char **comp = fs_calloc(n + 1, sizeof *comp), **path = fs_calloc(n + 1, sizeof *path);
    if (!comp || !path) {
        fs_free(comp);
        fs_free(path);
        return fail(c, FS_ENOMEM, "out of memory");
    }
    if (!(rc = read_col(c, "failures", "time", n, &t)) &&
        !(rc = read_col(c, "failures", "unit", n, &unit)) &&
        !(rc = read_col(c, "failures", "repair_time", n, &rep)) &&
        !(rc = read_col(c, "failures", "xid", n, &xid)) &&
        !(rc = fs_h5read_str(c->f, "failures", "component", comp, c->err)))
        rc = fs_h5read_str(c->f, "failures", "repair", path, c->err);
    for (size_t i = 0; i < n && !rc; i++) {
        uint32_t lo, hi;
        if (strcmp(comp[i], "gpu") == 0 && unit[i] < c->n_gpus) {
            lo = (uint32_t)unit[i];
            hi = lo + 1;
        } else if (strcmp(comp[i], "node") == 0 && unit[i] < c->n_nodes) {
            lo = c->nodes[(uint32_t)unit[i]].first_gpu;
            hi = lo + c->nodes[(uint32_t)unit[i]].gpn;
        } else {
            continue;
        }
        double to = isfinite(rep[i]) ? t[i] + rep[i] : INFINITY;
        int resets = strcmp(path[i], "none") != 0 && isfinite(to);
        for (uint32_t g = lo; g < hi && !rc; g++) {
            gpu_t *gp = &c->gpus[g];
            if (resets) {
                if (fs_grow((void **)&gp->reset, &gp->cap_reset, gp->n_reset + 1,
                            sizeof *gp->reset)) {
                    rc = fail(c, FS_ENOMEM, "out of memory");
                    break;
                }
                gp->reset[gp->n_reset++] = to;
            }
            if (!(xid[i] > 0))
                continue;
            uint32_t follow[2];
            size_t nf = fs_xid_burst((uint32_t)xid[i], held_before(gp, t[i]), follow);
            rc = push3(c, &gp->xid, &gp->n_xid, &gp->cap_xid, t[i], to, xid[i]);
            for (size_t k = 0; k < nf && !rc; k++)
                rc = push3(c, &gp->xid, &gp->n_xid, &gp->cap_xid, t[i], to, (double)follow[k]);
        }
    }
    fs_free(t);
    fs_free(unit);
    fs_free(rep);
    fs_free(xid);
    fs_h5read_free_strings(comp, n);
    fs_h5read_free_strings(path, n);
    return rc;
}

/* ---- one GPU's state -------------------------------------------------------------- */

typedef struct gstate {
    double duty, sm, tensor, dram, fb;  /* summed over shares, capped at 1 */
    int computing;
    int32_t who;            /* the segment whose labels the sample carries; -1 idle */
} gstate_t;

/* A walk over one GPU's segments (in start order) at times that never
 * decrease: the segments that may hold the GPU at t are [lo, hi), so a
 * sample costs the segments around it, not all of the GPU's. */
typedef struct cursor {
    size_t lo, hi;
} cursor_t;

static void cursor_to(const gpu_t *g, cursor_t *cu, double t)
{
    while (cu->hi < g->n && g->s[cu->hi].start <= t)
        cu->hi++;
    while (cu->lo < cu->hi && g->s[cu->lo].end <= t)
        cu->lo++;
}

static void state_at(const gpu_t *g, cursor_t *cu, double t, gstate_t *s)
{
    memset(s, 0, sizeof *s);
    s->who = -1;
    cursor_to(g, cu, t);
    for (size_t i = cu->lo; i < cu->hi; i++) {
        const seg_t *x = &g->s[i];
        if (!(x->start <= t && t < x->end))
            continue;
        if (s->who < 0)
            s->who = (int32_t)i;
        if (t < x->ready)
            continue;   /* starting: held, nothing runs yet */
        s->computing = 1;
        s->duty += x->duty * x->share;
        s->sm += x->sm * x->share;
        s->tensor += x->tensor * x->share;
        s->dram += x->dram * x->share;
        s->fb += x->fb * x->share;
    }
    s->duty = fmin(s->duty, 1);
    s->sm = fmin(s->sm, 1);
    s->tensor = fmin(s->tensor, 1);
    s->dram = fmin(s->dram, 1);
    s->fb = fmin(s->fb, 1);
}

/* The draw, at most the pool's cap (cap <= 0: none): a capped job's clock
 * is lowered until its draw meets the cap (models/fs_power.h). */
static double power_w(const gstate_t *s, double tdp, double cap)
{
    double p = fs_power_w(tdp, s->computing, s->sm);
    return cap > 0 && p > cap ? cap : p;
}

/* The next time after t where g's state may change (a segment boundary);
 * the cursor is at t. */
static double next_change(const gpu_t *g, const cursor_t *cu, double t)
{
    double nx = cu->hi < g->n ? g->s[cu->hi].start : INFINITY;
    for (size_t i = cu->lo; i < cu->hi; i++) {
        const seg_t *x = &g->s[i];
        if (x->ready > t && x->ready < nx)
            nx = x->ready;
        if (x->end > t && x->end < nx)
            nx = x->end;
    }
    return nx;
}

static int cmp_sample(const void *a, const void *b)
{
    const struct sample *x = a, *y = b;
    if (x->key != y->key)   /* the label set: idle (0), or job + 1 */
        return x->key < y->key ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

static void sb_put(sbuf_t *b, const char *s, size_t n)
{
    if (b->oom || fs_grow((void **)&b->p, &b->cap, b->n + n + 1, 1)) {
        b->oom = 1;
        return;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static void sb_str(sbuf_t *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_label_value(sbuf_t *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            sb_put(b, "\\", 1);
        if (*s == '\n')
            sb_put(b, "\\n", 2);
        else
            sb_put(b, s, 1);
    }
}

/* Writes v (an integer without exponent when it is one, else %.10g). */
static size_t fmt_value(char *buf, size_t n, double v)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        long long x = (long long)v;
        char tmp[24];
        size_t k = 0;
        unsigned long long u = x < 0 ? (unsigned long long)(-x) : (unsigned long long)x;
        do {
            tmp[k++] = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        size_t len = 0;
        if (x < 0)
            buf[len++] = '-';
        while (k)
            buf[len++] = tmp[--k];
        buf[len] = '\0';
        return len;
    }
    int len = snprintf(buf, n, "%.10g", v);
    return len > 0 ? (size_t)len : 0;
}

/* A GPU's UUID label: made up, stable, unique per GPU of the file. */
static void gpu_uuid(const gpu_t *dev, uint32_t gi, char *buf, size_t n)
{
    uint64_t h = (((uint64_t)dev->node << 20 | dev->index) + 1) * 0x9E3779B97F4A7C15ull;
    snprintf(buf, n, "GPU-%08x-%04x-%04x-%04x-%012llx", (unsigned)(h >> 32),
             (unsigned)(h >> 16) & 0xffff, (unsigned)h & 0xffff, dev->node & 0xffff,
             (unsigned long long)gi);
}

/* DCGM_FI_DEV_ECC_DBE_VOL_TOTAL at t: the uncorrectable memory errors
 * (fs_xid_is_dbe) logged on the GPU at or before t and after its last
 * reset (the volatile count restarts when the driver reinitialises the
 * GPU: a reset, a reboot, a replacement). */
static double dbe_at(const gpu_t *g, double t)
{
    double last = -INFINITY;
    for (size_t r = 0; r < g->n_reset; r++)
        if (g->reset[r] <= t && g->reset[r] > last)
            last = g->reset[r];
    double v = 0;
    for (size_t x = 0; x + 2 < g->n_xid; x += 3)
        if (fs_xid_is_dbe((uint32_t)g->xid[x + 2]) && g->xid[x] <= t && g->xid[x] >= last)
            v++;
    return v;
}


/* ---- the text output's writer ------------------------------------------------------------ */

/* The writes go straight to the device (O_DIRECT) in TW_CHUNK pieces: on
 * a multi-GB export the kernel's copy into the page cache cost twice the
 * program's own time (docs/performance.md); the tail, and any file system
 * that refuses direct I/O, go through the page cache. */
#define TW_ALIGN 4096u
#define TW_CHUNK ((size_t)4 << 20)
#define TW_CAP (TW_CHUNK + ((size_t)64 << 10))  /* room for lines past a chunk */

static int tw_open(twriter_t *w, const char *path)
{
    memset(w, 0, sizeof *w);
    w->fd = -1;
    if (!(w->mem = fs_malloc(TW_CAP + TW_ALIGN)))
        return ENOMEM;
    w->p = w->mem + (TW_ALIGN - (uintptr_t)w->mem % TW_ALIGN) % TW_ALIGN;
#ifdef O_DIRECT
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0666);
    w->direct = w->fd >= 0;
    if (w->fd < 0 && errno != EINVAL)
        return errno;
#endif
    if (w->fd < 0 && (w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0)
        return errno;
    return 0;
}

/* Back to writes through the page cache (for the tail, or where direct I/O
 * is refused). */
static void tw_buffered(twriter_t *w)
{
#ifdef O_DIRECT
    if (w->direct) {
        int fl = fcntl(w->fd, F_GETFL);
        if (fl != -1)
            (void)fcntl(w->fd, F_SETFL, fl & ~O_DIRECT);
        w->direct = 0;
    }
#endif
}

static void tw_write(twriter_t *w, const char *p, size_t n)
{
    while (n && !w->err) {
        ssize_t k = write(w->fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && errno == EINVAL && w->direct) {   /* alignment, or no direct I/O here */
            tw_buffered(w);
            continue;
        }
        if (k <= 0) {
            w->err = k < 0 ? errno : EIO;
            break;
        }
        p += k;
        n -= (size_t)k;
    }
}

/* Writes the whole chunks waiting; less than TW_CHUNK bytes stay. */
static void tw_drain(twriter_t *w)
{
    size_t done = 0;
    for (; w->n - done >= TW_CHUNK && !w->err; done += TW_CHUNK)
        tw_write(w, w->p + done, TW_CHUNK);
    if (done) {
        memmove(w->p, w->p + done, w->n - done);
        w->n -= done;
    }
}

static void tw_put(twriter_t *w, const char *s, size_t n)
{
    while (n && !w->err) {
        size_t k = TW_CAP - w->n < n ? TW_CAP - w->n : n;
        memcpy(w->p + w->n, s, k);
        w->n += k;
        s += k;
        n -= k;
        if (w->n == TW_CAP)
            tw_drain(w);
    }
}

static void tw_printf(twriter_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void tw_printf(twriter_t *w, const char *fmt, ...)
{
    char buf[1024], *p = buf;
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (len < 0) {
        w->err = EINVAL;
        return;
    }
    if ((size_t)len >= sizeof buf) {
        if (!(p = fs_malloc((size_t)len + 1))) {
            w->err = ENOMEM;
            return;
        }
        va_start(ap, fmt);
        vsnprintf(p, (size_t)len + 1, fmt, ap);
        va_end(ap);
    }
    tw_put(w, p, (size_t)len);
    if (p != buf)
        fs_free(p);
}

/* Writes what is left and closes; the first error's errno (0: none). */
static int tw_close(twriter_t *w)
{
    if (!w->p)
        return 0;
    if (w->fd >= 0) {
        tw_drain(w);
        tw_buffered(w);
        tw_write(w, w->p, w->n);
        if (close(w->fd) != 0 && !w->err)
            w->err = errno;
    }
    fs_free(w->mem);
    w->mem = w->p = NULL;
    w->fd = -1;
    return w->err;
}

/* ---- series: labels and the two outputs ------------------------------------------------ */

/* dcgm-exporter's PCI bus IDs of an HGX board's 8 GPUs; further GPUs count on */
static unsigned pci_bus(uint32_t index)
{
    static const unsigned hgx[8] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
    return index < 8 ? hgx[index] : 0xdc + index;
}

static void lab_reset(ctx_t *c)
{
    c->lv.n = 0;
    c->lv.oom = 0;
    c->nl = 0;
}

static void lab_add(ctx_t *c, const char *name, const char *a, const char *b)
{
    if (c->nl >= sizeof c->lname / sizeof c->lname[0]) {
        c->lv.oom = 1;
        return;
    }
    c->lname[c->nl] = name;
    c->loff[c->nl++] = c->lv.n;
    sb_str(&c->lv, a);
    if (b)
        sb_str(&c->lv, b);
    sb_put(&c->lv, "", 1);
}

/* name="PREFIXx" */
static void lab_addf(ctx_t *c, const char *name, const char *prefix, unsigned long long x)
{
    char t[64];
    snprintf(t, sizeof t, "%s%llu", prefix, x);
    lab_add(c, name, t, NULL);
}

/* A job's pod labels: its tenant's namespace and pod job-ID, or a service
 * replica's service as namespace and pod SERVICE-REPLICA. */
static void pod_labels(ctx_t *c, const seg_t *x)
{
    if (x->job >> 63) {
        uint32_t svc = (uint32_t)(x->job >> 32) & 0x7fffffffu;
        const char *name = svc < c->n_services ? c->service_name[svc] : "service";
        char rep[32];
        snprintf(rep, sizeof rep, "-%u", (unsigned)(x->job & 0xffffffffu));
        lab_add(c, "namespace", name, NULL);
        lab_add(c, "pod", name, rep);
    } else {
        lab_add(c, "namespace", tenant_of(c, x->tenant), NULL);
        lab_addf(c, "pod", "job-", (unsigned long long)x->job);
    }
    lab_add(c, "container", "main", NULL);
}

/* The labels of GPU gi (g: the GPU, or one of its MIG instances) as
 * current dcgm-exporter writes them, plus instance and job as a scrape of
 * it adds; the pod labels of segment who (-1: none). */
static void gpu_labels(ctx_t *c, uint32_t gi, const gpu_t *g, int32_t who)
{
    const gpu_t *dev = &c->gpus[gi];
    const node_info_t *ni = &c->nodes[g->node];
    int cat = fs_catalog_find(c->pool_gpu[ni->pool]);
    const fs_gpu_model_t *gm = cat >= 0 ? fs_catalog_get((size_t)cat) : NULL;
    char t[64], host[16];
    lab_addf(c, "gpu", "", g->index);
    gpu_uuid(dev, gi, t, sizeof t);
    lab_add(c, "UUID", t, NULL);
    snprintf(t, sizeof t, "00000000:%02X:00.0", pci_bus(g->index));
    lab_add(c, "pci_bus_id", t, NULL);
    lab_addf(c, "device", "nvidia", g->index);
    lab_add(c, "modelName", gm ? gm->long_name : c->pool_gpu[ni->pool], NULL);
    if (g->prof) {
        lab_add(c, "GPU_I_PROFILE", g->prof->name, NULL);
        lab_addf(c, "GPU_I_ID", "", (unsigned long long)g->inst);
    }
    snprintf(host, sizeof host, "-%u", ni->local);
    lab_add(c, c->o->legacy_hostname ? "Hostname" : "hostname", c->pool_name[ni->pool], host);
    lab_add(c, "DCGM_FI_DRIVER_VERSION", FS_METRICS_DRIVER, NULL);
    if (who >= 0)
        pod_labels(c, &g->s[who]);
    snprintf(host, sizeof host, "-%u:9400", ni->local);
    lab_add(c, "instance", c->pool_name[ni->pool], host);
    lab_add(c, "job", "dcgm-exporter", NULL);
}

static int check_size(ctx_t *c)
{
    uint64_t now = c->tsdb ? fs_tsdb_spooled(c->tsdb) : c->st.bytes;
    if (c->o->max_size && now > c->o->max_size)
        return fs_error_set(c->err, FS_EUSAGE, "%s: the export passed --max-size (%llu bytes) "
                            "while writing; nothing was kept", c->out,
                            (unsigned long long)c->o->max_size);
    return 0;
}

/* The samples (t, v) with a staleness marker after each sample not followed
 * by one gap_ms later, into c->tt, c->tv; their number in *m. */
static int with_markers(ctx_t *c, const int64_t *t, const double *v, size_t n, int64_t gap_ms,
                        size_t *m)
{
    if (fs_grow((void **)&c->tt, &c->cap_tt, 2 * n, sizeof *c->tt) ||
        fs_grow((void **)&c->tv, &c->cap_tv, 2 * n, sizeof *c->tv))
        return fail(c, FS_ENOMEM, "out of memory");
    *m = 0;
    for (size_t i = 0; i < n; i++) {
        c->tt[*m] = t[i];
        c->tv[(*m)++] = v[i];
        if (i + 1 == n || t[i + 1] > t[i] + gap_ms) {
            c->tt[*m] = t[i] + gap_ms;
            c->tv[(*m)++] = fs_tsdb_stale();
        }
    }
    return 0;
}

/* The text line prefix of the series (its name and labels) into c->line. */
static int text_prefix(ctx_t *c, const char *name)
{
    sbuf_t *b = &c->line;
    b->n = 0;
    sb_str(b, name);
    for (size_t i = 0; i < c->nl; i++) {
        sb_str(b, i ? "," : "{");
        sb_str(b, c->lname[i]);
        sb_str(b, "=\"");
        sb_label_value(b, c->lv.p + c->loff[i]);
        sb_str(b, "\"");
    }
    sb_str(b, c->nl ? "} " : " ");
    return b->oom ? fail(c, FS_ENOMEM, "out of memory") : 0;
}

/* Per series and block in the index: its entry (chunk metadata, CRC,
 * 16-byte alignment) and per label 8 bytes (its two symbol references and
 * its postings entry); per chunk, its length, encoding and CRC in the
 * segment file and its metadata in the index (fs_tsdb.c).  Measured against
 * the blocks: docs/performance.md "fleetsim metrics --tsdb". */
#define IDX_SERIES_BYTES 40
#define IDX_LABEL_BYTES 8
#define CHUNK_BYTES 20

/* Counting (the estimate of the families fs_metrics_queues.c and
 * fs_metrics_links.c write): the bytes the series would take, exactly in
 * text, in blocks its chunks encoded and the index modelled. */
static int count_series(ctx_t *c, const char *name, const int64_t *t, const double *v, size_t n,
                        int64_t gap_ms)
{
    c->cnt_series++;
    if (c->o->tsdb) {
        size_t m = 0;
        if (with_markers(c, t, v, n, gap_ms, &m))
            return FS_ENOMEM;
        if (!c->xbuf && !(c->xbuf = fs_malloc(fs_tsdb_xor_bound(FS_TSDB_CHUNK_SAMPLES))))
            return fail(c, FS_ENOMEM, "out of memory");
        uint64_t bytes = 0;
        int64_t last_win = -1;
        for (size_t a = 0; a < m;) {
            int64_t win = c->tt[a] / c->block_ms;
            size_t b = a + 1;
            while (b < m && b - a < FS_TSDB_CHUNK_SAMPLES && c->tt[b] / c->block_ms == win)
                b++;
            if (win != last_win)    /* the series in one more block */
                bytes += IDX_SERIES_BYTES + IDX_LABEL_BYTES * (c->nl + 1);
            last_win = win;
            bytes += CHUNK_BYTES + fs_tsdb_xor_encode(c->tt + a, c->tv + a, b - a, c->xbuf,
                                                      fs_tsdb_xor_bound(FS_TSDB_CHUNK_SAMPLES));
            a = b;
        }
        c->cnt_samples += m;
        c->cnt_bytes += bytes;
        return 0;
    }
    int rc = text_prefix(c, name);
    if (rc)
        return rc;
    char num[64];
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += c->line.n + fmt_value(num, 32, v[i]) + 1 +
                 fmt_value(num, 32, (double)(t[i] / 1000)) + 1;
    c->cnt_samples += n;
    c->cnt_bytes += bytes;
    return 0;
}

/* One series: the labels built (lab_*), samples at ms timestamps t.  The
 * blocks get a staleness marker where the series stops: after each sample
 * not followed by one gap_ms later. */
static int put_series(ctx_t *c, size_t fam, const char *name, const int64_t *t, const double *v,
                      size_t n, int64_t gap_ms)
{
    if (n == 0)
        return 0;
    if (c->lv.oom)
        return fail(c, FS_ENOMEM, "out of memory");
    if (c->counting)
        return count_series(c, name, t, v, n, gap_ms);
    c->st.series++;
    if (c->tsdb) {
        size_t m = 0;
        if (with_markers(c, t, v, n, gap_ms, &m))
            return FS_ENOMEM;
        fs_tsdb_label_t lab[40];
        lab[0] = (fs_tsdb_label_t){"__name__", name};
        for (size_t i = 0; i < c->nl; i++)
            lab[i + 1] = (fs_tsdb_label_t){c->lname[i], c->lv.p + c->loff[i]};
        uint64_t before = fs_tsdb_spooled(c->tsdb);
        int rc = fs_tsdb_add(c->tsdb, lab, c->nl + 1, c->tt, c->tv, m, c->err);
        if (rc)
            return rc;
        c->st.samples += m;
        if (fam < FS_METRICS_MAX_FAMILIES) {
            c->st.fam_samples[fam] += m;
            c->st.fam_bytes[fam] += fs_tsdb_spooled(c->tsdb) - before;
        }
        return check_size(c);
    }
    int rc = text_prefix(c, name);
    if (rc)
        return rc;
    sbuf_t *b = &c->line;
    /* a sample's line: the prefix, the value, a space, the time (s), a newline;
     * the two numbers take at most 2 x 24 bytes */
    twriter_t *w = &c->tw;
    const size_t line_max = b->n + 64;
    uint64_t bytes = 0;
    for (size_t i = 0; i < n && !w->err; i++) {
        if (w->n + line_max > TW_CAP)
            tw_drain(w);
        char *p;
        char num[64];
        int direct = w->n + line_max <= TW_CAP;   /* else a very long prefix: piecewise */
        if (direct) {
            memcpy(w->p + w->n, b->p, b->n);
            p = w->p + w->n + b->n;
        } else {
            tw_put(w, b->p, b->n);
            p = num;
        }
        size_t len = fmt_value(p, 32, v[i]);
        p[len++] = ' ';
        len += fmt_value(p + len, 32, (double)(t[i] / 1000));
        p[len++] = '\n';
        if (direct)
            w->n += b->n + len;
        else
            tw_put(w, num, len);
        bytes += b->n + len;
    }
    c->st.bytes += bytes;
    c->st.samples += n;
    if (fam < FS_METRICS_MAX_FAMILIES)
        c->st.fam_samples[fam] += n;
    if (w->err) {
        int e = w->err;
        return fs_error_set(c->err, fs_tsdb_io_code(e), "%s: %s", c->out, strerror(e));
    }
    return check_size(c);
}

static int grow_tv(ctx_t *c, size_t n)
{
    if (fs_grow((void **)&c->st_t, &c->cap_st_t, n, sizeof *c->st_t) ||
        fs_grow((void **)&c->st_v, &c->cap_st_v, n, sizeof *c->st_v))
        return fail(c, FS_ENOMEM, "out of memory");
    return 0;
}

static int64_t ms_of(const ctx_t *c, uint32_t k)
{
    return (c->o->origin + (int64_t)k * (int64_t)c->o->step) * 1000;
}

/* DCGM_EXP_XID_ERRORS_COUNT of GPU gi: for each Xid code logged on it, the
 * number of those Xids in (t - window, t] at each sample t from the first
 * one to the first sample after the last has left the window (where the
 * count is 0 again), as dcgm-exporter counts Xids over its
 * --xid-count-window-size (docs/observability.md "Xid bursts").  Device
 * labels only (no pod). */
static int emit_xid_counts(ctx_t *c, size_t fam, uint32_t gi, const gpu_t *g)
{
    double w = (double)c->o->xid_window, step = (double)c->o->step;
    for (size_t x = 0; x + 2 < g->n_xid; x += 3) {
        double code = g->xid[x + 2], first = INFINITY, last = -INFINITY;
        int seen = 0;
        for (size_t y = 0; y < x && !seen; y += 3)
            seen = g->xid[y + 2] == code;
        if (seen)
            continue;   /* this code's series was written with its first event */
        for (size_t y = x; y + 2 < g->n_xid; y += 3)
            if (g->xid[y + 2] == code) {
                first = fmin(first, g->xid[y]);
                last = fmax(last, g->xid[y]);
            }
        double k0 = fmax(ceil(first / step), c->k_lo), k1 = floor((last + w) / step) + 1;
        if (k1 > c->k_hi)
            k1 = c->k_hi;
        size_t n = 0;
        if (k1 >= k0 && grow_tv(c, (size_t)(k1 - k0) + 1))
            return FS_ENOMEM;
        for (double k = k0; k <= k1; k++) {
            double tk = k * step, v = 0;
            for (size_t y = x; y + 2 < g->n_xid; y += 3)
                v += g->xid[y + 2] == code && g->xid[y] <= tk && g->xid[y] > tk - w;
            c->st_t[n] = ms_of(c, (uint32_t)k);
            c->st_v[n++] = v;
        }
        lab_reset(c);
        gpu_labels(c, gi, g, -1);
        lab_addf(c, "xid", "", (unsigned long long)code);
        int rc = put_series(c, fam, "DCGM_EXP_XID_ERRORS_COUNT", c->st_t, c->st_v, n,
                            (int64_t)c->o->step * 1000);
        if (rc)
            return rc;
    }
    return 0;
}

/* Is a family exported per pod (the GPU's series carry the labels of the pod
 * on it)?  The device-level ones (power, energy, temperature, Xid, ECC) are
 * one series per GPU, as dcgm-exporter attaches no pod to them. */
static int per_pod(fam_kind_t k)
{
    return k == F_UTIL || k == F_GR || k == F_SM || k == F_TENSOR || k == F_DRAM ||
           k == F_FB_USED || k == F_FB_FREE;
}

/* Family fm's value of entity g (GPU gi or one of its MIG instances) at
 * every sample instant k_lo..k_hi, in c->smp (with the segment whose pod
 * labels the sample carries); returns how many (an instance's only while
 * its layout is in force). */
static int gpu_values(ctx_t *c, const family_t *fm, uint32_t gi, const gpu_t *g, uint32_t *out_n)
{
    const gpu_t *dev = &c->gpus[gi];
    const node_info_t *ni = &c->nodes[g->node];
    int cat = fs_catalog_find(c->pool_gpu[ni->pool]);
    const fs_gpu_model_t *gm = cat >= 0 ? fs_catalog_get((size_t)cat) : NULL;
    double tdp = gm ? gm->tdp_w : 700.0, mem_mib = gm ? gm->memory_gb * 1024.0 : 81920.0;
    if (g->prof)
        mem_mib = g->prof->memory_gb * 1024.0;
    /* the tighter of the power cap and the thermal limit (models/fs_power.h) */
    double cap = fs_power_limit_w(c->pool_cap ? c->pool_cap[ni->pool] : 0,
                                  c->pool_throttle ? c->pool_throttle[ni->pool] : 0);
    double ambient = c->pool_ambient ? c->pool_ambient[ni->pool] : FS_THERMAL_AMBIENT_C;
    int pods = (dev->n_inst == 0 || g->inst >= 0) && per_pod(fm->kind);
    uint32_t steps = c->k_hi + 1;
    if (fs_grow((void **)&c->smp, &c->cap_smp, steps, sizeof *c->smp))
        return fail(c, FS_ENOMEM, "out of memory");
    /* energy and temperature integrate the power exactly between samples
     * (a second cursor walks the changes); the other families read the
     * state at the samples only */
    int integrate = fm->kind == F_ENERGY || fm->kind == F_TEMP;
    double energy_j = 0, temp, t = 0;
    cursor_t at = {0, 0}, walk = {0, 0};
    gstate_t s;
    state_at(g, &walk, 0, &s);
    temp = ambient + C_PER_W * power_w(&s, tdp, cap);  /* in equilibrium at the start */
    uint32_t ns = 0;
    for (uint32_t k = integrate ? 0 : c->k_lo; k < steps; k++) {
        double tk = (double)k * c->o->step;
        if (g->prof && (tk < g->from || tk >= g->to))
            continue;
        while (integrate && t < tk) {
            state_at(g, &walk, t, &s);
            double p = power_w(&s, tdp, cap), nx = fmin(next_change(g, &walk, t), tk);
            energy_j += p * (nx - t);
            double tss = ambient + C_PER_W * p;
            temp = tss + (temp - tss) * exp(-(nx - t) / TAU_S);
            t = nx;
        }
        if (k < c->k_lo)
            continue;
        state_at(g, &at, tk, &s);
        double v = 0;
        /* rounded as dcgm-exporter reports them: integer %, MiB, C and mJ, W
         * to the mW */
        switch (fm->kind) {
        case F_UTIL: v = round(100.0 * s.duty); break;
        case F_GR: v = s.duty; break;
        case F_SM: v = s.sm; break;
        case F_TENSOR: v = s.tensor; break;
        case F_DRAM: v = s.dram; break;
        case F_FB_USED: v = round(mem_mib * s.fb); break;
        case F_FB_FREE: v = mem_mib - round(mem_mib * s.fb); break;
        case F_POWER: v = round(power_w(&s, tdp, cap) * 1000.0) / 1000.0; break;
        case F_ENERGY: v = round(energy_j * 1000.0); break;
        case F_TEMP: v = round(temp); break;
        case F_XID:
            for (size_t x = 0; x + 2 < g->n_xid; x += 3)
                if (g->xid[x] <= tk && tk < g->xid[x + 1])
                    v = g->xid[x + 2];
            break;
        case F_DBE:     /* since the last reset before tk */
            v = dbe_at(g, tk);
            break;
        case F_XID_COUNT:
            break;      /* emit_xid_counts */
        }
        int32_t who = pods ? s.who : -1;
        uint64_t key = who < 0 ? 0 : g->s[who].job + 1;
        c->smp[ns++] = (struct sample){key, who, k, v};
    }
    *out_n = ns;
    return 0;
}

/* One entity's samples of one family, one series per label set: GPU gi, or
 * its MIG instance g (g != &c->gpus[gi]).  The device-level series of a
 * MIG GPU (power, energy, temperature, Xid) carry no pod labels: its pods
 * are on its instances' series. */
static int emit_gpu(ctx_t *c, size_t fam, const family_t *fm, uint32_t gi, const gpu_t *g)
{
    uint32_t ns = 0;
    int rc = gpu_values(c, fm, gi, g, &ns);
    if (rc)
        return rc;
    /* a job's labels are the same over its segment: group by segment, then time */
    qsort(c->smp, ns, sizeof *c->smp, cmp_sample);
    if (grow_tv(c, ns + 1))
        return FS_ENOMEM;
    for (uint32_t a = 0; a < ns && !rc;) {
        uint32_t b = a;
        size_t n = 0;
        for (; b < ns && c->smp[b].key == c->smp[a].key; b++) {
            c->st_t[n] = ms_of(c, c->smp[b].k);
            c->st_v[n++] = c->smp[b].v;
        }
        lab_reset(c);
        gpu_labels(c, gi, g, c->smp[a].who);
        rc = put_series(c, fam, fm->name, c->st_t, c->st_v, n, (int64_t)c->o->step * 1000);
        a = b;
    }
    return rc;
}

/* ---- node and pool level (--level): recording-rule series ------------------------------- */

typedef enum agg { A_AVG, A_SUM, A_MAX } agg_t;

/* The aggregate of a family over a node's or pool's GPUs, named as a
 * recording rule would name it (level:metric:operations). */
static agg_t fam_agg(fam_kind_t k, const char **short_name)
{
    static const struct { fam_kind_t k; const char *name; agg_t a; } t[] = {
        {F_UTIL, "gpu_util", A_AVG}, {F_GR, "gr_engine_active", A_AVG},
        {F_SM, "sm_active", A_AVG}, {F_TENSOR, "tensor_active", A_AVG},
        {F_DRAM, "dram_active", A_AVG}, {F_FB_USED, "fb_used", A_SUM},
        {F_FB_FREE, "fb_free", A_SUM}, {F_POWER, "power_usage", A_SUM},
        {F_ENERGY, "total_energy_consumption", A_SUM}, {F_TEMP, "gpu_temp", A_MAX},
        {F_XID, "xid_errors", A_MAX}, {F_DBE, "ecc_dbe_vol_total", A_SUM},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].k == k) {
            *short_name = t[i].name;
            return t[i].a;
        }
    *short_name = NULL;
    return A_SUM;
}

/* One family at the node or pool level: per group (a node, a pool) of
 * selected GPUs, the aggregate of the GPUs' values (MIG GPUs by device:
 * their per-instance families summed over the instances; no utilization). */
static int emit_level(ctx_t *c, size_t fam, const family_t *fm, int pool)
{
    const char *sn;
    agg_t ag = fam_agg(fm->kind, &sn);
    if (!sn)
        return 0;
    char name[96];
    snprintf(name, sizeof name, "fleetsim:%s:%s_%s", sn,
             ag == A_AVG ? "avg" : ag == A_SUM ? "sum" : "max", pool ? "pool" : "node");
    if (!c->tsdb)
        tw_printf(&c->tw, "# HELP %s %s of %s over the %s's GPUs: %s\n# TYPE %s gauge\n", name,
                ag == A_AVG ? "Mean" : ag == A_SUM ? "Sum" : "Maximum", fm->name,
                pool ? "pool" : "node", fm->help, name);
    uint32_t steps = c->k_hi + 1;
    double *acc = fs_calloc(steps, sizeof *acc);
    double *cnt = fs_calloc(steps, sizeof *cnt);
    if (!acc || !cnt) {
        fs_free(acc);
        fs_free(cnt);
        return fail(c, FS_ENOMEM, "out of memory");
    }
    int rc = 0;
    uint32_t g = 0;
    while (g < c->n_gpus && !rc) {
        /* the group: GPUs g .. e of one node (or pool) */
        const node_info_t *ni = &c->nodes[c->gpus[g].node];
        uint32_t e = g;
        while (e < c->n_gpus && (pool ? c->nodes[c->gpus[e].node].pool == ni->pool
                                      : c->gpus[e].node == c->gpus[g].node))
            e++;
        memset(acc, 0, steps * sizeof *acc);
        memset(cnt, 0, steps * sizeof *cnt);
        int any = 0;
        for (uint32_t x = g; x < e && !rc; x++) {
            const gpu_t *gp = &c->gpus[x];
            if (!gpu_selected(c, gp) || (gp->n_inst && fm->kind == F_UTIL))
                continue;
            uint32_t ni_n = gp->n_inst && per_pod(fm->kind) ? gp->n_inst : 1;
            double *dev = fs_calloc(steps, sizeof *dev);
            uint8_t *has = fs_calloc(steps, 1);
            if (!dev || !has)
                rc = fail(c, FS_ENOMEM, "out of memory");
            for (uint32_t i = 0; i < ni_n && !rc; i++) {
                const gpu_t *ent = gp->n_inst && per_pod(fm->kind) ? &c->insts[gp->first_inst + i] : gp;
                uint32_t ns = 0;
                if ((rc = gpu_values(c, fm, x, ent, &ns)))
                    break;
                for (uint32_t k = 0; k < ns; k++) {
                    uint32_t kk = c->smp[k].k;
                    /* a MIG GPU's activity: its instances' by compute share */
                    double wgt = ent->prof && ag == A_AVG ? ent->prof->compute / (double)ent->prof->slices : 1.0;
                    dev[kk] += c->smp[k].v * wgt;
                    has[kk] = 1;
                }
            }
            for (uint32_t k = c->k_lo; k < steps && !rc; k++)
                if (has[k]) {
                    acc[k] = ag == A_MAX ? (cnt[k] ? fmax(acc[k], dev[k]) : dev[k]) : acc[k] + dev[k];
                    cnt[k]++;
                    any = 1;
                }
            fs_free(dev);
            fs_free(has);
        }
        if (!rc && any) {
            if ((rc = grow_tv(c, steps)))
                break;
            size_t n = 0;
            for (uint32_t k = c->k_lo; k < steps; k++)
                if (cnt[k]) {
                    c->st_t[n] = ms_of(c, k);
                    c->st_v[n++] = ag == A_AVG ? acc[k] / cnt[k] : acc[k];
                }
            lab_reset(c);
            char t[16];
            if (pool) {
                lab_add(c, "pool", c->pool_name[ni->pool], NULL);
            } else {
                snprintf(t, sizeof t, "-%u", ni->local);
                lab_add(c, c->o->legacy_hostname ? "Hostname" : "hostname",
                        c->pool_name[ni->pool], t);
            }
            int cat = fs_catalog_find(c->pool_gpu[ni->pool]);
            const fs_gpu_model_t *gm = cat >= 0 ? fs_catalog_get((size_t)cat) : NULL;
            lab_add(c, "modelName", gm ? gm->long_name : c->pool_gpu[ni->pool], NULL);
            lab_add(c, "job", "fleetsim", NULL);
            rc = put_series(c, fam, name, c->st_t, c->st_v, n, (int64_t)c->o->step * 1000);
        }
        g = e;
    }
    fs_free(acc);
    fs_free(cnt);
    return rc;
}

/* ---- the scheduler's series ------------------------------------------------------------- */

static const struct { const char *col, *name, *help; } sched_cols[] = {
    {"jobs_queued", "fleetsim_jobs_queued", "Jobs waiting in the queue."},
    {"jobs_running", "fleetsim_jobs_running", "Jobs running."},
    {"gpus_busy", "fleetsim_gpus_busy", "GPUs holding a job."},
    {"gpus_up", "fleetsim_gpus_up", "GPUs in service."},
    {"nodes_down", "fleetsim_nodes_down", "Nodes out of service."},
    {"gpus_queued", "fleetsim_gpus_queued", "GPUs asked for by the jobs waiting in the queue."},
    {"repair_queue", "fleetsim_repair_queue", "Failed units waiting for a repair crew."},
    {"replicas", "fleetsim_service_replicas", "Service replicas alive (pending, starting, ready)."},
    {"gpus_serving", "fleetsim_gpus_serving", "GPUs held by service replicas."},
    /* the capacity states (docs/results.md): GPU-s of the interval ending at
     * the sample over its length, one series per state */
    {NULL, "fleetsim_capacity_gpus",
     "Mean GPUs in each capacity state over the last /timeline interval (busy, waiting, idle, "
     "down add up to the fleet; starting is part of busy)."},
};
static const struct { const char *state, *col; } cap_states[] = {
    {"busy", "gpu_s_busy"}, {"waiting", "gpu_s_waiting"}, {"idle", "gpu_s_idle"},
    {"down", "gpu_s_down"}, {"starting", "gpu_s_startup"},
};
#define N_SCHED (sizeof sched_cols / sizeof sched_cols[0])

/* /timeline's rows (when sampled): times in c->tl_t, n in c->n_tl.  Its
 * interval must not be above the step: every series is sampled every step. */
static int read_timeline(ctx_t *c)
{
    size_t n = 0;
    int rc = fs_h5read_has(c->f, "timeline") ? fs_h5read_rows(c->f, "timeline", &n, c->err) : 0;
    if (rc || n == 0)
        return rc;
    if ((rc = read_col(c, "timeline", "time", n, &c->tl_t)))
        return rc;
    c->n_tl = n;
    double iv = 0;
    for (size_t i = 1; i < n; i++)
        iv = fmax(iv, c->tl_t[i] - c->tl_t[i - 1]);
    if (iv > c->o->step * (1 + 1e-9) && c->sched_on) {
        if (c->o->families || !c->o->lenient)
            return fs_error_set(c->err, FS_EINVAL, "%s: --step %u is below the resolution of "
                                "/timeline (sampled every %.0f s): the scheduler's series "
                                "(fleetsim_*) cannot be sampled every step; use --step %.0f or "
                                "more, %s, or run with a shorter output.timeline_interval",
                                c->results, (unsigned)c->o->step, iv, ceil(iv),
                                c->o->families ? "--families without them"
                                               : "--families without them, --lenient to leave "
                                                 "them out");
        /* --lenient: left out, and said so */
        memset(c->fam_on + sizeof families / sizeof families[0], 0, N_SCHED);
        c->sched_on = 0;
        c->sched_note = iv;
    }
    return 0;
}

/* The scheduler's series, sampled every step: the last /timeline row at
 * or before each instant. */
static int emit_scheduler(ctx_t *c, size_t fam_base)
{
    if (c->n_tl == 0)
        return 0;
    double *v = fs_malloc(c->n_tl * sizeof *v);
    if (!v || grow_tv(c, c->k_hi + 1)) {
        fs_free(v);
        return fail(c, FS_ENOMEM, "out of memory");
    }
    int rc = 0;
    for (size_t k = 0; k < N_SCHED && !rc; k++) {
        if (!c->fam_on[fam_base + k])
            continue;
        size_t n_ser = sched_cols[k].col ? 1 : sizeof cap_states / sizeof cap_states[0];
        int header = 0;
        for (size_t q = 0; q < n_ser && !rc; q++) {
            const char *col = sched_cols[k].col ? sched_cols[k].col : cap_states[q].col;
            int has = 0;
            if ((rc = has_column(c, "timeline", col, &has)) || !has)
                continue;   /* a file from before the column */
            if ((rc = fs_h5read_f64(c->f, "timeline", col, v, c->err)))
                break;
            if (!c->tsdb && !header++)
                tw_printf(&c->tw, "# HELP %s %s\n# TYPE %s gauge\n", sched_cols[k].name,
                        sched_cols[k].help, sched_cols[k].name);
            size_t n = 0, r = 0;
            for (uint32_t s = c->k_lo; s <= c->k_hi; s++) {
                double tk = (double)s * c->o->step;
                while (r + 1 < c->n_tl && c->tl_t[r + 1] <= tk)
                    r++;
                if (c->tl_t[r] > tk)
                    continue;
                double x = v[r];
                if (!sched_cols[k].col) {     /* GPU-s over the interval ending at row r */
                    double dt = r ? c->tl_t[r] - c->tl_t[r - 1] : 0;
                    if (!(dt > 0))
                        continue;
                    x /= dt;
                }
                c->st_t[n] = ms_of(c, s);
                c->st_v[n++] = x;
            }
            lab_reset(c);
            if (!sched_cols[k].col)
                lab_add(c, "state", cap_states[q].state, NULL);
            lab_add(c, "job", "fleetsim", NULL);
            rc = put_series(c, fam_base + k, sched_cols[k].name, c->st_t, c->st_v, n,
                            (int64_t)c->o->step * 1000);
        }
    }
    fs_free(v);
    return rc;
}

size_t fs_metrics_n_families(void)
{
    return sizeof families / sizeof families[0] + N_SCHED + fs_mqueue_n_families() +
           fs_mlinks_n_families();
}

const char *fs_metrics_family_name(size_t i)
{
    size_t nf = sizeof families / sizeof families[0], nq = nf + N_SCHED + fs_mqueue_n_families();
    return i < nf            ? families[i].name
           : i < nf + N_SCHED ? sched_cols[i - nf].name
           : i < nq           ? fs_mqueue_family_name(i - nf - N_SCHED)
                              : fs_mlinks_family_name(i - nq);
}

/* ---- the hook of the family modules (fs_metrics_sink.h) ------------------------------------ */

void fs_msink_info(const fs_msink_t *c, fs_msink_info_t *out)
{
    *out = (fs_msink_info_t){.f = c->f, .results = c->results, .err = c->err,
                             .step = c->o->step, .k_lo = c->k_lo, .k_hi = c->k_hi,
                             .end_time = c->end_time};
}

int fs_msink_node_on(const fs_msink_t *c, uint32_t p, uint32_t local)
{
    return p < c->n_pools && c->pool_on[p] && local >= c->o->node_lo && local <= c->o->node_hi;
}

const char *fs_msink_tenant(const fs_msink_t *c, int32_t t)
{
    return tenant_of(c, t);
}

const char *fs_msink_service(const fs_msink_t *c, uint32_t i)
{
    return i < c->n_services && c->service_name[i] ? c->service_name[i] : "service";
}

int fs_msink_family(fs_msink_t *c, const char *name, const char *type, const char *help)
{
    if (c->counting && !c->o->tsdb)
        c->cnt_bytes += 2 * strlen(name) + strlen(type) + strlen(help) + 18;
    else if (!c->tsdb && !c->counting)
        tw_printf(&c->tw, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    return 0;
}

int fs_msink_series(fs_msink_t *c, size_t fam, const char *name, const char *const (*lab)[2],
                    size_t nl, const uint32_t *k, const double *v, size_t n)
{
    int rc = grow_tv(c, n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        c->st_t[i] = ms_of(c, k[i]);
        c->st_v[i] = v[i];
    }
    lab_reset(c);
    for (size_t i = 0; i < nl; i++)
        lab_add(c, lab[i][0], lab[i][1], NULL);
    return put_series(c, fam, name, c->st_t, c->st_v, n, (int64_t)c->o->step * 1000);
}

/* --families: every name must be a family. */
static int select_families(ctx_t *c)
{
    size_t nf = fs_metrics_n_families();
    if (!c->o->families) {
        memset(c->fam_on, 1, nf);
        return 0;
    }
    memset(c->fam_on, 0, nf);
    for (const char *s = c->o->families; *s;) {
        size_t n = strcspn(s, ","), i = 0;
        while (i < nf && !(strlen(fs_metrics_family_name(i)) == n &&
                           memcmp(fs_metrics_family_name(i), s, n) == 0))
            i++;
        if (i == nf) {
            char names[3000] = "";
            for (size_t q = 0; q < nf; q++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                         q ? ", " : "", fs_metrics_family_name(q));
            return fs_error_set(c->err, FS_EUSAGE, "--families: '%.*s' is not a family "
                                "(the families: %s)", (int)n, s, names);
        }
        c->fam_on[i] = 1;
        s += n;
        if (*s == ',')
            s++;
    }
    return 0;
}

/* /services names (service replicas' pods are named after their service). */
static int read_services(ctx_t *c)
{
    if (!fs_h5read_has(c->f, "services"))
        return 0;
    int rc = fs_h5read_rows(c->f, "services", &c->n_services, c->err);
    if (rc || c->n_services == 0)
        return rc;
    if (!(c->service_name = fs_calloc(c->n_services + 1, sizeof *c->service_name)))
        return fail(c, FS_ENOMEM, "out of memory");
    return fs_h5read_str(c->f, "services", "name", c->service_name, c->err);
}

/* The export's expected size: samples per selected GPU and family from the
 * steps, series from the segments, bytes per sample as measured on
 * tests/cli/metrics.sh's exports (docs/observability.md "Size"). */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Chunk bytes per sample of a family in blocks, in thousandths (measured
 * on the 10,000-GPU week: docs/performance.md "fleetsim metrics --tsdb"):
 * the energy counter changes at every sample, the others seldom. */
static uint64_t chunk_mbytes(fam_kind_t k)
{
    return k == F_ENERGY ? 3710 : k == F_POWER ? 490 : k == F_TEMP ? 480
           : k == F_XID || k == F_DBE ? 460 : 590;
}

static void estimate(ctx_t *c, uint64_t *series, uint64_t *samples, uint64_t *bytes)
{
    uint64_t steps = c->k_hi >= c->k_lo ? (uint64_t)(c->k_hi - c->k_lo) + 1 : 0;
    uint64_t se = 0, sa = 0, gpus = 0, groups = 0, pods = 0, chunk_mb = 0, *jobs = NULL;
    size_t cap_jobs = 0;
    size_t nf = sizeof families / sizeof families[0];
    for (uint32_t g = 0; g < c->n_gpus; g++) {
        const gpu_t *gp = &c->gpus[g];
        if (!gpu_selected(c, gp))
            continue;
        gpus++;
        /* the pods held at a sample instant (--from, --to): one series per
         * job, however many segments it has on the GPU */
        uint64_t segs = 0;
        int have = fs_grow((void **)&jobs, &cap_jobs, gp->n + 1, sizeof *jobs) == 0;
        for (size_t i = 0; i < gp->n; i++) {
            double k0 = fmax(ceil(gp->s[i].start / c->o->step), c->k_lo);
            if (k0 <= c->k_hi && k0 * c->o->step < gp->s[i].end) {
                if (have)
                    jobs[segs] = gp->s[i].job;
                segs++;
            }
        }
        if (have && segs > 1) {     /* else (out of memory) each segment counts */
            qsort(jobs, segs, sizeof *jobs, cmp_u64);
            uint64_t u = 1;
            for (uint64_t i = 1; i < segs; i++)
                u += jobs[i] != jobs[i - 1];
            segs = u;
        }
        for (size_t f = 0; f < nf; f++) {
            if (!c->fam_on[f] || families[f].kind == F_XID_COUNT)
                continue;
            uint64_t ents = gp->n_inst && per_pod(families[f].kind) ? gp->n_inst : 1;
            if (gp->n_inst && families[f].kind == F_UTIL)
                continue;
            sa += ents * steps;
            chunk_mb += ents * steps * chunk_mbytes(families[f].kind);
            se += ents + (per_pod(families[f].kind) ? segs : 0);
            pods += per_pod(families[f].kind) ? segs : 0;
        }
    }
    fs_free(jobs);
    for (uint32_t g = 0; g < c->n_gpus; g++)
        groups += gpu_selected(c, &c->gpus[g]) &&
                  (g == 0 || (c->o->level == FS_METRICS_POOL
                                  ? c->nodes[c->gpus[g].node].pool != c->nodes[c->gpus[g - 1].node].pool
                                  : c->gpus[g].node != c->gpus[g - 1].node));
    if (c->o->level != FS_METRICS_GPU && gpus) {    /* one series per group and family */
        se = (se - pods) * groups / gpus + 1;
        sa = sa * groups / gpus;
        chunk_mb = chunk_mb / gpus * groups;
        pods = 0;
    }
    /* GPU level: the nodes' energy counters beside the GPUs' (emit_level) */
    for (size_t f = 0; f < nf && c->o->level == FS_METRICS_GPU; f++)
        if (c->fam_on[f] && families[f].kind == F_ENERGY) {
            uint64_t nodes = 0;
            for (uint32_t g = 0; g < c->n_gpus; g++)
                nodes += gpu_selected(c, &c->gpus[g]) &&
                         (g == 0 || c->gpus[g].node != c->gpus[g - 1].node);
            se += nodes;
            sa += nodes * steps;
            chunk_mb += nodes * steps * chunk_mbytes(F_ENERGY);
        }
    for (size_t k = 0; k < N_SCHED; k++)
        if (c->fam_on[nf + k] && c->n_tl) {
            se++;
            sa += steps;
        }
    /* the family modules' series, counted (fs_metrics_write) */
    *series = se + c->cnt_series;
    *samples = sa + c->cnt_samples;
    if (c->o->tsdb) {
        /* a GPU's own series are in every block, a pod's in about 1.3; the
         * index takes about 150 B per series and block, chunks their family's
         * bytes per sample (chunk_mbytes) and 20 B per series and block
         * (measured on 256 GPUs x 7 days: docs/observability.md "Size") */
        uint64_t blocks = steps * c->o->step * 1000 / (uint64_t)c->block_ms + 1;
        uint64_t ents = se - pods, in_blocks = ents * blocks + pods * 13 / 10;
        *bytes = in_blocks * 170 + chunk_mb / 1000 + c->cnt_bytes;
    } else {
        *bytes = sa * (c->o->level == FS_METRICS_GPU ? 285 : 120) + c->cnt_bytes;
    }
}

static void release(ctx_t *c)
{
    if (c->f)
        fs_h5read_close(c->f);
    fs_h5read_free_strings(c->pool_name, c->n_pools);
    fs_h5read_free_strings(c->pool_gpu, c->n_pools);
    fs_h5read_free_strings(c->tenant_name, c->n_tenants);
    if (c->service_name)
        fs_h5read_free_strings(c->service_name, c->n_services);
    fs_free(c->tenant_idx);
    fs_free(c->pool_nodes);
    fs_free(c->pool_gpn);
    fs_free(c->pool_cap);
    fs_free(c->pool_ambient);
    fs_free(c->pool_throttle);
    fs_free(c->pool_on);
    for (uint32_t g = 0; c->gpus && g < c->n_gpus; g++) {
        fs_free(c->gpus[g].s);
        fs_free(c->gpus[g].xid);
        fs_free(c->gpus[g].reset);
    }
    fs_free(c->gpus);
    for (uint32_t i = 0; c->insts && i < c->n_insts; i++)
        fs_free(c->insts[i].s);
    fs_free(c->insts);
    if (c->pool_mig)
        fs_h5read_free_strings(c->pool_mig, c->n_pools);
    fs_free(c->nodes);
    fs_free(c->smp);
    fs_free(c->line.p);
    fs_free(c->lv.p);
    fs_free(c->tt);
    fs_free(c->tv);
    fs_free(c->st_t);
    fs_free(c->st_v);
    fs_free(c->tl_t);
    fs_free(c->xbuf);
}

/* Free bytes where path goes (its directory). */
typedef struct uuid_key { char uuid[48]; uint32_t gpu; } uuid_key_t;

static int cmp_uuid(const void *a, const void *b)
{
    return strcmp(((const uuid_key_t *)a)->uuid, ((const uuid_key_t *)b)->uuid);
}

/* The GPUs in the order of their UUID label (the index's order). */
static int order_by_uuid(ctx_t *c, uint32_t **out)
{
    uuid_key_t *k = fs_malloc((c->n_gpus ? c->n_gpus : 1) * sizeof *k);
    *out = fs_malloc((c->n_gpus ? c->n_gpus : 1) * sizeof **out);
    if (!k || !*out) {
        fs_free(k);
        return fail(c, FS_ENOMEM, "out of memory");
    }
    for (uint32_t g = 0; g < c->n_gpus; g++) {
        gpu_uuid(&c->gpus[g], g, k[g].uuid, sizeof k[g].uuid);
        k[g].gpu = g;
    }
    qsort(k, c->n_gpus, sizeof *k, cmp_uuid);
    for (uint32_t g = 0; g < c->n_gpus; g++)
        (*out)[g] = k[g].gpu;
    fs_free(k);
    return 0;
}

static uint64_t free_bytes(const char *path, int is_dir)
{
    char *d = fs_strdup(path);
    if (!d)
        return UINT64_MAX;
    if (!is_dir) {
        char *slash = strrchr(d, '/');
        if (slash)
            *(slash == d ? slash + 1 : slash) = '\0';
        else
            strcpy(d, ".");
    } else {
        /* a directory that does not exist yet: its parent */
        struct stat sb;
        while (stat(d, &sb) != 0) {
            char *slash = strrchr(d, '/');
            if (!slash) {
                strcpy(d, ".");
                break;
            }
            *(slash == d ? slash + 1 : slash) = '\0';
        }
    }
    struct statvfs vf;
    uint64_t n = statvfs(d, &vf) == 0 ? (uint64_t)vf.f_bavail * (uint64_t)vf.f_frsize : UINT64_MAX;
    fs_free(d);
    return n;
}

static int stopped(ctx_t *c)
{
    if (c->o->interrupt && *c->o->interrupt)
        return fs_error_set(c->err, FS_EINTR, "interrupted by %s; nothing was kept",
                            *c->o->interrupt == SIGINT ? "SIGINT" : "SIGTERM");
    return 0;
}

int fs_metrics_write(const char *results, const char *out, const fs_metrics_opts_t *o,
                     fs_metrics_stats_t *st, fs_error_t *err)
{
    ctx_t c = {.results = results, .out = out, .err = err, .o = o};
    if (o->step < 1)
        return fs_error_set(err, FS_EINVAL, "metrics: the step must be at least 1 s");
    c.block_ms = o->block_ms ? o->block_ms : FS_METRICS_BLOCK_MS;
    size_t nf = sizeof families / sizeof families[0];
    int rc = select_families(&c);
    c.sched_on = 0;
    for (size_t k = 0; k < N_SCHED; k++)
        c.sched_on |= c.fam_on[nf + k];
    if (!rc)
        rc = fs_h5read_open(results, &c.f, err);
    if (!rc && !(rc = read_fleet(&c)) && !(rc = read_intervals(&c)) && !(rc = read_xids(&c)) &&
        !(rc = read_services(&c)))
        rc = read_timeline(&c);
    if (!rc) {
        double to = o->to >= 0 ? fmin(o->to, c.end_time) : c.end_time;
        double lo = ceil(fmax(o->from, 0) / o->step), hi = floor(to / o->step);
        if (!(hi >= lo) || hi > (double)UINT32_MAX - 2)
            rc = fs_error_set(err, FS_EUSAGE, "--from/--to: no sample instant between %g and "
                              "%g s (the run ends at %g s)", fmax(o->from, 0), to, c.end_time);
        c.k_lo = (uint32_t)lo;
        c.k_hi = (uint32_t)hi;
    }
    uint64_t e_series = 0, e_samples = 0, e_bytes = 0;
    if (!rc) {
        /* the family modules' series: made and counted, not written */
        c.counting = 1;
        rc = fs_mqueue_emit(&c, c.fam_on, nf + N_SCHED);
        if (!rc)
            rc = fs_mlinks_emit(&c, c.fam_on, nf + N_SCHED + fs_mqueue_n_families());
        c.counting = 0;
    }
    if (!rc) {
        estimate(&c, &e_series, &e_samples, &e_bytes);
        uint64_t avail = free_bytes(out, o->tsdb);
        /* the blocks are spooled first: twice their chunks while writing */
        uint64_t need = o->tsdb ? e_bytes + e_samples * 3 / 10 : e_bytes;
        if (o->on_estimate && o->on_estimate(o->arg, e_series, e_samples, e_bytes))
            rc = fs_error_set(err, FS_EUSAGE, "%s: not written", out);
        else if (o->max_size && e_bytes > o->max_size)
            rc = fs_error_set(err, FS_EUSAGE, "%s: the export is expected to take %.3g GB, more "
                              "than --max-size %.3g GB (select with --pools, --nodes, --families, "
                              "--from/--to, --level or a longer --step)", out, (double)e_bytes / 1e9,
                              (double)o->max_size / 1e9);
        else if (need > avail)
            rc = fs_error_set(err, FS_EUSAGE, "%s: the export is expected to need %.3g GB and "
                              "%.3g GB are free", out, (double)need / 1e9, (double)avail / 1e9);
    }
    fs_out_t fo = {0};
    int prepared = 0;
    if (!rc && o->tsdb) {
        rc = fs_tsdb_open(&c.tsdb, out, c.block_ms, err);
        if (!rc && o->interrupt)
            fs_tsdb_set_interrupt(c.tsdb, o->interrupt);
    } else if (!rc && !(rc = fs_out_prepare(&fo, out, err))) {
        prepared = 1;
        int e = tw_open(&c.tw, fo.tmp);
        if (e)
            rc = fs_error_set(err, fs_tsdb_io_code(e), "%s: %s", out, strerror(e));
    }
    uint64_t total = 0, done = 0;
    for (uint32_t g = 0; !rc && g < c.n_gpus; g++)
        total += gpu_selected(&c, &c.gpus[g]);
    uint64_t fams_on = 0;   /* progress counts the selected families only */
    for (size_t fi = 0; fi < nf; fi++)
        fams_on += c.fam_on[fi];
    total *= fams_on;
    /* text: family by family (OpenMetrics groups a family's samples); blocks:
     * GPU by GPU in UUID order, so that the spool holds the chunks in the
     * order the index lists their series (their labels sort by UUID first)
     * and each block reads it front to back through its window */
    int gpu_major = c.tsdb && o->level == FS_METRICS_GPU;
    uint32_t n_outer = gpu_major ? c.n_gpus : 1, *by_uuid = NULL;
    if (!rc && gpu_major && (rc = order_by_uuid(&c, &by_uuid)))
        n_outer = 0;
    for (uint32_t go = 0; !rc && go < n_outer; go++)
        for (size_t fi = 0; !rc && fi < nf; fi++) {
            const family_t *fm = &families[fi];
            if (!c.fam_on[fi])
                continue;
            if (!c.tsdb && o->level == FS_METRICS_GPU)
                tw_printf(&c.tw, "# HELP %s %s\n# TYPE %s %s\n", fm->name, fm->help, fm->name,
                        fm->type);
            if (o->level != FS_METRICS_GPU) {
                rc = emit_level(&c, fi, fm, o->level == FS_METRICS_POOL);
                continue;
            }
            /* under MIG, DCGM reports the profiling fields and memory per GPU
             * instance, power, energy, temperature and Xids per GPU, and no GPU_UTIL */
            uint32_t g0 = gpu_major ? go : 0, g1 = gpu_major ? go + 1 : c.n_gpus;
            for (uint32_t gg = g0; gg < g1 && !rc; gg++) {
                uint32_t g = gpu_major ? by_uuid[gg] : gg;
                const gpu_t *gp = &c.gpus[g];
                if (!gpu_selected(&c, gp))
                    continue;
                if ((rc = stopped(&c)))
                    break;
                if (fm->kind == F_XID_COUNT)
                    rc = gp->n_xid ? emit_xid_counts(&c, fi, g, gp) : 0;
                else if (gp->n_inst == 0)
                    rc = emit_gpu(&c, fi, fm, g, gp);
                else if (fm->kind == F_UTIL)
                    ;   /* not reported under MIG */
                else if (per_pod(fm->kind))
                    for (uint32_t i = 0; i < gp->n_inst && !rc; i++)
                        rc = emit_gpu(&c, fi, fm, g, &c.insts[gp->first_inst + i]);
                else
                    rc = emit_gpu(&c, fi, fm, g, gp);
                if (o->on_progress && (++done % 256 == 0 || done == total))
                    o->on_progress(o->arg, done, total);
            }
        }
    fs_free(by_uuid);
    /* beside the GPUs' energy counters, each node's: their sum, which the
     * dashboard's "Energy per hour" queries (docs/observability.md
     * "Dashboards": a week of 10,000 GPUs' counters is beyond Prometheus'
     * query timeout); named as --level node names it */
    for (size_t fi = 0; !rc && o->level == FS_METRICS_GPU && fi < nf; fi++)
        if (families[fi].kind == F_ENERGY && c.fam_on[fi])
            rc = emit_level(&c, fi, &families[fi], 0);
    if (!rc && o->level == FS_METRICS_GPU)
        rc = emit_scheduler(&c, nf);
    if (!rc)
        rc = fs_mqueue_emit(&c, c.fam_on, nf + N_SCHED);
    if (!rc)
        rc = fs_mlinks_emit(&c, c.fam_on, nf + N_SCHED + fs_mqueue_n_families());
    if (!rc)
        rc = stopped(&c);
    for (uint32_t g = 0; c.pool_on && g < c.n_gpus; g++)
        c.st.gpus += (uint64_t)gpu_selected(&c, &c.gpus[g]);
    if (c.tsdb) {
        fs_tsdb_stats_t ts = {0};
        if (!rc) {
            rc = fs_tsdb_close(c.tsdb, &ts, err);
            c.st.bytes = ts.bytes;
            c.st.blocks = ts.blocks;
        } else {
            fs_tsdb_abort(c.tsdb);
        }
        c.tsdb = NULL;
    } else if (c.tw.p) {
        if (!rc) {
            tw_put(&c.tw, "# EOF\n", 6);
            c.st.bytes += 6;
        }
        int e = tw_close(&c.tw);
        if (e && !rc)
            rc = fs_error_set(err, fs_tsdb_io_code(e), "%s: %s", out, strerror(e));
    }
    if (!rc && prepared)
        rc = fs_out_commit(&fo, rename, err);
    if (rc && prepared)
        unlink(fo.tmp);
    if (prepared)
        fs_out_release(&fo);
    if (st) {
        *st = c.st;
        st->sched_skipped_interval = c.sched_note;
    }
    release(&c);
    return rc;
}
