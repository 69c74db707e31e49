#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strcasecmp */
#endif
#include "fs_fleet.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../sim/fs_alloc.h"
#include "fs_csv.h"
#include "fs_rdr.h"

const char *const fs_fleet_format_names[] = {
    [FS_FLEET_OPENB] = "openb", [FS_FLEET_PAI] = "pai", [FS_FLEET_PHILLY] = "philly",
    [FS_FLEET_TIRESIAS] = "tiresias", NULL,
};

#define MAX_GPN 1024u
#define MAX_NODES 10000000u

/* ------------------------------------------------------------------ */

typedef fs_fleet_group_t group_t;

typedef struct fleet {
    fs_csv_t csv;
    group_t *g;
    size_t n, cap;
    fs_fleet_stats_t st;
    fs_error_t *err;
} fleet_t;

static int field_err(fleet_t *f, const char *field, const char *expected, const fs_csv_field_t *x)
{
    char got[256];
    fs_rdr_show(got, sizeof got, x->s, x->len);
    return fs_error_set(f->err, FS_EINVAL, "%s:%llu: field %s: expected %s (got '%s')",
                        f->csv.path, (unsigned long long)f->csv.line_no, field, expected, got);
}

/* Nodes [first, first + nodes) of group g are the list's next GPU machines. */
static int add_rows(fleet_t *f, group_t *g, uint64_t first, uint64_t nodes)
{
    if (fs_grow((void **)&g->rows, &g->cap_rows, first + nodes, sizeof *g->rows))
        return fs_error_set(f->err, FS_ENOMEM, "%s: out of memory", f->csv.path);
    for (uint64_t k = 0; k < nodes; k++)
        g->rows[first + k] = (uint32_t)(f->st.gpu_machines - nodes + k);
    return 0;
}

static int add(fleet_t *f, const char *model, size_t mlen, uint64_t gpn, uint64_t cpu,
               uint64_t mem, uint64_t nodes)
{
    f->st.machines += nodes;
    if (gpn == 0) {
        f->st.no_gpu += nodes;
        return 0;
    }
    f->st.gpu_machines += nodes;
    f->st.gpus += gpn * nodes;
    for (size_t i = 0; i < f->n; i++)
        if (f->g[i].gpn == gpn && f->g[i].cpu_milli == cpu && f->g[i].mem_mib == mem &&
            strlen(f->g[i].model) == mlen &&
            memcmp(f->g[i].model, model, mlen) == 0) {
            uint64_t first = f->g[i].nodes;
            f->g[i].nodes += nodes;
            if (f->g[i].nodes > MAX_NODES)
                return fs_error_set(f->err, FS_EINVAL, "%s:%llu: more than %u nodes of one kind",
                                    f->csv.path, (unsigned long long)f->csv.line_no, MAX_NODES);
            return add_rows(f, &f->g[i], first, nodes);
        }
    if (fs_grow((void **)&f->g, &f->cap, f->n + 1, sizeof *f->g) ||
        !(f->g[f->n].model = fs_strndup(model, mlen)))
        return fs_error_set(f->err, FS_ENOMEM, "%s: out of memory", f->csv.path);
    f->g[f->n].gpn = (uint32_t)gpn;
    f->g[f->n].cpu_milli = (uint32_t)cpu;
    f->g[f->n].mem_mib = (uint32_t)mem;
    f->g[f->n].nodes = nodes;
    f->g[f->n].rows = NULL;
    f->g[f->n].cap_rows = 0;
    f->n++;
    return add_rows(f, &f->g[f->n - 1], 0, nodes);
}

static int next(fleet_t *f)
{
    for (;;) {
        int rc = fs_csv_next_line(&f->csv, f->err);
        if (rc <= 0)
            return rc;
        const char *l = f->csv.line;
        if (f->csv.line_len && l[0] == '#')
            continue;
        for (size_t i = 0; i < f->csv.line_len; i++)
            if (l[i] != ' ' && l[i] != '\t')
                return 1;
    }
}

static int split(fleet_t *f, size_t width)
{
    int rc = fs_csv_split(&f->csv, ',', f->err);
    if (rc)
        return rc;
    if (width && f->csv.n_fields != width)
        return fs_error_set(f->err, FS_EINVAL, "%s:%llu: expected %zu fields, got %zu",
                            f->csv.path, (unsigned long long)f->csv.line_no, width,
                            f->csv.n_fields);
    return 0;
}

