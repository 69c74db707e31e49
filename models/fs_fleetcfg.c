#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strcasecmp */
#endif
#include "fs_fleetcfg.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../sim/fs_alloc.h"
#include "fs_catalog.h"

/* Trace spellings of catalog models (the rest match the catalog's name,
 * ignoring case). */
static const struct {
    const char *alias, *name;
} aliases[] = {
    {"V100M32", "V100"}, {"V100M16", "V100"}, {"V100-32GB", "V100"}, {"V100-16GB", "V100"},
    {"Tesla-V100", "V100"}, {"P100M16", "P100"}, {"Tesla-P100", "P100"}, {"Tesla-T4", "T4"},
    {"A100-80GB", "A100"}, {"A100-40GB", "A100"}, {"H100-80GB", "H100"},
};

const char *fs_fleetcfg_catalog_name(const char *model)
{
    int i = fs_catalog_find(model);
    if (i >= 0)
        return fs_catalog_get((size_t)i)->name;
    for (size_t k = 0; k < sizeof aliases / sizeof aliases[0]; k++)
        if (strcasecmp(aliases[k].alias, model) == 0)
            return aliases[k].name;
    return NULL;
}

static int name_allows(const char *t, size_t n, const char *pool_name, const char *pool_gpu)
{
    if (n == 0)
        return 0;
    if ((strlen(pool_gpu) == n && strncasecmp(pool_gpu, t, n) == 0) ||
        (strlen(pool_name) == n && strncasecmp(pool_name, t, n) == 0))
        return 1;
    /* pool_name == t + "x" + digits, optionally + "-" + the node size of a list's
     * pools (fs_fleetcfg_load: "V100M16x8-64c256g") */
    size_t pl = strlen(pool_name), i = n + 1;
    if (pl < n + 2 || strncasecmp(pool_name, t, n) != 0 || pool_name[n] != 'x')
        return 0;
    while (i < pl && pool_name[i] >= '0' && pool_name[i] <= '9')
        i++;
    return i > n + 1 && (i == pl || pool_name[i] == '-');
}

int fs_fleetcfg_type_allows(const char *type, const char *pool_name, const char *pool_gpu)
{
    for (const char *p = type;;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (name_allows(p, n, pool_name ? pool_name : "", pool_gpu ? pool_gpu : ""))
            return 1;
        if (!bar)
            return 0;
        p = bar + 1;
    }
}

int fs_fleetcfg_load(int format, const char *path, const char *gpu, fs_pool_cfg_t **pools,
                     size_t *n, fs_fleet_stats_t *stats, fs_error_t *err)
{
    fs_fleet_group_t *g = NULL;
    size_t ng = 0;
    fs_fleet_stats_t st;
    int rc = fs_fleet_read(format, path, gpu, &g, &ng, &st, err);
    if (rc)
        return rc;
    /* The pools, appended in order of first appearance. */
    fs_pool_cfg_t *arr = NULL;
    size_t base = *n, cap = base;   /* the array holds exactly *n pools */
    if (fs_grow((void **)pools, &cap, base + ng, sizeof **pools) || !(arr = *pools))
        rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    if (rc == 0) {
        *pools = arr;
        size_t k = 0;
        for (; k < ng; k++) {
            fs_pool_cfg_t *p = &arr[base + k];
            memset(p, 0, sizeof *p);
            char name[200];
            /* MODELxGPUS; when one (model, GPUs) has nodes of several CPU and
             * memory sizes, each is its own pool: MODELxGPUS-<cores>c<GiB>g */
            int variants = 0;
            for (size_t j = 0; j < ng; j++)
                variants += g[j].gpn == g[k].gpn && strcmp(g[j].model, g[k].model) == 0;
            if (variants > 1)
                snprintf(name, sizeof name, "%sx%u-%gc%gg", g[k].model, g[k].gpn,
                         g[k].cpu_milli / 1000.0, g[k].mem_mib / 1024.0);
            else
                snprintf(name, sizeof name, "%sx%u", g[k].model, g[k].gpn);
            const char *cat = fs_fleetcfg_catalog_name(g[k].model);
            p->name = fs_strdup(name);
            p->gpu = fs_strdup(cat ? cat : g[k].model);
            p->nodes = (uint32_t)g[k].nodes;
            p->gpus_per_node = g[k].gpn;
            p->cpu_milli = g[k].cpu_milli;
            p->memory_mib = g[k].mem_mib;
            p->node_rank = g[k].rows;     /* the pool owns it now */
            g[k].rows = NULL;
            int clash = 0;
            for (size_t j = 0; j < base + k && p->name; j++)
                clash |= strcmp(arr[j].name ? arr[j].name : "", p->name) == 0;
            if (!p->name || !p->gpu || clash) {
                rc = clash ? fs_error_set(err, FS_EINVAL, "%s: pool name '%s' is already used",
                                          path, name)
                           : fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
                k++;
                break;
            }
        }
        if (rc) {
            for (size_t j = 0; j < k; j++) {
                fs_free(arr[base + j].name);
                fs_free(arr[base + j].gpu);
                fs_free(arr[base + j].node_rank);
            }
        } else {
            *n = base + ng;
        }
    }
    if (rc == 0 && stats)
        *stats = st;
    fs_fleet_groups_free(g, ng);
    return rc;
}
