#include "fs_memsrc.h"
#include "../sim/fs_alloc.h"

#include <string.h>

typedef struct memsrc {
    fs_job_t *jobs;
    size_t n, next;
    char **tenants;
    size_t n_tenants;
    char **types;
    size_t n_types;
} memsrc_t;

static int ms_next(void *st, fs_job_t *buf, size_t cap, size_t *n, fs_error_t *err)
{
    (void)err;
    memsrc_t *m = st;
    size_t k = m->n - m->next < cap ? m->n - m->next : cap;
    memcpy(buf, m->jobs + m->next, k * sizeof *buf);
    m->next += k;
    *n = k;
    return 0;
}

static const char *ms_tenant(void *st, int32_t i)
{
    memsrc_t *m = st;
    return i >= 0 && (size_t)i < m->n_tenants ? m->tenants[i] : NULL;
}

static int32_t ms_tenant_count(void *st) { return (int32_t)((memsrc_t *)st)->n_tenants; }

static const char *ms_type(void *st, int32_t i)
{
    memsrc_t *m = st;
    return i >= 0 && (size_t)i < m->n_types ? m->types[i] : NULL;
}

static int32_t ms_type_count(void *st) { return (int32_t)((memsrc_t *)st)->n_types; }

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        fs_free(v[i]);
    fs_free(v);
}

static void ms_destroy(void *st)
{
    memsrc_t *m = st;
    fs_free(m->jobs);
    free_names(m->tenants, m->n_tenants);
    free_names(m->types, m->n_types);
    fs_free(m);
}

static const fs_source_ops_t memsrc_ops = {
    .name = "memory",
    .next = ms_next,
    .tenant_name = ms_tenant,
    .tenant_count = ms_tenant_count,
    .gpu_type_name = ms_type,
    .gpu_type_count = ms_type_count,
    .destroy = ms_destroy,
};

static char **copy_names(const char *const *v, size_t n, int *fail)
{
    if (n == 0)
        return NULL;
    char **c = fs_calloc(n, sizeof *c);
    if (!c) {
        *fail = 1;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (!(c[i] = fs_strdup(v[i])))
            *fail = 1;
    return c;
}

int fs_memsrc_create(const fs_job_t *jobs, size_t n, const char *const *tenants, size_t n_tenants,
                     const char *const *gpu_types, size_t n_gpu_types, fs_source_t **out,
                     fs_error_t *err)
{
    *out = NULL;
    for (size_t i = 1; i < n; i++)
        if (jobs[i].submit < jobs[i - 1].submit)
            return fs_error_set(err, FS_EINVAL, "memory workload: job %zu submitted before job %zu",
                                i + 1, i);
    memsrc_t *m = fs_calloc(1, sizeof *m);
    fs_source_t *s = fs_calloc(1, sizeof *s);
    int fail = !m || !s;
    if (m) {
        m->jobs = fs_malloc((n ? n : 1) * sizeof *jobs);
        fail |= !m->jobs;
        if (m->jobs && n)
            memcpy(m->jobs, jobs, n * sizeof *jobs);
        m->n = n;
        m->tenants = copy_names(tenants, n_tenants, &fail);
        m->n_tenants = m->tenants ? n_tenants : 0;
        m->types = copy_names(gpu_types, n_gpu_types, &fail);
        m->n_types = m->types ? n_gpu_types : 0;
    }
    if (fail) {
        if (m)
            ms_destroy(m);
        fs_free(s);
        return fs_error_set(err, FS_ENOMEM, "memory workload: out of memory");
    }
    s->ops = &memsrc_ops;
    s->state = m;
    *out = s;
    return 0;
}