static int col_of(const fleet_t *f, const char *name)
{
    for (size_t i = 0; i < f->csv.n_fields; i++)
        if (strcmp(f->csv.fields[i].s, name) == 0)
            return (int)i;
    return -1;
}

static int get_uint(fleet_t *f, const char *field, const fs_csv_field_t *x, uint64_t hi,
                    uint64_t *v)
{
    if (fs_rdr_u64(x->s, x->len, v) || *v > hi) {
        char what[64];
        snprintf(what, sizeof what, "an integer in 0..%llu", (unsigned long long)hi);
        return field_err(f, field, what, x);
    }
    return 0;
}

static int missing(fleet_t *f, const char *col, const char *what)
{
    return fs_error_set(f->err, FS_EINVAL, "%s:%llu: missing column '%s' (%s)", f->csv.path,
                        (unsigned long long)f->csv.line_no, col, what);
}

static int empty(fleet_t *f, const char *what)
{
    return fs_error_set(f->err, FS_EINVAL, "%s: empty file (expected %s)", f->csv.path, what);
}

static int read_openb(fleet_t *f)
{
    static const char *const what = "an openb node list: sn,cpu_milli,memory_mib,gpu,model";
    int rc = next(f);
    if (rc <= 0)
        return rc < 0 ? rc : empty(f, what);
    if ((rc = split(f, 0)))
        return rc;
    int cg = col_of(f, "gpu"), cm = col_of(f, "model"), cc = col_of(f, "cpu_milli"),
        cr = col_of(f, "memory_mib");
    size_t width = f->csv.n_fields;
    if (cg < 0 || cm < 0)
        return missing(f, cg < 0 ? "gpu" : "model", what);
    while ((rc = next(f)) == 1) {
        uint64_t g, cpu = 0, mem = 0;
        if ((rc = split(f, width)) || (rc = get_uint(f, "gpu", &f->csv.fields[cg], MAX_GPN, &g)) ||
            (cc >= 0 && f->csv.fields[cc].len &&
             (rc = get_uint(f, "cpu_milli", &f->csv.fields[cc], UINT32_MAX, &cpu))) ||
            (cr >= 0 && f->csv.fields[cr].len &&
             (rc = get_uint(f, "memory_mib", &f->csv.fields[cr], UINT32_MAX, &mem))))
            return rc;
        const fs_csv_field_t *m = &f->csv.fields[cm];
        if (g && (m->len == 0 || !fs_rdr_valid_name(m->s, m->len)))
            return field_err(f, "model", "a GPU model name", m);
        if ((rc = add(f, m->s, m->len, g, cpu, mem, 1)))
            return rc;
    }
    return rc;
}

static int read_pai(fleet_t *f)
{
    int rc;
    while ((rc = next(f)) == 1) {
        if ((rc = split(f, 5)))
            return rc;
        const fs_csv_field_t *x = f->csv.fields;
        if (f->st.machines == 0 && f->n == 0 && strcmp(x[0].s, "machine") == 0)
            continue;   /* a header line */
        uint64_t g, cpu = 0, mem = 0;
        if ((rc = get_uint(f, "cap_gpu", &x[4], MAX_GPN, &g)) ||
            (x[2].len && (rc = get_uint(f, "cap_cpu", &x[2], UINT32_MAX / 1000, &cpu))) ||
            (x[3].len && (rc = get_uint(f, "cap_mem", &x[3], UINT32_MAX / 1024, &mem))))
            return rc;
        if (g && (x[1].len == 0 || !fs_rdr_valid_name(x[1].s, x[1].len)))
            return field_err(f, "gpu_type", "a GPU model name", &x[1]);
        /* cap_cpu in cores, cap_mem in GB (PAI 2020 machine_spec) */
        if ((rc = add(f, x[1].s, x[1].len, g, cpu * 1000, mem * 1024, 1)))
            return rc;
    }
    if (rc == 0 && f->st.machines == 0)
        return empty(f, "a PAI machine spec: machine,gpu_type,cap_cpu,cap_mem,cap_gpu");
    return rc;
}

