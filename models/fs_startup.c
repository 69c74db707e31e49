#include "fs_startup.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* One cached image on one node. */
typedef struct entry {
    uint32_t image;         /* index into images (n_images: the default image) */
    fs_time_t ready;        /* its pull ends then (<= now: on disk) */
    fs_time_t used;         /* last start that used it (LRU) */
} entry_t;

typedef struct node_cache {
    entry_t *e;
    size_t n, cap;
    uint64_t mib;           /* sum of the sizes of its entries */
} node_cache_t;

struct fs_startup {
    const fs_startup_cfg_t *cfg;
    node_cache_t *nodes;
    uint32_t n_nodes;
    fs_time_t *pulls;       /* min-heap of the end times of pulls started */
    size_t n_pulls, cap_pulls;
};

int fs_startup_create(const fs_config_t *cfg, const fs_cluster_t *c, fs_startup_t **out,
                      fs_error_t *err)
{
    const fs_startup_cfg_t *sc = &cfg->startup;
    *out = NULL;
    if (sc->container == 0 && sc->image_mib == 0 && sc->load == 0 && sc->n_images == 0)
        return 0;
    for (size_t i = 0; i < sc->n_images; i++) {
        for (size_t k = 0; k < i; k++)
            if (sc->images[k].job_class == sc->images[i].job_class)
                return fs_error_set(err, FS_EINVAL, "startup.images.%zu.class: class %u already "
                                    "has an image (item %zu)", i, sc->images[i].job_class, k);
        if (sc->disk_mib && sc->images[i].size_mib > sc->disk_mib)
            return fs_error_set(err, FS_EINVAL, "startup.images.%zu.size: %llu MiB is more than "
                                "a node's image cache (startup.node_disk, %llu MiB)", i,
                                (unsigned long long)sc->images[i].size_mib,
                                (unsigned long long)sc->disk_mib);
    }
    if (sc->disk_mib && sc->image_mib > sc->disk_mib)
        return fs_error_set(err, FS_EINVAL, "startup.image_size: %llu MiB is more than a node's "
                            "image cache (startup.node_disk, %llu MiB)",
                            (unsigned long long)sc->image_mib, (unsigned long long)sc->disk_mib);
    fs_startup_t *s = fs_calloc(1, sizeof *s);
    if (!s || !(s->nodes = fs_calloc(c->n_nodes ? c->n_nodes : 1, sizeof *s->nodes))) {
        fs_free(s);
        return fs_error_set(err, FS_ENOMEM, "startup: out of memory");
    }
    s->cfg = sc;
    s->n_nodes = c->n_nodes;
    *out = s;
    return 0;
}

void fs_startup_destroy(fs_startup_t *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->n_nodes; i++)
        fs_free(s->nodes[i].e);
    fs_free(s->nodes);
    fs_free(s->pulls);
    fs_free(s);
}

/* ---- pulls in progress: a min-heap of end times ----------------------------- */

static void heap_pop(fs_startup_t *s)
{
    fs_time_t *h = s->pulls, x = h[--s->n_pulls];
    size_t i = 0, n = s->n_pulls;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        fs_time_t v = x;
        if (l < n && h[l] < v) {
            m = l;
            v = h[l];
        }
        if (r < n && h[r] < v)
            m = r;
        if (m == i)
            break;
        h[i] = h[m];
        i = m;
    }
    if (n)
        h[i] = x;
}

static int heap_push(fs_startup_t *s, fs_time_t t)
{
    if (fs_grow((void **)&s->pulls, &s->cap_pulls, s->n_pulls + 1, sizeof *s->pulls))
        return FS_ENOMEM;
    size_t i = s->n_pulls++;
    while (i > 0 && s->pulls[(i - 1) / 2] > t) {
        s->pulls[i] = s->pulls[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->pulls[i] = t;
    return 0;
}

/* ---- one node's cache ----------------------------------------------------------- */

static uint64_t image_mib(const fs_startup_t *s, uint32_t image)
{
    return image < s->cfg->n_images ? s->cfg->images[image].size_mib : s->cfg->image_mib;
}

/* Evicts least recently used images no pull is writing until `need` more
 * MiB fit (a node's disk: 0 unlimited).  An image being pulled is never
 * evicted, so a node may run over its disk while pulls are in flight. */
static void make_room(fs_startup_t *s, node_cache_t *nc, uint64_t need, fs_time_t now)
{
    uint64_t disk = s->cfg->disk_mib;
    while (disk && nc->mib + need > disk) {
        size_t victim = SIZE_MAX;
        for (size_t i = 0; i < nc->n; i++)
            if (nc->e[i].ready <= now && (victim == SIZE_MAX || nc->e[i].used < nc->e[victim].used))
                victim = i;
        if (victim == SIZE_MAX)
            return;
        nc->mib -= image_mib(s, nc->e[victim].image);
        nc->e[victim] = nc->e[--nc->n];
    }
}

fs_time_t fs_startup_begin(fs_startup_t *s, const fs_placement_t *p, uint32_t job_class,
                           fs_time_t now)
{
    const fs_startup_cfg_t *sc = s->cfg;
    uint32_t image = (uint32_t)sc->n_images;
    fs_time_t load = sc->load;
    for (size_t i = 0; i < sc->n_images; i++)
        if (sc->images[i].job_class == job_class) {
            image = (uint32_t)i;
            load = sc->images[i].load;
        }
    uint64_t size = image_mib(s, image);
    fs_time_t wait = 0;
    if (size > 0) {
        while (s->n_pulls && s->pulls[0] <= now)
            heap_pop(s);
        const fs_slice_t *sl = fs_placement_slices(p);
        /* the nodes that pull now, to share the registry */
        uint32_t fresh = 0;
        for (uint32_t k = 0; k < p->n; k++) {
            const node_cache_t *nc = &s->nodes[sl[k].node];
            size_t i = 0;
            while (i < nc->n && nc->e[i].image != image)
                i++;
            fresh += i == nc->n;
        }
        double bw = sc->node_mibps;
        if (sc->registry_mibps > 0 && fresh > 0) {
            double share = sc->registry_mibps / (double)(s->n_pulls + fresh);
            if (share < bw)
                bw = share;
        }
        fs_time_t pull = (fs_time_t)ceil((double)size / bw * 1e6);
        for (uint32_t k = 0; k < p->n; k++) {
            node_cache_t *nc = &s->nodes[sl[k].node];
            size_t i = 0;
            while (i < nc->n && nc->e[i].image != image)
                i++;
            if (i == nc->n) {   /* not there: pull it now */
                make_room(s, nc, size, now);
                if (fs_grow((void **)&nc->e, &nc->cap, nc->n + 1, sizeof *nc->e))
                    return -1;
                i = nc->n++;
                nc->e[i] = (entry_t){image, now + pull, now};
                nc->mib += size;
                if (heap_push(s, now + pull))
                    return -1;
            }
            entry_t *e = &nc->e[i];
            e->used = now;
            if (e->ready - now > wait)
                wait = e->ready - now;
        }
    }
    return wait + sc->container + load;
}
