/*
 * The node index: node -> the jobs holding GPUs on it, built the first time
 * a fleet operation needs it (a run without failures never pays for it).
 * Prefix fs_nidx_, state fs_nodeidx_t.
 */
#include "fs_model_int.h"

static int on_node(const fs_jobrt_t *j, uint32_t node)
{
    const fs_slice_t *s = fs_placement_slices(&j->r->place);
    for (uint32_t i = 0; i < j->r->place.n; i++)
        if (s[i].node == node)
            return 1;
    return 0;
}

/* ---- the node index and attempts ------------------------------------------------ */

static int nidx_push(nodevec_t *v, uint32_t slot)
{
    if (fs_grow((void **)&v->v, &v->cap, v->n + 1, sizeof *v->v))
        return FS_ENOMEM;
    v->v[v->n++] = slot;
    return 0;
}

void fs_nidx_drop(nodevec_t *v, uint32_t slot)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->v[i] == slot) {
            v->v[i] = v->v[--v->n];
            return;
        }
}

int fs_nidx_add(fs_model_t *m, uint32_t slot)
{
    const fs_placement_t *p = &m->js.slots[slot].r->place;
    const fs_slice_t *s = fs_placement_slices(p);
    for (uint32_t i = 0; i < p->n; i++)
        if (nidx_push(&m->nodes.jobs[s[i].node], slot))
            return FS_ENOMEM;
    return 0;
}

/* O(slices x jobs per node); a slice already dropped is a no-op. */
void fs_nidx_del(fs_model_t *m, uint32_t slot)
{
    const fs_placement_t *p = &m->js.slots[slot].r->place;
    const fs_slice_t *s = fs_placement_slices(p);
    for (uint32_t i = 0; i < p->n; i++)
        fs_nidx_drop(&m->nodes.jobs[s[i].node], slot);
}

/* The node index, built from the jobs holding GPUs the first time a fleet
 * op needs it (a run without failures never pays for it). */
int fs_nidx_ensure(fs_model_t *m)
{
    if (m->nodes.jobs)
        return 0;
    m->nodes.jobs = fs_calloc(m->cluster.n_nodes ? m->cluster.n_nodes : 1, sizeof *m->nodes.jobs);
    if (!m->nodes.jobs)
        return FS_ENOMEM;
    for (size_t i = 0; i < m->js.n_slots; i++) {
        const fs_jobrt_t *j = &m->js.slots[i];
        int holds = j->state == FS_JOBRT_RUNNING || (j->state == FS_JOBRT_RECOVERING && j->r->holding);
        if (holds && fs_nidx_add(m, (uint32_t)i))
            return FS_ENOMEM;
    }
    return 0;
}

uint32_t fs_model_node_jobs(const fs_model_t *m, uint32_t node)
{
    if (node >= m->cluster.n_nodes)
        return 0;
    if (m->nodes.jobs)
        return (uint32_t)m->nodes.jobs[node].n;
    /* before the index exists no job is recovering: scan the running */
    uint32_t n = 0;
    for (size_t i = 0; i < m->js.n_slots; i++)
        if (m->js.slots[i].state == FS_JOBRT_RUNNING && on_node(&m->js.slots[i], node))
            n++;
    return n;
}

void fs_nidx_release(fs_model_t *m)
{
    if (m->nodes.jobs)
        for (uint32_t i = 0; i < m->cluster.n_nodes; i++)
            fs_free(m->nodes.jobs[i].v);
    fs_free(m->nodes.jobs);
    fs_free(m->nodes.scr);
}