static int read_philly(fleet_t *f, const char *gpu)
{
    static const char *const what = "a Philly machine list with a 'number of GPUs' column";
    int rc = next(f);
    if (rc <= 0)
        return rc < 0 ? rc : empty(f, what);
    if ((rc = split(f, 0)))
        return rc;
    int cg = col_of(f, "number of GPUs"), cm = col_of(f, "single GPU mem");
    size_t width = f->csv.n_fields;
    if (cg < 0)
        return missing(f, "number of GPUs", what);
    while ((rc = next(f)) == 1) {
        uint64_t g;
        if ((rc = split(f, width)) ||
            (rc = get_uint(f, "number of GPUs", &f->csv.fields[cg], MAX_GPN, &g)))
            return rc;
        char model[64];
        if (gpu) {
            snprintf(model, sizeof model, "%s", gpu);
        } else if (cm >= 0) {
            const fs_csv_field_t *m = &f->csv.fields[cm];
            if (g && (m->len == 0 || m->len > 40 || !fs_rdr_valid_name(m->s, m->len)))
                return field_err(f, "single GPU mem", "a memory size such as 24GB", m);
            snprintf(model, sizeof model, "GPU-%s", m->s);
        } else {
            snprintf(model, sizeof model, "unknown");
        }
        if ((rc = add(f, model, strlen(model), g, 0, 0, 1)))
            return rc;
    }
    return rc;
}

static int read_tiresias(fleet_t *f, const char *gpu)
{
    static const char *const what = "a Tiresias cluster spec: num_switch,num_node_p_switch,"
                                    "num_gpu_p_node,num_cpu_p_node,mem_p_node";
    int rc = next(f);
    if (rc <= 0)
        return rc < 0 ? rc : empty(f, what);
    if ((rc = split(f, 0)))
        return rc;
    int cs = col_of(f, "num_switch"), cn = col_of(f, "num_node_p_switch"),
        cg = col_of(f, "num_gpu_p_node");
    size_t width = f->csv.n_fields;
    if (cs < 0 || cn < 0 || cg < 0)
        return missing(f, cs < 0 ? "num_switch" : cn < 0 ? "num_node_p_switch" : "num_gpu_p_node",
                       what);
    const char *model = gpu ? gpu : "unknown";
    int rows = 0;
    while ((rc = next(f)) == 1) {
        uint64_t s, n, g;
        const fs_csv_field_t *x = f->csv.fields;
        if ((rc = split(f, width)) || (rc = get_uint(f, "num_switch", &x[cs], 100000, &s)) ||
            (rc = get_uint(f, "num_node_p_switch", &x[cn], 100000, &n)) ||
            (rc = get_uint(f, "num_gpu_p_node", &x[cg], MAX_GPN, &g)))
            return rc;
        if (s * n > MAX_NODES)
            return field_err(f, "num_node_p_switch", "at most 10000000 nodes in all", &x[cn]);
        if ((rc = add(f, model, strlen(model), g, 0, 0, s * n)))
            return rc;
        rows++;
    }
    if (rc == 0 && rows == 0)
        return fs_error_set(f->err, FS_EINVAL, "%s: no cluster row after the header", f->csv.path);
    return rc;
}

int fs_fleet_read(int format, const char *path, const char *gpu, fs_fleet_group_t **groups,
                  size_t *n, fs_fleet_stats_t *stats, fs_error_t *err)
{
    *groups = NULL;
    *n = 0;
    if (format < FS_FLEET_OPENB || format > FS_FLEET_TIRESIAS)
        return fs_error_set(err, FS_EINVAL, "unknown machine-list format %d", format);
    if (gpu && !*gpu)
        gpu = NULL;
    fleet_t f;
    memset(&f, 0, sizeof f);
    f.err = err;
    int rc = fs_csv_open(&f.csv, path, 0, err);
    if (rc)
        return rc;
    switch (format) {
    case FS_FLEET_OPENB: rc = read_openb(&f); break;
    case FS_FLEET_PAI: rc = read_pai(&f); break;
    case FS_FLEET_PHILLY: rc = read_philly(&f, gpu); break;
    default: rc = read_tiresias(&f, gpu); break;
    }
    if (rc == 0 && f.n == 0)
        rc = fs_error_set(err, FS_EINVAL, "%s: no machine with GPUs (%llu machines read)", path,
                          (unsigned long long)f.st.machines);
    fs_csv_close(&f.csv);
    if (rc) {
        fs_fleet_groups_free(f.g, f.n);
        return rc;
    }
    if (stats)
        *stats = f.st;
    *groups = f.g;
    *n = f.n;
    return 0;
}

void fs_fleet_groups_free(fs_fleet_group_t *g, size_t n)
{
    for (size_t i = 0; g && i < n; i++) {
        fs_free(g[i].model);
        fs_free(g[i].rows);
    }
    fs_free(g);
}
