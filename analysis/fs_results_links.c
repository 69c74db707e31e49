/*
 * fs_results_links: the fabric's tables (cluster.fabric, models/fs_fabric.h;
 * docs/results.md "/links" and "/jobs_network"), written once at the run's
 * end, only when the fabric is on: /links, one row per link, and
 * /jobs_network, one row per job whose ring crossed the network (joins
 * /jobs on id).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fs_results_int.h"

#include <string.h>

#include "../sim/fs_alloc.h"

#define TIER_LEN 12     /* "leaf_uplink" and its NUL */

/* /links memory row: this struct, then the tier's name (fixed length). */
typedef struct link_mem {
    uint32_t link, pool;
    int32_t node;
    uint32_t leaf, ports, failures;
    double capacity, bytes, busy_s, peak_util, mean_util, saturated_s, port_down_s, degraded_s;
    uint32_t rails;
} link_mem_t;

#define LC(name, kind, unit) {#name, kind, offsetof(link_mem_t, name), unit}
static const col_t link_cols[] = {
    LC(link, K_U32, "-"), {"tier", K_STR, sizeof(link_mem_t), "-"}, LC(pool, K_U32, "-"),
    LC(node, K_I32, "-"), LC(leaf, K_U32, "-"), LC(ports, K_U32, "-"),
    LC(capacity, K_F64, "B/s"), LC(bytes, K_F64, "B"), LC(busy_s, K_F64, "s"),
    LC(peak_util, K_F64, "-"), LC(mean_util, K_F64, "-"), LC(saturated_s, K_F64, "s"),
    LC(failures, K_U32, "-"), LC(port_down_s, K_F64, "port-s"), LC(degraded_s, K_F64, "s"),
    LC(rails, K_U32, "-"),
};
#undef LC

#define JC(name, kind, unit) {#name, kind, offsetof(fs_jobnet_row_t, name), unit}
static const col_t jobnet_cols[] = {
    JC(id, K_U64, "-"), JC(network_slow_s, K_F64, "s"), JC(comm_s, K_F64, "s"),
    JC(comm_share, K_F64, "-"), JC(net_run_s, K_F64, "s"), JC(iterations, K_F64, "-"),
    JC(bytes_sent, K_F64, "B"),
};
#undef JC

static const char *tier_name(int32_t t)
{
    return t == FS_LINK_NIC ? "nic" : "leaf_uplink";
}

static hsize_t chunk_of(size_t n)
{
    if (n >= CHUNK_ROWS)
        return CHUNK_ROWS;
    size_t c = (n + SMALL_CHUNK_ROWS - 1) / SMALL_CHUNK_ROWS * SMALL_CHUNK_ROWS;
    return c ? (hsize_t)c : SMALL_CHUNK_ROWS;
}

static int write_links(hid_t fid, h5call_t *c, const fs_link_row_t *links, size_t n,
                       fs_error_t *err)
{
    size_t strsz[N_OF(link_cols)] = {0, TIER_LEN};
    table_spec_t t = {"links", "fleetsim fabric links", link_cols, N_OF(link_cols), strsz, NULL,
                      chunk_of(n)};
    int rc = fs_rs_make_table(fid, c, &t, err);
    if (rc || n == 0)
        return rc;
    size_t stride = fs_rs_round_up8(sizeof(link_mem_t) + TIER_LEN);
    unsigned char *buf = fs_calloc(n, stride);
    if (!buf)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory writing /links", c->file);
    for (size_t i = 0; i < n; i++) {
        const fs_link_row_t *l = &links[i];
        link_mem_t m = {l->link, l->pool, l->node, l->leaf, l->ports, l->failures,
                        l->capacity, l->bytes, l->busy_s, l->peak_util, l->mean_util,
                        l->saturated_s, l->port_down_s, l->degraded_s, l->rails};
        memcpy(buf + i * stride, &m, sizeof m);
        const char *name = tier_name(l->tier);
        memcpy(buf + i * stride + sizeof m, name, strlen(name));
    }
    rc = fs_rs_append_rows(fid, c, &t, stride, n, buf, err);
    fs_free(buf);
    return rc;
}

/* /jobs_network: its rows packed and compressed as whole chunks outside
 * the HDF5 lock (fs_results_zip.c, as /jobs), where the host's byte order
 * allows it, else appended through HDF5's filters. */
static const table_spec_t *jobnet_spec(size_t n, table_spec_t *t)
{
    *t = (table_spec_t){"jobs_network", "fleetsim jobs' network figures", jobnet_cols,
                        N_OF(jobnet_cols), NULL, NULL, chunk_of(n)};
    return t;
}

int fs_results_add_fabric(fs_results_t *r, const fs_link_row_t *links, size_t n_links,
                          const fs_jobnet_row_t *jobs, size_t n_jobs, fs_error_t *err)
{
    if (!r)
        return fs_error_set(err, FS_EINVAL, "results file: fabric tables without an open file");
    int rc = fs_rs_writer_drain(r, err);
    if (rc)
        return rc;
    table_spec_t tj;
    jobnet_spec(n_jobs, &tj);
    zchunk_t *z = NULL;
    size_t nch = 0;
    int direct = n_jobs > 0 && fs_rs_host_is_le();
    if (direct && (rc = fs_rs_build_chunks(&r->zx, &tj, sizeof *jobs, n_jobs, jobs, &z, &nch,
                                           r->tmp, err)))
        return rc;
    h5call_t c;
    h5lock_t l = lock_of(r);
    h5_enter(l, &c, r->tmp);
    rc = write_links(r->fid, &c, links, n_links, err);
    if (!rc)
        rc = fs_rs_make_table(r->fid, &c, &tj, err);
    if (!rc && direct)
        rc = fs_rs_write_chunks(r->fid, &c, &tj, 0, n_jobs, z, nch, err);
    else if (!rc && n_jobs)
        rc = fs_rs_append_rows(r->fid, &c, &tj, sizeof *jobs, n_jobs, jobs, err);
    h5_leave(l, &c);
    fs_rs_free_chunks(z, nch);
    return rc;
}
